//! Reconnect storm: 1,000 supervised legacy SSE clients of one mock process, which is SIGKILLed
//! and restarted at once on the same port. Every client sees its stream end together, so this is
//! the worst case for synchronized reconnects. Attempts are counted on both sides:
//!
//! - server side: session-opening requests (`GET /sse`) in the new process's request log, with
//!   their arrival times;
//! - client side: each `reconnecting` event plus its scheduled delay is the moment the next
//!   attempt starts (this also counts attempts that would hit a dead port).

use std::time::{Duration, Instant};

use mcp_resilient::{ConnectionState, Supervisor, ToolRegistry, config::Heartbeat, state::Event};

use crate::{
    Mode,
    mock::{self, LIMIT, MockProcess, Res, now_us},
    stats::{Row, Samples},
};

const SECTION: &str = "5. reconnect storm (SSE, one restart, default backoff 500 ms)";
const WINDOW_US: u64 = 100_000;

struct Outcome {
    all_ready_ms: f64,
    peak_server: usize,
    peak_client: usize,
    attempts_server: usize,
    failed: usize,
    not_recovered: usize,
}

/// The most timestamps (µs) inside any window of `WINDOW_US` starting at one of them.
pub fn peak(times: Vec<u64>) -> usize {
    crate::support::peak(times, WINDOW_US)
}

/// Per client: attempt start times (µs) and when it became ready on a new generation.
pub async fn follow(server: &Supervisor, old: u64) -> (Vec<u64>, Option<Instant>, ConnectionState) {
    let mut events = server.events();
    let mut attempts = Vec::new();
    let deadline = tokio::time::Instant::now() + LIMIT * 2;
    let mut ready = None;
    while let Ok(Ok(event)) = tokio::time::timeout_at(deadline, events.recv()).await {
        match event {
            Event::State {
                status:
                    mcp_resilient::Status {
                        state: ConnectionState::Reconnecting { delay, .. },
                        ..
                    },
                ..
            } => {
                attempts.push(now_us() + delay.as_micros() as u64);
            }
            Event::State {
                status:
                    mcp_resilient::Status {
                        state: ConnectionState::Ready { generation, .. },
                        ..
                    },
                ..
            } if generation.get() > old => {
                ready = Some(Instant::now());
                break;
            }
            Event::State {
                status:
                    mcp_resilient::Status {
                        state: ConnectionState::Failed { .. },
                        ..
                    },
                ..
            } => break,
            _ => {}
        }
    }
    (attempts, ready, server.status().state)
}

async fn storm(clients: usize, jitter: f64) -> Res<Outcome> {
    let mut mock = MockProcess::try_start("sse").await?;
    let registry = ToolRegistry::new();
    let mut servers = Vec::with_capacity(clients);
    let reconnect = mcp_resilient::config::Reconnect::default().jitter(jitter);
    for i in 0..clients {
        let config = mock::remote(
            &format!("s{i}"),
            &mock,
            reconnect.clone(),
            Heartbeat::default(),
        );
        servers.push(Supervisor::spawn(config, &registry).map_err(|e| e.to_string())?);
    }
    let ready = futures::future::join_all(servers.iter().map(|s| s.wait_ready(LIMIT))).await;
    let old: Vec<u64> = ready
        .into_iter()
        .map(|r| r.map(u64::from))
        .collect::<Result<_, _>>()
        .map_err(|s| format!("not ready: {s}"))?;
    let followers = futures::future::join_all(servers.iter().zip(&old).map(|(s, g)| follow(s, *g)));
    let restart = async {
        // Let every follower subscribe before the fault.
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        mock.try_kill().await?;
        mock.try_restart().await
    };
    let (followed, listening) = tokio::join!(followers, restart);
    let listening = listening?;
    let requests = mock.try_requests().await?;
    let server_times: Vec<u64> = requests
        .iter()
        .filter(|r| crate::support::opens_session("sse", r))
        .filter_map(|r| r["at_us"].as_u64())
        .collect();
    let client_times: Vec<u64> = followed
        .iter()
        .flat_map(|(a, _, _)| a.iter().copied())
        .collect();
    let last_ready = followed.iter().filter_map(|(_, r, _)| *r).max();
    let failed = followed
        .iter()
        .filter(|(_, _, s)| matches!(s, ConnectionState::Failed { .. }))
        .count();
    let not_recovered = followed.iter().filter(|(_, r, _)| r.is_none()).count();
    let outcome = Outcome {
        all_ready_ms: match (not_recovered, last_ready) {
            (0, Some(t)) => mock::ms(t.saturating_duration_since(listening)),
            _ => f64::NAN,
        },
        attempts_server: server_times.len(),
        peak_server: peak(server_times),
        peak_client: peak(client_times),
        failed,
        not_recovered,
    };
    let _ = tokio::time::timeout(
        LIMIT * 2,
        futures::future::join_all(servers.iter().map(|s| s.shutdown())),
    )
    .await;
    mock.try_kill().await?;
    Ok(outcome)
}

pub async fn run(_mode: Mode, rows: &mut Vec<Row>) -> Res<()> {
    let clients = 1000;
    let mut peaks = Vec::new();
    // Off, then the default policy's jitter.
    for jitter in [
        0.0,
        mcp_resilient::config::Reconnect::default().get_jitter(),
    ] {
        let tag = format!("{clients} clients, jitter {jitter}");
        match storm(clients, jitter).await {
            Ok(o) => {
                let mut all = Samples::default();
                all.push(o.all_ready_ms);
                for _ in 0..o.not_recovered {
                    all.fail("client did not become ready on a new generation");
                }
                rows.push(
                    Row::new(SECTION, format!("{tag}: restart -> all ready"), "ms", all)
                        .target("none failed", o.failed == 0 && o.not_recovered == 0)
                        .note(format!(
                            "{} failed, {} not recovered, {} session opens at the server",
                            o.failed, o.not_recovered, o.attempts_server
                        )),
                );
                rows.push(Row::single(
                    SECTION,
                    format!("{tag}: peak attempts / 100 ms (server log)"),
                    "attempts",
                    o.peak_server as f64,
                ));
                rows.push(Row::single(
                    SECTION,
                    format!("{tag}: peak attempts / 100 ms (client events)"),
                    "attempts",
                    o.peak_client as f64,
                ));
                peaks.push(Some((o.peak_client as f64, o.peak_server as f64)));
            }
            Err(e) => {
                let mut s = Samples::default();
                s.fail(e);
                rows.push(Row::new(
                    SECTION,
                    format!("{tag}: restart -> all ready"),
                    "ms",
                    s,
                ));
                peaks.push(None);
            }
        }
    }
    if let [Some(off), Some(on)] = peaks[..] {
        // The offered attempt rate is the client-side count: the server log saturates at the
        // rate one mock process can accept on 2 cores, which hides the burst.
        let ratio = on.0 / off.0;
        rows.push(
            Row::single(
                SECTION,
                "peak with jitter / peak without (client events)",
                "ratio",
                ratio,
            )
            .target("<= 0.5", ratio <= 0.5),
        );
        rows.push(
            Row::single(
                SECTION,
                "peak with jitter / peak without (server log)",
                "ratio",
                on.1 / off.1,
            )
            .note("server-side accept rate, saturated by the burst"),
        );
    }
    Ok(())
}
