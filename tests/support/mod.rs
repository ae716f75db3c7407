//! What the integration tests of the library (`tests/it/`) and of the command line
//! (`cli/tests/`, through its `support` module) share, none of which needs a binary: the limit of
//! every wait, bounded waits for a supervisor's state and events, and fast policies. The
//! command line's tests add the mock server as a child process.
#![allow(dead_code, unreachable_pub)]

use std::time::{Duration, Instant};

use mcp_resilient::{
    ConnectionState, ServerConfig, StatusWatch, ToolRegistry,
    config::{Heartbeat, Reconnect, TransportConfig},
    state::{Event, Generation},
};
use serde_json::json;

/// The limit of every wait in the tests: generous, so a loaded 2-core CI machine passes; a hang
/// still fails the test instead of the whole run.
pub const LIMIT: Duration = Duration::from_secs(20);

/// Waits until the state satisfies `want`, at most `limit`; returns it and when it was seen.
pub async fn try_wait_state(
    rx: &mut StatusWatch,
    limit: Duration,
    mut want: impl FnMut(&ConnectionState) -> bool,
) -> Result<(ConnectionState, Instant), String> {
    let seen = tokio::time::timeout(limit, rx.wait_for(|status| want(&status.state))).await;
    match seen {
        Ok(Some(status)) => Ok((status.state, Instant::now())),
        Ok(None) => Err("stopped before the state was reached".into()),
        Err(_) => Err(format!(
            "state not reached within {limit:?}; last: {:?}",
            rx.status()
        )),
    }
}

/// Waits until the state satisfies `want`, at most [`LIMIT`].
pub async fn wait_state(
    rx: &mut StatusWatch,
    want: impl FnMut(&ConnectionState) -> bool,
) -> ConnectionState {
    match try_wait_state(rx, LIMIT, want).await {
        Ok((state, _)) => state,
        Err(why) => panic!("{why}"),
    }
}

pub fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("mcp_resilient=debug")),
        )
        .with_test_writer()
        .try_init();
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

/// Calls `mcp__authd__echo` (the OAuth tests' server) through the registry; the error as text.
pub async fn echo(registry: &ToolRegistry, text: &str) -> Result<(), String> {
    let handle = registry
        .handle("mcp__authd__echo")
        .map_err(|e| e.to_string())?;
    handle
        .call(json!({ "text": text }))
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}
