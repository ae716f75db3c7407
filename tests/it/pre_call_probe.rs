//! The probe before a call that follows a silence longer than the heartbeat interval (gRPC's
//! keepalive rule): unanswered for its whole timeout, it ends the generation and the call, not
//! sent, goes to the next one; cut short by the call's own deadline, it is no miss and the call
//! ends `Timeout` in phase `Probe`, not run. Either way the status and the error agree.

use std::time::Duration;

use crate::common::*;
use mcp_mock_server::{MockOptions, MockServer, MockTransport};
use mcp_resilient::{
    CallError, ConnectionState, ServerConfig, Supervisor, ToolRegistry,
    call::{CallOptions, CallPhase},
    config::Heartbeat,
    state::{Cause, Generation},
};
use serde_json::json;

async fn mock() -> MockServer {
    MockServer::start(MockOptions {
        transport: MockTransport::Http,
        ..MockOptions::default()
    })
    .await
    .expect("mock server starts")
}

/// The requests of `method` the server has received.
fn received(mock: &MockServer, method: &str) -> usize {
    mock.faults()
        .requests()
        .iter()
        .filter(|r| r.rpc_methods.iter().any(|m| m == method))
        .count()
}

/// Waits until the heartbeat has sent a probe (so the generation has been silent for at least
/// its interval): `ping`, or `server/discover` on 2026-07-28.
async fn heartbeat_probed(mock: &MockServer) {
    let probes = || received(mock, "ping") + received(mock, "server/discover");
    let before = probes();
    until("a heartbeat probe", || probes() > before).await;
}

fn generation_of(server: &Supervisor) -> Option<Generation> {
    match server.status().state {
        ConnectionState::Ready { generation, .. } => Some(generation),
        _ => None,
    }
}

/// A supervised server, ready, then hung, and silent for at least the heartbeat interval.
struct Hushed {
    server: Supervisor,
    registry: ToolRegistry,
    first: Generation,
    events: mcp_resilient::state::EventReceiver,
    handle: mcp_resilient::ToolHandle,
}

async fn hushed(mock: &MockServer, config: ServerConfig) -> Hushed {
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(config, &registry).expect("valid config");
    server.wait_ready(LIMIT).await.expect("ready");
    let first = generation_of(&server).expect("ready");
    let events = server.events();
    let handle = registry.handle("mcp__hushed__echo").expect("echo listed");
    mock.faults().hang();
    heartbeat_probed(mock).await;
    Hushed {
        server,
        registry,
        first,
        events,
        handle,
    }
}

/// A hung server after a silence: the call's probe goes unanswered, which ends the generation at
/// once (the heartbeat alone would take 50 misses); the call, never sent, goes to the next
/// generation when the server answers again, and succeeds there. Both eras.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_whose_probe_goes_unanswered_runs_on_the_next_generation() {
    for modern in [false, true] {
        let mock = mock().await;
        let mut config = fast(ServerConfig::http("hushed", mock.http_url())).heartbeat(
            Heartbeat::default()
                .interval(Duration::from_millis(400))
                .timeout(Duration::from_millis(300))
                .failures(50),
        );
        if !modern {
            config = era_2025(config);
        }
        let Hushed {
            server,
            registry: _registry,
            first,
            mut events,
            handle,
        } = hushed(&mock, config).await;
        let call = tokio::spawn(async move { handle.call(json!({"text": "later"})).await });
        let (_, death, _) = lost(&mut events).await;
        assert_eq!(death.cause, Cause::HeartbeatTimeout, "{death:?}");
        assert!(death.detail.contains("pre-call probe"), "{death:?}");
        assert_eq!(
            received(&mock, "tools/call"),
            0,
            "not sent to the hung generation"
        );
        mock.faults().unhang();
        let answer = tokio::time::timeout(LIMIT, call)
            .await
            .expect("the call ends within its deadline")
            .expect("the call's task")
            .unwrap_or_else(|e| panic!("modern {modern}: {e}"));
        let text: String = answer
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect();
        assert!(text.contains("later"), "{text}");
        assert!(generation_of(&server).is_some_and(|g| g > first));
        assert_eq!(
            received(&mock, "tools/call"),
            1,
            "sent once, to the next generation"
        );
        server.shutdown().await;
        mock.shutdown().await;
    }
}

/// A probe cut short by its call's own deadline (shorter than the probe timeout) is no miss:
/// with `failures: 1` a miss would end the generation. The call ends `Timeout` in phase `Probe`,
/// not run and safe to send again, and the generation takes the next call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_probe_cut_short_by_its_calls_deadline_is_no_miss() {
    let mock = mock().await;
    let config = fast(ServerConfig::http("hushed", mock.http_url())).heartbeat(
        Heartbeat::default()
            .interval(Duration::from_millis(1000))
            .timeout(Duration::from_millis(900))
            .failures(1),
    );
    let Hushed {
        server,
        registry,
        first,
        mut events,
        handle,
    } = hushed(&mock, config).await;
    let outcome = handle
        .call_with(
            json!({"text": "hurried"}),
            CallOptions::new().timeout(Duration::from_millis(100)),
        )
        .await;
    // The heartbeat's own probe, sent before the call, is answered now, inside its timeout.
    mock.faults().unhang();
    let error = outcome.expect_err("the call's deadline came first");
    assert!(
        matches!(
            error,
            CallError::Timeout {
                phase: CallPhase::Probe,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(!error.may_have_run() && error.may_send_again(), "{error:?}");
    let again = registry.handle("mcp__hushed__echo").expect("echo listed");
    again
        .call(json!({"text": "again"}))
        .await
        .expect("the generation takes the next call");
    assert_eq!(generation_of(&server), Some(first));
    assert_eq!(
        received(&mock, "tools/call"),
        1,
        "only the second call was sent"
    );
    no_probe_missed(&mut events, "a probe cut short counted as a miss");
    server.shutdown().await;
    mock.shutdown().await;
}
