//! Shared helpers of the integration tests: the mock server as a real child process (from
//! `tests/support/`, which the benchmark shares), fast policies, and waits that always have a
//! deadline.
#![allow(dead_code, unreachable_pub)]

pub mod host;
pub mod raw;
#[path = "../../support/mod.rs"]
mod support;

// The soak and telemetry binaries include this module too and use only some of them.
#[allow(unused_imports)]
pub use support::{
    LIMIT, mock_binary, opens_session, peak, process, serve, starts_attempt, wait_state,
};

use std::{path::Path, time::Duration};

use mcp_resilient::{
    ConnectionState, ServerConfig, ToolRegistry,
    config::{Heartbeat, Reconnect, TransportConfig},
    state::{Event, Generation},
};
use serde_json::json;

pub fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("mcp_resilient=debug")),
        )
        .with_test_writer()
        .try_init();
}

/// A stdio server config for the mock server with millisecond policies.
pub fn stdio_mock(name: &str, extra: &[&str]) -> ServerConfig {
    let mut args = vec!["mock-server", "--transport", "stdio"];
    args.extend_from_slice(extra);
    fast(ServerConfig::stdio(name, mock_binary()).args(args))
}

/// A stdio server config that runs `script` with `sh -c` (to count or break spawns).
pub fn shell(name: &str, script: &str) -> ServerConfig {
    fast(ServerConfig::stdio(name, "sh").args(["-c", script]))
}

/// Millisecond policies: quick backoff, short graces, and a heartbeat that a loaded machine
/// cannot turn into a death.
///
/// The heartbeat probes after 2 s of silence and waits 1.5 s for each answer. It was 500 ms and
/// 200 ms: beside other builds a live server's answer could take longer than 200 ms, and two
/// such misses (or one, for the probe a call sends after a silence) ended a generation that
/// the test expected to keep. A dead server still fails its probe at once (refused, closed);
/// a test about hung servers or probe timing sets its own heartbeat.
pub fn fast(config: ServerConfig) -> ServerConfig {
    let mut config = config
        .reconnect(
            Reconnect::default()
                .initial_delay(Duration::from_millis(20))
                .max_delay(Duration::from_millis(200))
                .max_attempts(5),
        )
        .heartbeat(
            Heartbeat::default()
                .interval(Duration::from_secs(2))
                .timeout(Duration::from_millis(1500))
                .failures(2),
        )
        .call_timeout(Duration::from_secs(10))
        .connect_timeout(Duration::from_secs(10))
        .close_timeout(Duration::from_secs(10));
    if matches!(config.transport(), TransportConfig::Stdio(_)) {
        config = config
            .stdin_close_grace(Duration::from_millis(300))
            .term_grace(Duration::from_millis(300));
    }
    config
}

/// Pins a config to 2025-11-25: for tests of what only that era has (sessions that expire,
/// `ping`, the standalone GET stream). The mock server speaks both eras, so `auto` would pick
/// 2026-07-28.
pub fn era_2025(config: ServerConfig) -> ServerConfig {
    config.protocol(mcp_resilient::config::ProtocolChoice::V2025_11_25)
}

/// Waits for the next event that satisfies `want`, at most [`LIMIT`].
pub async fn wait_event(
    rx: &mut mcp_resilient::state::EventReceiver,
    mut want: impl FnMut(&Event) -> bool,
) -> Event {
    let found = tokio::time::timeout(LIMIT, async {
        loop {
            match rx.recv().await {
                Ok(event) if want(&event) => return event,
                Ok(_) => {}
                Err(mcp_resilient::state::RecvError::Lagged(n)) => panic!("lagged {n} events"),
                Err(mcp_resilient::state::RecvError::Closed) => panic!("event channel closed"),
            }
        }
    })
    .await;
    found.unwrap_or_else(|_| panic!("event not seen within {LIMIT:?}"))
}

/// Waits until `done` holds, looking every 10 ms, at most [`LIMIT`]; panics naming `what`.
/// For what can only be looked at (a counter, the server's log), not waited on.
pub async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + LIMIT;
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: not within {LIMIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Asserts that no probe miss is among the events `rx` has queued; `why` says what a miss
/// would have meant.
pub fn no_probe_missed(rx: &mut mcp_resilient::state::EventReceiver, why: &str) {
    while let Ok(Some(event)) = rx.try_recv() {
        assert!(
            !matches!(event, Event::ProbeMissed { .. }),
            "{why}: {event:?}"
        );
    }
}

/// The next `reconnecting` state: why the connection was lost (or failed), what ended it, and the
/// scheduled delay.
pub async fn lost(
    events: &mut mcp_resilient::state::EventReceiver,
) -> (
    mcp_resilient::state::Reason,
    mcp_resilient::state::Death,
    Duration,
) {
    let event = wait_event(events, |e| {
        matches!(e, Event::State { status, .. } if matches!(status.state, ConnectionState::Reconnecting { .. }))
    })
    .await;
    let Event::State { status, .. } = event else {
        unreachable!()
    };
    let ConnectionState::Reconnecting {
        reason,
        death,
        delay,
        ..
    } = status.state
    else {
        unreachable!()
    };
    (reason, death, delay)
}

/// The next `ready` state's generation.
pub async fn ready_generation(rx: &mut mcp_resilient::state::EventReceiver) -> Generation {
    match wait_event(
        rx,
        |e| matches!(e, Event::State { status, .. } if status.is_ready()),
    )
    .await
    {
        Event::State { status, .. } => status.ready().expect("a ready status"),
        _ => unreachable!(),
    }
}

/// `(boot_id, pid)` of the server process that answers now.
pub async fn whoami(registry: &ToolRegistry, server: &str) -> (String, u32) {
    let handle = registry
        .handle(&format!("mcp__{server}__whoami"))
        .expect("whoami registered");
    let result = handle.call(json!({})).await.expect("whoami call");
    let who = mcp_mock_server::Whoami::from_result(&result).expect("a whoami result");
    (who.boot_id, who.pid)
}

/// Calls a tool by its raw name and expects success.
pub async fn call(
    registry: &ToolRegistry,
    server: &str,
    tool: &str,
    args: serde_json::Value,
) -> rmcp::model::CallToolResult {
    registry
        .handle(&format!("mcp__{server}__{tool}"))
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
        .call(args)
        .await
        .unwrap_or_else(|e| panic!("{tool} call: {e}"))
}

/// True while a process with this pid exists and is not a zombie.
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Number of lines in a file (0 if it does not exist).
pub fn line_count(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|s| s.lines().count())
        .unwrap_or(0)
}
