//! Detection and recovery: one supervisor per scenario, `reps` faults in a row. Each repetition
//! checks that the state really left `ready`, that the server really came back as a new
//! generation (and, after a kill, as a new process: the `whoami` boot id changed), and waits for
//! the stability window so the next fault starts from a full budget and the initial delay.
//!
//! Sections 2 and 3 run at protocol 2025-11-25 (sessions, `ping`); the era section runs the
//! scenarios that mean something without sessions at 2026-07-28 through [`run_scenarios`]. Every
//! repetition checks the negotiated version and the methods the mock received (a 2026 client
//! never sends `ping` or `initialize`; a 2025 one never `server/discover`).

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use mcp_resilient::{
    ConnectionState, Supervisor, ToolRegistry,
    config::{Heartbeat, ProtocolChoice},
    state::Event,
};
use serde_json::json;

use crate::{
    Mode,
    mock::{self, LIMIT, MockProcess, Res, ms, now_us, try_wait_state},
    stats::{Row, Samples},
    support::opens_session,
};

const DETECT: &str = "2. detection latency (fault -> state leaves ready)";
const RECOVER: &str = "3. recovery (restart -> first successful call on a new generation)";

/// Backoff of every scenario: 200 ms, jitter 0 (the mock restarts well within it).
const INITIAL: Duration = Duration::from_millis(200);
const STABILITY: Duration = Duration::from_millis(100);
/// Heartbeat of the scenarios that rely on it.
pub fn fast_hb() -> Heartbeat {
    Heartbeat::default()
        .interval(Duration::from_millis(200))
        .timeout(Duration::from_millis(50))
        .failures(2)
}
/// Heartbeat of the scenarios that must be detected by something else.
pub fn slow_hb() -> Heartbeat {
    Heartbeat::default()
        .interval(Duration::from_secs(30))
        .timeout(Duration::from_secs(10))
        .failures(2)
}

/// Which protocol era a run of scenarios speaks, and the sections its rows go to.
pub struct Era {
    pub protocol: ProtocolChoice,
    pub detect: &'static str,
    pub recover: &'static str,
}

impl Era {
    fn modern(&self) -> bool {
        self.protocol == ProtocolChoice::V2026_07_28
    }

    /// The version every generation on `transport` must negotiate.
    fn version(&self, transport: &str) -> &'static str {
        match transport {
            "sse" => "2024-11-05",
            _ if self.modern() => "2026-07-28",
            _ => "2025-11-25",
        }
    }
}

/// Sections 2 and 3.
const ERA_2025: Era = Era {
    protocol: mock::PINNED,
    detect: DETECT,
    recover: RECOVER,
};

#[derive(Clone, Copy, PartialEq)]
pub enum Fault {
    /// SIGKILL (stdio: the child from `whoami`; remote: the mock process); restart at once.
    Kill,
    /// HTTP: SIGKILL, then one call; measured from the call.
    KillNextCall,
    /// Hang (`/_mock/hang`, stdio: the `hang` tool); heartbeat; then unhang (remote).
    Hang,
    /// `/_mock/expire-sessions`, then one call; measured from the call.
    Expire,
}

pub struct Scenario {
    pub name: &'static str,
    pub transport: &'static str,
    pub fault: Fault,
    pub heartbeat: Heartbeat,
    /// (target words, bound in ms) for the detection median.
    pub target: Option<(&'static str, f64)>,
}

#[derive(Default)]
struct Figures {
    detect: Samples,
    causes: BTreeMap<String, usize>,
    scheduled: Samples,
    backoff_measured: Samples,
    handshake: Samples,
    first_call: Samples,
    server_down: Samples,
    client_down: Samples,
    excess: Samples,
    excess_over_schedule: Samples,
    /// Whoami/state method checks passed (see [`mock::check_era`]).
    era_checks: usize,
    /// `server/discover` requests the last mock process received (remote only).
    discovers: Option<u64>,
}

struct Rep {
    detect: Duration,
    cause: String,
    scheduled: Duration,
    backoff_measured: Option<f64>,
    handshake: f64,
    first_call: Duration,
    /// (server downtime, client downtime, excess) for a remote kill.
    downtime: Option<(Duration, Duration, Duration)>,
}

/// The bound of a hang's detection: interval + failures x timeout + 20 ms, and its words.
pub fn hang_target() -> (&'static str, f64) {
    let bound = ms({
        let hb = fast_hb();
        hb.get_interval() + hb.get_timeout() * hb.get_failures()
    }) + 20.0;
    ("< interval + failures x timeout + 20 ms (320 ms)", bound)
}

fn scenarios() -> Vec<Scenario> {
    let (hang_words, hang_bound) = hang_target();
    vec![
        Scenario {
            name: "child killed (exit/EOF)",
            transport: "stdio",
            fault: Fault::Kill,
            heartbeat: slow_hb(),
            target: Some(("< 10 ms", 10.0)),
        },
        Scenario {
            name: "process killed (stream end)",
            transport: "sse",
            fault: Fault::Kill,
            heartbeat: slow_hb(),
            target: Some(("< 10 ms", 10.0)),
        },
        Scenario {
            name: "process killed, next call",
            transport: "http",
            fault: Fault::KillNextCall,
            heartbeat: slow_hb(),
            target: Some(("< 10 ms from the call", 10.0)),
        },
        Scenario {
            name: "process killed, idle heartbeat 200 ms",
            transport: "http",
            fault: Fault::Kill,
            heartbeat: fast_hb(),
            target: Some(("<= interval + 20 ms (220 ms)", 220.0)),
        },
        Scenario {
            name: "hung (heartbeat 200/50 ms x2)",
            transport: "stdio",
            fault: Fault::Hang,
            heartbeat: fast_hb(),
            target: Some((hang_words, hang_bound)),
        },
        Scenario {
            name: "hung (heartbeat 200/50 ms x2)",
            transport: "sse",
            fault: Fault::Hang,
            heartbeat: fast_hb(),
            target: Some((hang_words, hang_bound)),
        },
        Scenario {
            name: "hung (heartbeat 200/50 ms x2)",
            transport: "http",
            fault: Fault::Hang,
            heartbeat: fast_hb(),
            target: Some((hang_words, hang_bound)),
        },
        Scenario {
            name: "session expired (404), next call",
            transport: "sse",
            fault: Fault::Expire,
            heartbeat: slow_hb(),
            target: None,
        },
        Scenario {
            name: "session expired (404), next call",
            transport: "http",
            fault: Fault::Expire,
            heartbeat: slow_hb(),
            target: None,
        },
    ]
}

pub async fn run(mode: Mode, rows: &mut Vec<Row>) -> Res<()> {
    run_scenarios(&ERA_2025, &scenarios(), mode, rows).await;
    Ok(())
}

/// Runs `scenarios` in `era`, one supervisor each, and pushes their rows.
pub async fn run_scenarios(era: &Era, scenarios: &[Scenario], mode: Mode, rows: &mut Vec<Row>) {
    let reps = if mode.quick { 6 } else { 25 };
    for sc in scenarios {
        let figures = scenario(era, sc, reps).await;
        push_rows(era, sc, figures, rows);
    }
}

async fn scenario(era: &Era, sc: &Scenario, reps: usize) -> Figures {
    let mut f = Figures::default();
    let mut mock = None;
    if sc.transport != "stdio" {
        match MockProcess::try_start(sc.transport).await {
            Ok(m) => mock = Some(m),
            Err(e) => {
                f.detect.fail(format!("mock: {e}"));
                return f;
            }
        }
    }
    let reconnect = mock::backoff(INITIAL, 0.0).stability_window(STABILITY);
    let config = match &mock {
        None => mock::stdio("fault", reconnect, sc.heartbeat.clone()),
        Some(m) => mock::remote("fault", m, reconnect, sc.heartbeat.clone()),
    }
    .protocol(era.protocol);
    let registry = ToolRegistry::new();
    let server = match Supervisor::spawn(config, &registry) {
        Ok(s) => s,
        Err(e) => {
            f.detect.fail(e.to_string());
            return f;
        }
    };
    if let Err(s) = server.wait_ready(LIMIT).await {
        f.detect.fail(format!("not ready: {s}"));
    }
    for _ in 0..reps {
        match rep(era, sc, &server, &registry, mock.as_mut()).await {
            Ok(r) => {
                record(&mut f, r);
                f.era_checks += 2;
            }
            Err(e) => {
                f.detect.fail(e);
                // Get back to a ready server before the next repetition, bounded.
                if let Some(m) = mock.as_mut() {
                    let _ = m.try_admin("unhang", json!({})).await;
                    if m.pid().is_none() {
                        let _ = m.try_restart().await;
                    }
                }
                if server.wait_ready(LIMIT).await.is_err() {
                    server.restart().await;
                    let _ = server.wait_ready(LIMIT).await;
                }
            }
        }
    }
    server.shutdown().await;
    if let Some(mut m) = mock {
        // The whole life of the last process, heartbeat probes during a hang included.
        match m.try_methods().await {
            Ok(methods) => match mock::check_era(&methods, era.modern()) {
                Ok(()) => {
                    f.era_checks += 1;
                    f.discovers = Some(methods.get("server/discover").copied().unwrap_or(0));
                }
                Err(e) => f.detect.fail(e),
            },
            Err(e) => f.detect.fail(e),
        }
        let _ = m.try_kill().await;
    }
    f
}

fn record(f: &mut Figures, r: Rep) {
    f.detect.push_ms(r.detect);
    *f.causes.entry(r.cause).or_default() += 1;
    f.scheduled.push_ms(r.scheduled);
    if let Some(b) = r.backoff_measured {
        f.backoff_measured.push(b);
    }
    f.handshake.push(r.handshake);
    f.first_call.push_ms(r.first_call);
    if let Some((server, client, excess)) = r.downtime {
        f.server_down.push_ms(server);
        f.client_down.push_ms(client);
        f.excess.push_ms(excess);
        f.excess_over_schedule.push(ms(excess) - ms(r.scheduled));
    }
}

/// Timestamps every event of one outage until the new generation is stable.
async fn collect(
    mut events: mcp_resilient::state::EventReceiver,
    old: u64,
) -> Vec<(Instant, Event)> {
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + LIMIT * 2;
    while let Ok(Ok(event)) = tokio::time::timeout_at(deadline, events.recv()).await {
        let done = matches!(&event, Event::Stable { generation, .. } if generation.get() > old);
        seen.push((Instant::now(), event));
        if done {
            break;
        }
    }
    seen
}

/// Checks the negotiated version and the methods of the process that answers now.
async fn check_era(
    era: &Era,
    sc: &Scenario,
    server: &Supervisor,
    registry: &ToolRegistry,
) -> Res<mcp_mock_server::Whoami> {
    let version = era.version(sc.transport);
    let negotiated = server.status().protocol().map(str::to_owned);
    if negotiated.as_deref() != Some(version) {
        return Err(format!("negotiated {negotiated:?}, wanted {version}"));
    }
    let who = mock::who(registry, "fault").await?;
    mock::check_era(&who.methods, era.modern())?;
    Ok(who)
}

async fn rep(
    era: &Era,
    sc: &Scenario,
    server: &Supervisor,
    registry: &ToolRegistry,
    mut mock: Option<&mut MockProcess>,
) -> Res<Rep> {
    let old = server
        .status()
        .ready()
        .map(u64::from)
        .ok_or("not ready before the fault")?;
    let who = check_era(era, sc, server, registry).await?;
    let (boot1, pid1) = (who.boot_id, who.pid);
    let mut rx = server.watch();
    let collector = tokio::spawn(collect(server.events(), old));
    // The detector waits from before the fault, so a death seen while the bench is still busy
    // (reaping a killed mock) is timed when it happens, not when the bench looks.
    let (armed_tx, armed) = tokio::sync::oneshot::channel();
    let mut detect_rx = server.watch();
    let detector = tokio::spawn(async move {
        let _ = armed_tx.send(());
        try_wait_state(&mut detect_rx, LIMIT, |s| !s.is_ready()).await
    });
    armed.await.map_err(|_| "detector did not start")?;
    let mut pending_call = None;
    // The fault, and the moment it counts from.
    let t0 = match (sc.fault, mock.as_deref_mut()) {
        (Fault::Kill, None) => {
            let pid = nix::unistd::Pid::from_raw(pid1 as i32);
            nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL)
                .map_err(|e| e.to_string())?;
            Instant::now()
        }
        (Fault::Kill, Some(m)) => m.try_kill().await?,
        (Fault::KillNextCall, Some(m)) => {
            m.try_kill().await?;
            let t = Instant::now();
            pending_call = Some(spawn_echo(registry));
            t
        }
        (Fault::Hang, None) => {
            let handle = registry
                .handle("mcp__fault__hang")
                .map_err(|e| e.to_string())?;
            pending_call = Some(tokio::spawn(async move {
                handle
                    .call(json!({}))
                    .await
                    .map(drop)
                    .map_err(|e| e.to_string())
            }));
            Instant::now()
        }
        (Fault::Hang, Some(m)) => {
            m.try_admin("hang", json!({})).await?;
            Instant::now()
        }
        (Fault::Expire, Some(m)) => {
            m.try_admin("expire-sessions", json!({})).await?;
            let t = Instant::now();
            pending_call = Some(spawn_echo(registry));
            t
        }
        _ => return Err("unsupported scenario".into()),
    };
    let (state, t_detect) = detector.await.map_err(|e| e.to_string())??;
    let detect_us = now_us() - t_detect.elapsed().as_micros() as u64;
    let cause = match &state {
        ConnectionState::Reconnecting { death, .. } => death.cause.to_string(),
        other => return Err(format!("left ready for {other}, not reconnecting")),
    };
    // Back up: a killed remote server restarts at once, a hung one is released.
    let t_listen = match (sc.fault, mock.as_deref_mut()) {
        (Fault::Kill | Fault::KillNextCall, Some(m)) => Some(m.try_restart().await?),
        (Fault::Hang, Some(m)) => {
            m.try_admin("unhang", json!({})).await?;
            None
        }
        _ => None,
    };
    let (_, t_ready) = try_wait_state(
        &mut rx,
        LIMIT,
        |s| matches!(s, ConnectionState::Ready { generation, .. } if generation.get() > old),
    )
    .await?;
    let ready_us = now_us();
    mock::echo(registry, "fault", "back").await?;
    let t_ok = Instant::now();
    if let Some(call) = pending_call {
        let outcome = tokio::time::timeout(LIMIT, call)
            .await
            .map_err(|_| "the faulted call never ended")?;
        // A call the server provably did not run (refused connection, unknown session) is sent
        // once more to the next generation and succeeds; one that may have run (in flight at a
        // hang) must fail rather than be replayed.
        let resent = matches!(sc.fault, Fault::Expire | Fault::KillNextCall);
        if matches!(outcome, Ok(Ok(()))) && !resent {
            return Err(
                "the call in flight at the fault succeeded (it may have been replayed)".into(),
            );
        }
    }
    let new = server
        .status()
        .ready()
        .map(u64::from)
        .ok_or("not ready after recovery")?;
    if new <= old {
        return Err(format!("generation did not increase ({old} -> {new})"));
    }
    let boot2 = check_era(era, sc, server, registry).await?.boot_id;
    let new_process = matches!(sc.fault, Fault::Kill | Fault::KillNextCall)
        || (sc.fault == Fault::Hang && mock.is_none());
    if new_process == (boot1 == boot2) {
        return Err(format!(
            "boot id {boot1} -> {boot2}, new process expected: {new_process}"
        ));
    }
    let events = tokio::time::timeout(LIMIT * 3, collector)
        .await
        .map_err(|_| "collector hung")?
        .map_err(|e| e.to_string())?;
    if !events
        .iter()
        .any(|(_, e)| matches!(e, Event::Stable { generation, .. } if generation.get() == new))
    {
        return Err("new generation never became stable".into());
    }
    // The scheduled backoff of this outage, and when its last delay ended.
    let delays: Vec<(Instant, Duration)> = events
        .iter()
        .filter_map(|(t, e)| match e {
            Event::State {
                status:
                    mcp_resilient::Status {
                        state: ConnectionState::Reconnecting { delay, .. },
                        ..
                    },
                ..
            } => Some((*t, *delay)),
            _ => None,
        })
        .collect();
    let scheduled: Duration = delays.iter().map(|(_, d)| *d).sum();
    let backoff_end = delays.last().map(|(t, d)| *t + *d).unwrap_or(t_detect);
    // Remote: when the first connection attempt reached the new server (its request log).
    let first_attempt_us = match mock.as_deref() {
        Some(m) if t_listen.is_some() => first_attempt(m, era.modern()).await?,
        _ => None,
    };
    let (backoff_measured, handshake) = match first_attempt_us {
        Some(at) => (
            Some((at as f64 - detect_us as f64) / 1e3),
            (ready_us as f64 - at as f64) / 1e3,
        ),
        None => (None, ms(t_ready.saturating_duration_since(backoff_end))),
    };
    let downtime = t_listen.map(|listen| (listen - t0, t_ok - t0, t_ok - listen));
    Ok(Rep {
        detect: t_detect - t0,
        cause,
        scheduled,
        backoff_measured,
        handshake,
        first_call: t_ok - t_ready,
        downtime,
    })
}

fn spawn_echo(registry: &ToolRegistry) -> tokio::task::JoinHandle<Result<(), String>> {
    let registry = registry.clone();
    tokio::spawn(async move { mock::echo(&registry, "fault", "into the fault").await })
}

/// The arrival (µs since the epoch) of the first session-opening request in the mock's log
/// (2026-07-28, which has no sessions: the first `server/discover`).
async fn first_attempt(m: &MockProcess, modern: bool) -> Res<Option<u64>> {
    let requests = m.try_requests().await?;
    Ok(requests
        .iter()
        .filter(|r| {
            if modern {
                r["method"] == "POST"
                    && r["rpc_methods"]
                        .as_array()
                        .is_some_and(|m| m.iter().any(|m| m == "server/discover"))
            } else {
                opens_session(m.kind, r)
            }
        })
        .filter_map(|r| r["at_us"].as_u64())
        .min())
}

fn push_rows(era: &Era, sc: &Scenario, f: Figures, rows: &mut Vec<Row>) {
    let causes: Vec<String> = f.causes.iter().map(|(c, n)| format!("{c} x{n}")).collect();
    let name = format!("{} {}", sc.transport, sc.name);
    let mut note = format!(
        "cause: {}; {} negotiated, methods checked {}x",
        causes.join(", "),
        era.version(sc.transport),
        f.era_checks
    );
    if era.modern() {
        note.push_str(" (no ping, no initialize)");
        if let Some(n) = f.discovers {
            note.push_str(&format!("; last mock process got {n} server/discover"));
        }
    }
    let mut row = Row::new(era.detect, name.clone(), "ms", f.detect.clone()).note(note);
    if let Some((words, bound)) = sc.target {
        let met = f.detect.median() < bound;
        row = row.target(words, met);
    }
    rows.push(row);
    let recovered =
        matches!(sc.fault, Fault::Kill | Fault::KillNextCall) || (sc.transport == "stdio");
    if !recovered || f.detect.values.is_empty() {
        return;
    }
    let remote = sc.transport != "stdio";
    rows.push(Row::new(
        era.recover,
        format!("{name}: scheduled backoff"),
        "ms",
        f.scheduled,
    ));
    if remote {
        rows.push(Row::new(
            era.recover,
            format!("{name}: backoff wait (detect -> first request at server)"),
            "ms",
            f.backoff_measured,
        ));
        rows.push(Row::new(
            era.recover,
            format!("{name}: handshake (first request -> ready)"),
            "ms",
            f.handshake,
        ));
    } else {
        rows.push(Row::new(
            era.recover,
            format!("{name}: spawn + handshake (backoff end -> ready)"),
            "ms",
            f.handshake,
        ));
    }
    rows.push(Row::new(
        era.recover,
        format!("{name}: first call (ready -> ok)"),
        "ms",
        f.first_call,
    ));
    if remote {
        rows.push(Row::new(
            era.recover,
            format!("{name}: server downtime (kill -> listening)"),
            "ms",
            f.server_down,
        ));
        rows.push(Row::new(
            era.recover,
            format!("{name}: client downtime (kill -> first ok call)"),
            "ms",
            f.client_down,
        ));
        rows.push(Row::new(
            era.recover,
            format!("{name}: excess downtime (client - server)"),
            "ms",
            f.excess,
        ));
        let met = f.excess_over_schedule.median() <= 10.0;
        rows.push(
            Row::new(
                era.recover,
                format!("{name}: excess - scheduled backoff"),
                "ms",
                f.excess_over_schedule,
            )
            .target("<= 10 ms", met),
        );
    }
}
