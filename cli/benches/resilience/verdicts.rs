//! Section 6, the fault model: how fast a black-holed path heals, what a flaky gateway costs,
//! how fast a permanent refusal is reported, how long a wedged child takes to be replaced, and
//! whether a busy server survives.
//!
//! Every config is pinned to protocol 2025-11-25 (legacy SSE: 2024-11-05), like sections 1-5:
//! the gateway faults hit `ping`, and "2026-only at connect" is a 2025 client meeting a server
//! that refuses `initialize` (under `auto` it would connect at 2026-07-28).

use std::time::Duration;

use mcp_mock_server::{
    MockOptions, MockServer, MockTransport, StatusFault,
    proxy::{GatewayFault, HttpFaultProxy, ProxyMode, TcpProxy},
};
use mcp_resilient::{
    ConnectionState, ServerConfig, Supervisor, ToolRegistry,
    config::{Heartbeat, Reconnect},
};
use serde_json::json;
use tokio::time::Instant;

use super::{
    Mode,
    mock::{PINNED, Res},
    stats::{Row, Samples},
};

const SECTION: &str = "6. fault model";
const LIMIT: Duration = Duration::from_secs(30);
const MAX_DELAY: Duration = Duration::from_millis(500);

pub async fn run(mode: Mode, rows: &mut Vec<Row>) -> Res<()> {
    let reps = if mode.quick { 3 } else { 10 };
    for kind in ["sse", "http"] {
        let mut heal = Samples::default();
        for _ in 0..reps * 2 {
            match black_hole(kind).await {
                Ok(after) => heal.push_ms(after),
                Err(e) => heal.fail(e),
            }
        }
        let bound = (MAX_DELAY + Duration::from_secs(1)).as_secs_f64() * 1e3;
        let met = heal.failed == 0 && heal.quantile(1.0) <= bound;
        rows.push(
            Row::new(
                SECTION,
                format!("{kind} black hole 3–4 s, healed → ready"),
                "ms",
                heal,
            )
            .target(
                format!("<= max_delay + 1 s ({bound:.0} ms), every rep"),
                met,
            )
            .note("max_delay 500 ms; each attempt may wait 60 s for its handshake"),
        );
    }
    for (status, retry_after) in [(429, Some("1")), (503, None)] {
        let (failed, injected, new_generations) = gateway(status, retry_after).await?;
        let met =
            failed <= injected && new_generations == 0 && (retry_after.is_none() || failed == 0);
        rows.push(
            Row::single(
                SECTION,
                format!(
                    "gateway 1 in 25 POSTs {status}{}: failed calls of 200",
                    if retry_after.is_some() {
                        " + Retry-After 1"
                    } else {
                        ""
                    }
                ),
                "calls",
                failed as f64,
            )
            .target(
                if retry_after.is_some() {
                    "0, generation 1"
                } else {
                    "<= injected, generation 1"
                },
                met,
            )
            .note(format!(
                "{injected} injected, {new_generations} new generations"
            )),
        );
    }
    for (what, fault) in [
        ("401", Some(StatusFault::new(401))),
        ("403", Some(StatusFault::new(403))),
        ("2026-only", None),
    ] {
        let mut took = Samples::default();
        let mut causes = std::collections::BTreeMap::<String, usize>::new();
        for _ in 0..reps {
            match refused(fault.clone()).await {
                Ok((d, cause)) => {
                    took.push_ms(d);
                    *causes.entry(cause).or_default() += 1;
                }
                Err(e) => took.fail(e),
            }
        }
        let met = took.failed == 0 && took.quantile(1.0) < 1000.0;
        let causes: Vec<String> = causes.iter().map(|(c, n)| format!("{c} x{n}")).collect();
        let mut note = format!("cause: {}", causes.join(", "));
        if fault.is_none() {
            note.push_str("; client pinned to 2025-11-25");
        }
        rows.push(
            Row::new(SECTION, format!("{what} at connect → failed"), "ms", took)
                .target("< 1 s, every rep", met)
                .note(note),
        );
    }
    let mut busy = Samples::default();
    for _ in 0..reps {
        match blocked().await {
            Ok(true) => busy.push(1.0),
            Ok(false) => busy.push(0.0),
            Err(e) => busy.fail(e),
        }
    }
    let survived = busy.values.iter().all(|v| *v == 1.0) && busy.failed == 0;
    rows.push(
        Row::new(
            SECTION,
            "busy 1.5 s (heartbeat 200/100 ms ×2): survived",
            "1=yes",
            busy,
        )
        .target("every rep", survived),
    );
    Ok(())
}

/// Fails unless the ready generation negotiated what a pinned client on `kind` must.
fn check_version(supervisor: &Supervisor, kind: &str) -> Res<()> {
    let want = if kind == "sse" {
        "2024-11-05"
    } else {
        "2025-11-25"
    };
    let got = supervisor.status().protocol().map(str::to_owned);
    if got.as_deref() == Some(want) {
        Ok(())
    } else {
        Err(format!("negotiated {got:?}, wanted {want}"))
    }
}

fn fast_remote(config: ServerConfig) -> ServerConfig {
    config
        .protocol(PINNED)
        .heartbeat(
            Heartbeat::default()
                .interval(Duration::from_millis(300))
                .timeout(Duration::from_millis(150))
                .failures(2),
        )
        .reconnect(
            Reconnect::default()
                .initial_delay(Duration::from_millis(50))
                .max_delay(MAX_DELAY)
                .max_attempts(1000),
        )
        .connect_timeout(Duration::from_secs(60))
}

async fn mock(transport: MockTransport) -> Res<MockServer> {
    MockServer::start(MockOptions {
        transport,
        ..MockOptions::default()
    })
    .await
    .map_err(|e| e.to_string())
}

/// Black-holes the path for 3 s; returns the time from the heal to `ready`.
async fn black_hole(kind: &str) -> Res<Duration> {
    let server = mock(MockTransport::Both).await?;
    let proxy = TcpProxy::start(server.addr())
        .await
        .map_err(|e| e.to_string())?;
    let config = match kind {
        "sse" => ServerConfig::sse("hole", proxy.url("/sse")),
        _ => ServerConfig::http("hole", proxy.url("/mcp")),
    };
    let supervisor =
        Supervisor::spawn(fast_remote(config), &ToolRegistry::new()).map_err(|e| e.to_string())?;
    supervisor
        .wait_ready(LIMIT)
        .await
        .map_err(|s| s.to_string())?;
    check_version(&supervisor, kind)?;
    let mut state = supervisor.watch();
    proxy.set_mode(ProxyMode::BlackHole);
    tokio::time::timeout(LIMIT, state.wait_for(|s| !s.is_ready()))
        .await
        .map_err(|_| "the black hole was not detected")?
        .ok_or("stopped")?;
    // 3 s plus a random part of a hedge interval, so the heal lands anywhere between two
    // hedges (a fixed hole would always heal at the same point of the cycle).
    let extra = Duration::from_millis(rand::random_range(0..1000));
    tokio::time::sleep(Duration::from_secs(3) + extra).await;
    proxy.set_mode(ProxyMode::Pass);
    let healed = Instant::now();
    tokio::time::timeout(LIMIT, state.wait_for(|s| s.is_ready()))
        .await
        .map_err(|_| "not ready after the heal")?
        .ok_or("stopped")?;
    let after = healed.elapsed();
    supervisor.shutdown().await;
    proxy.shutdown().await;
    server.shutdown().await;
    Ok(after)
}

/// 200 calls, 10 ms apart, behind a gateway answering 1 in 25 `tools/call`/`ping` POSTs with
/// `status`; returns (failed calls, injected answers, new generations).
async fn gateway(status: u16, retry_after: Option<&str>) -> Res<(u64, u64, u64)> {
    let server = mock(MockTransport::Http).await?;
    let fault = GatewayFault {
        retry_after: retry_after.map(str::to_owned),
        methods: vec!["tools/call".into(), "ping".into()],
        ..GatewayFault::new(status, 25)
    };
    let proxy = HttpFaultProxy::start(&format!("http://{}", server.addr()), Some(fault))
        .await
        .map_err(|e| e.to_string())?;
    let registry = ToolRegistry::new();
    let supervisor = Supervisor::spawn(
        ServerConfig::http("gw", proxy.url("/mcp")).protocol(PINNED),
        &registry,
    )
    .map_err(|e| e.to_string())?;
    let first = supervisor
        .wait_ready(LIMIT)
        .await
        .map_err(|s| s.to_string())?;
    check_version(&supervisor, "http")?;
    let echo = registry
        .handle("mcp__gw__echo")
        .map_err(|e| e.to_string())?;
    let mut failed = 0;
    for i in 0..200 {
        if echo.call(json!({ "text": format!("{i}") })).await.is_err() {
            failed += 1;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let now = supervisor
        .status()
        .ready()
        .map(u64::from)
        .unwrap_or(u64::MAX);
    let injected = proxy.injected();
    supervisor.shutdown().await;
    proxy.shutdown().await;
    server.shutdown().await;
    Ok((failed, injected, now.saturating_sub(first.get())))
}

/// Time from `start` to `failed` against a server refusing us (`None`: a 2026-only server), and
/// the cause of the failure.
async fn refused(fault: Option<StatusFault>) -> Res<(Duration, String)> {
    let server = mock(MockTransport::Http).await?;
    match fault {
        Some(fault) => server
            .faults()
            .set_status_fault(Some(fault))
            .map_err(|e| e.to_string())?,
        None => server.faults().set_modern_only(true),
    }
    let started = Instant::now();
    let supervisor = Supervisor::spawn(
        ServerConfig::http("no", server.http_url()).protocol(PINNED),
        &ToolRegistry::new(),
    )
    .map_err(|e| e.to_string())?;
    let mut state = supervisor.watch();
    let cause = tokio::time::timeout(
        LIMIT,
        state.wait_for(|s| matches!(s.state, ConnectionState::Failed { .. })),
    )
    .await
    .map_err(|_| "not failed in time")?
    .map(|s| match s.state {
        ConnectionState::Failed { death, .. } => death.cause.to_string(),
        _ => String::new(),
    })
    .ok_or("stopped")?;
    let took = started.elapsed();
    supervisor.shutdown().await;
    server.shutdown().await;
    Ok((took, cause))
}

/// A 1.5 s `block` under a 200/100 ms × 2 heartbeat: true when the generation survived.
async fn blocked() -> Res<bool> {
    let server = mock(MockTransport::Http).await?;
    let registry = ToolRegistry::new();
    let config = ServerConfig::http("busy", server.http_url())
        .protocol(PINNED)
        .heartbeat(
            Heartbeat::default()
                .interval(Duration::from_millis(200))
                .timeout(Duration::from_millis(100))
                .failures(2),
        );
    let supervisor = Supervisor::spawn(config, &registry).map_err(|e| e.to_string())?;
    let first = supervisor
        .wait_ready(LIMIT)
        .await
        .map_err(|s| s.to_string())?;
    check_version(&supervisor, "http")?;
    let block = registry
        .handle("mcp__busy__block")
        .map_err(|e| e.to_string())?;
    let done = block.call(json!({"ms": 1500})).await.is_ok();
    let survived = done && supervisor.status().ready().map(u64::from) == Some(first.get());
    supervisor.shutdown().await;
    server.shutdown().await;
    Ok(survived)
}
