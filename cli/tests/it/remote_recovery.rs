//! Remote servers as separate processes, SIGKILLed and restarted on the same port: recovery,
//! hang detection, session expiry, in-flight calls, list_changed, and one registry for all.

use std::time::Duration;

use crate::common::{process::MockProcess, *};
use mcp_resilient::{
    CallError, ConnectionState, ServerConfig, Supervisor, ToolRegistry,
    config::{Heartbeat, Reconnect},
    state::{Cause, Event, Reason},
};
use serde_json::json;
use tokio::time::Instant;

fn heartbeat() -> Heartbeat {
    Heartbeat::default()
        .interval(Duration::from_millis(400))
        // Generous against a loaded CI machine: a spurious miss would start an unexpected
        // recovery.
        .timeout(Duration::from_millis(200))
        .failures(2)
}

fn remote(name: &str, mock: &MockProcess) -> ServerConfig {
    let config = match mock.kind {
        "sse" => ServerConfig::sse(name, mock.url()),
        _ => ServerConfig::http(name, mock.url()),
    };
    fast(config).heartbeat(heartbeat()).reconnect(
        Reconnect::default()
            .initial_delay(Duration::from_millis(20))
            .max_delay(Duration::from_millis(200))
            .max_attempts(100),
    )
}

async fn killed_server_recovers(kind: &'static str) {
    init_tracing();
    let mut mock = MockProcess::start(kind).await;
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(remote("far", &mock), &registry).unwrap();
    let first = server.wait_ready(LIMIT).await.expect("ready");
    let (boot1, _) = whoami(&registry, "far").await;
    let echo = registry.handle("mcp__far__echo").unwrap();
    let mut events = server.events();

    mock.kill().await;
    let (reason, death, _) = lost(&mut events).await;
    assert_eq!(reason, Reason::ConnectionLost);
    match kind {
        // The SSE stream ends with the process: seen at once, not by the heartbeat.
        "sse" => assert_eq!(death.cause, Cause::StreamClosed, "{death:?}"),
        // A 2026-07-28 generation's listen stream ends with the process (`stream_closed`); a
        // 2025 HTTP session never ends by itself, and the heartbeat's probe finds the port closed.
        _ => assert!(
            matches!(
                death.cause,
                Cause::StreamClosed | Cause::TransportError | Cause::HeartbeatTimeout
            ),
            "{death:?}"
        ),
    }
    mock.restart().await;
    let second = ready_generation(&mut events).await;
    assert!(second > first);
    let (boot2, _) = whoami(&registry, "far").await;
    assert_ne!(boot1, boot2, "the restarted process answers");
    assert_eq!(
        registry.snapshot().server("far").unwrap().generation,
        second,
        "tools re-listed by the new generation"
    );
    echo.call(json!({"text": "back"}))
        .await
        .expect("the old handle works");
    server.shutdown().await;
    mock.kill().await;
}

#[tokio::test]
async fn sse_server_killed_and_restarted_on_the_same_port_recovers() {
    killed_server_recovers("sse").await;
}

#[tokio::test]
async fn http_server_killed_and_restarted_on_the_same_port_recovers() {
    killed_server_recovers("http").await;
}

async fn hang_is_detected_by_the_heartbeat(kind: &'static str) {
    init_tracing();
    let mut mock = MockProcess::start(kind).await;
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(remote("stuck", &mock), &registry).unwrap();
    let first = server.wait_ready(LIMIT).await.expect("ready");
    let mut events = server.events();
    let hung_at = Instant::now();
    mock.admin("hang", json!({})).await;
    let mut misses = 0;
    let death = loop {
        match wait_event(&mut events, |e| {
            matches!(
                e,
                Event::ProbeMissed { .. }
                    | Event::State {
                        status: mcp_resilient::Status { .. },
                        ..
                    }
            )
        })
        .await
        {
            Event::ProbeMissed {
                misses: m,
                generation,
                ..
            } => {
                assert_eq!(generation, first);
                misses = m;
            }
            Event::State {
                status:
                    mcp_resilient::Status {
                        state: ConnectionState::Reconnecting { death, .. },
                        ..
                    },
                ..
            } => break death,
            other => panic!("unexpected {other:?}"),
        }
    };
    let detected = hung_at.elapsed();
    assert_eq!(death.cause, Cause::HeartbeatTimeout, "{death:?}");
    assert_eq!(
        misses,
        heartbeat().get_failures(),
        "death after exactly `failures` consecutive misses"
    );
    // The protocol bound, with generous slack for a loaded 2-core machine; the benchmark
    // measures the real figure.
    let bound = {
        let hb = heartbeat();
        hb.get_interval() + hb.get_timeout() * hb.get_failures() + Duration::from_secs(2)
    };
    assert!(
        detected <= bound,
        "detected after {detected:?}, bound {bound:?}"
    );
    mock.restart().await;
    let second = ready_generation(&mut events).await;
    assert!(second > first);
    call(&registry, "stuck", "echo", json!({"text": "unstuck"})).await;
    server.shutdown().await;
    mock.kill().await;
}

#[tokio::test]
async fn sse_hang_is_detected_by_the_heartbeat() {
    hang_is_detected_by_the_heartbeat("sse").await;
}

#[tokio::test]
async fn http_hang_is_detected_by_the_heartbeat() {
    hang_is_detected_by_the_heartbeat("http").await;
}

async fn expired_session_is_rebuilt_without_backoff(stale_400: bool) {
    init_tracing();
    let mut mock = MockProcess::start("http").await;
    let registry = ToolRegistry::new();
    // A 30 s backoff: only an immediate rebuild can pass within the test's limit. Sessions are
    // a 2025-era thing.
    let config = era_2025(remote("expiring", &mock)).reconnect(
        Reconnect::default()
            .initial_delay(Duration::from_secs(30))
            .max_delay(Duration::from_secs(60)),
    );
    let server = Supervisor::spawn(config, &registry).unwrap();
    let first = server.wait_ready(LIMIT).await.expect("ready");
    let (boot1, _) = whoami(&registry, "expiring").await;
    let mut events = server.events();
    mock.admin("stale-400", json!({"on": stale_400})).await;
    mock.admin("expire-sessions", json!({})).await;
    // The server refused the call for an unknown session, so it did not run it: the call goes
    // once to the rebuilt session and succeeds.
    let outcome = registry
        .handle("mcp__expiring__echo")
        .unwrap()
        .call(json!({"text": "x"}))
        .await;
    assert!(outcome.is_ok(), "{outcome:?}");
    let (_, death, delay) = lost(&mut events).await;
    assert_eq!(death.cause, Cause::SessionExpired, "{death:?}");
    assert_eq!(delay, Duration::ZERO);
    let second = ready_generation(&mut events).await;
    assert!(second > first);
    let (boot2, _) = whoami(&registry, "expiring").await;
    assert_eq!(boot1, boot2, "same server process, new session");
    server.shutdown().await;
    mock.kill().await;
}

#[tokio::test]
async fn http_404_on_a_live_session_is_rebuilt_without_backoff() {
    expired_session_is_rebuilt_without_backoff(false).await;
}

#[tokio::test]
async fn http_400_for_a_stale_session_is_rebuilt_without_backoff() {
    expired_session_is_rebuilt_without_backoff(true).await;
}

async fn in_flight_call_fails_and_is_not_replayed(kind: &'static str) {
    init_tracing();
    let mut mock = MockProcess::start(kind).await;
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(remote("inflight", &mock), &registry).unwrap();
    server.wait_ready(LIMIT).await.expect("ready");
    let mut events = server.events();
    let posts = |requests: &serde_json::Value| {
        requests
            .as_array()
            .map(|r| r.iter().filter(|q| q["method"] == "POST").count())
            .unwrap_or(0)
    };
    let before = posts(&mock.admin_get("requests").await);
    let sleeper = registry.handle("mcp__inflight__sleep").unwrap();
    let call = tokio::spawn(async move { sleeper.call(json!({"ms": 10_000})).await });
    // Wait (bounded) until the server has received the call.
    tokio::time::timeout(LIMIT, async {
        while posts(&mock.admin_get("requests").await) <= before {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the call reached the server");
    mock.kill().await;
    let outcome = tokio::time::timeout(LIMIT, call)
        .await
        .expect("the call ended in time")
        .unwrap();
    assert!(
        matches!(outcome, Err(CallError::ConnectionLost { .. })),
        "{outcome:?}"
    );
    mock.restart().await;
    ready_generation(&mut events).await;
    let result = call_whoami_calls(&registry).await;
    assert_eq!(
        result, 1,
        "the new server served only this whoami: the sleep was not replayed"
    );
    server.shutdown().await;
    mock.kill().await;
}

async fn call_whoami_calls(registry: &ToolRegistry) -> u64 {
    let result = call(registry, "inflight", "whoami", json!({})).await;
    mcp_mock_server::Whoami::from_result(&result)
        .expect("a whoami result")
        .calls
}

#[tokio::test]
async fn sse_in_flight_call_fails_with_connection_lost_and_is_not_replayed() {
    in_flight_call_fails_and_is_not_replayed("sse").await;
}

#[tokio::test]
async fn http_in_flight_call_fails_with_connection_lost_and_is_not_replayed() {
    in_flight_call_fails_and_is_not_replayed("http").await;
}

async fn list_changed_resyncs(kind: &'static str) {
    init_tracing();
    let mut mock = MockProcess::start(kind).await;
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(remote("changing", &mock), &registry).unwrap();
    let generation = server.wait_ready(LIMIT).await.expect("ready");
    let mut events = server.events();
    mock.wait_streams(1).await;
    mock.admin("set-tools", json!({"add": ["fresh"], "remove": ["add"]}))
        .await;
    let change = wait_event(&mut events, |e| matches!(e, Event::Tools(_))).await;
    let Event::Tools(change) = change else {
        unreachable!()
    };
    assert_eq!(change.generation, generation);
    assert_eq!(
        (change.added.clone(), change.removed.clone()),
        (vec!["fresh".to_owned()], vec!["add".to_owned()])
    );
    assert!(registry.snapshot().get("mcp__changing__fresh").is_some());
    assert!(registry.snapshot().get("mcp__changing__add").is_none());
    server.shutdown().await;
    mock.kill().await;
}

#[tokio::test]
async fn sse_list_changed_resyncs_the_tools() {
    list_changed_resyncs("sse").await;
}

#[tokio::test]
async fn http_list_changed_resyncs_the_tools() {
    list_changed_resyncs("http").await;
}

#[tokio::test]
async fn stdio_sse_and_http_share_one_registry_and_a_reconnect_leaves_the_others_untouched() {
    init_tracing();
    let sse = MockProcess::start("sse").await;
    let mut http = MockProcess::start("http").await;
    let registry = ToolRegistry::new();
    let local = Supervisor::spawn(stdio_mock("local", &[]), &registry).unwrap();
    let legacy = Supervisor::spawn(remote("legacy", &sse), &registry).unwrap();
    let modern = Supervisor::spawn(remote("modern", &http), &registry).unwrap();
    for server in [&local, &legacy, &modern] {
        server.wait_ready(LIMIT).await.expect("ready");
    }
    let before = registry.snapshot();
    for name in ["local", "legacy", "modern"] {
        assert!(
            before.get(&format!("mcp__{name}__echo")).is_some(),
            "{name} published"
        );
    }
    let mut changes = registry.changes();
    let mut events = modern.events();
    http.restart().await;
    let generation = ready_generation(&mut events).await;
    let after = registry.snapshot();
    for name in ["local", "legacy"] {
        assert!(
            std::sync::Arc::ptr_eq(before.server(name).unwrap(), after.server(name).unwrap()),
            "{name} untouched"
        );
    }
    assert_eq!(after.server("modern").unwrap().generation, generation);
    while let Ok(Some(change)) = changes.try_recv() {
        assert_eq!(
            &*change.server, "modern",
            "only the reconnected server's tools changed"
        );
    }
    for server in [&local, &legacy, &modern] {
        call(&registry, server.name(), "echo", json!({"text": "ok"})).await;
        server.shutdown().await;
    }
    assert!(registry.snapshot().is_empty());
    drop(sse);
}
