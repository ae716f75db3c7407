//! One test per row of the verdict table (DESIGN.md "Verdicts"), against the in-process remote
//! mock server: what a supervisor does with overload, suspect answers, permanent refusals, a busy
//! server, and the answers that prove a server alive.

use std::time::Duration;

use crate::common::*;
use mcp_mock_server::{MockOptions, MockServer, MockTransport, StatusFault};
use mcp_resilient::{
    CallError, ConnectionState, ServerConfig, Supervisor, ToolRegistry,
    call::CallOptions,
    config::{Heartbeat, Reconnect},
    state::{Cause, Event, Reason},
};
use serde_json::json;

async fn mock(transport: MockTransport) -> MockServer {
    MockServer::start(MockOptions {
        transport,
        ..MockOptions::default()
    })
    .await
    .expect("mock server starts")
}

/// A Streamable HTTP config with the heartbeat off: only what the test does reaches the server.
fn quiet(name: &str, url: String) -> ServerConfig {
    fast(ServerConfig::http(name, url)).heartbeat(Heartbeat::disabled())
}

fn fault(status: u16, retry_after: Option<&str>, every: u32, methods: &[&str]) -> StatusFault {
    StatusFault {
        retry_after: retry_after.map(str::to_owned),
        every,
        methods: methods.iter().map(|m| m.to_string()).collect(),
        ..StatusFault::new(status)
    }
}

async fn ready(config: ServerConfig) -> (Supervisor, ToolRegistry) {
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(config, &registry).expect("valid config");
    server.wait_ready(LIMIT).await.expect("ready");
    (server, registry)
}

async fn echo(registry: &ToolRegistry, server: &str, text: &str) -> Result<String, CallError> {
    let handle = registry
        .handle(&format!("mcp__{server}__echo"))
        .expect("echo registered");
    let result = handle.call(json!({ "text": text })).await?;
    Ok(result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect())
}

/// The next `failed` state, or a panic naming what came instead.
async fn failed_state(
    server: &Supervisor,
) -> (Reason, mcp_resilient::state::Death, Option<Duration>) {
    let mut state = server.watch();
    let seen = wait_state(&mut state, |s| {
        matches!(s, ConnectionState::Failed { .. } | ConnectionState::Stopped)
    })
    .await;
    match seen {
        ConnectionState::Failed {
            reason,
            death,
            retry_in,
            ..
        } => (reason, death, retry_in),
        other => panic!("expected failed, got {other:?}"),
    }
}

#[tokio::test]
async fn overload_with_retry_after_is_waited_out_and_sent_again() {
    init_tracing();
    let mock = mock(MockTransport::Http).await;
    let (server, registry) = ready(quiet("busy", mock.http_url())).await;
    let faults = mock.faults();
    faults
        .set_status_fault(Some(fault(429, Some("0"), 3, &["tools/call"])))
        .unwrap();
    for i in 0..9 {
        let text = format!("call {i}");
        assert_eq!(
            echo(&registry, "busy", &text).await.expect("no call fails"),
            text
        );
    }
    assert_eq!(
        faults.faults_injected(),
        4,
        "every third POST of 12 was refused"
    );
    assert_eq!(faults.state().await.calls, 9, "each call ran exactly once");
    assert_eq!(
        server.status().ready().map(u64::from),
        Some(1),
        "overload is not death"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_503_with_retry_after_is_overload_too() {
    init_tracing();
    let mock = mock(MockTransport::Http).await;
    let (server, registry) = ready(quiet("busy", mock.http_url())).await;
    mock.faults()
        .set_status_fault(Some(fault(503, Some("1"), 2, &["tools/call"])))
        .unwrap();
    assert_eq!(echo(&registry, "busy", "a").await.unwrap(), "a");
    assert_eq!(
        echo(&registry, "busy", "b").await.unwrap(),
        "b",
        "refused once, resent after one second"
    );
    assert_eq!(mock.faults().faults_injected(), 1);
    assert_eq!(server.status().ready().map(u64::from), Some(1));
    server.shutdown().await;
}

#[tokio::test]
async fn overload_without_a_usable_wait_fails_the_call_typed_and_keeps_the_session() {
    init_tracing();
    let mock = mock(MockTransport::Http).await;
    let (server, registry) = ready(quiet("busy", mock.http_url())).await;
    let handle = registry.handle("mcp__busy__echo").unwrap();
    mock.faults()
        .set_status_fault(Some(fault(429, None, 1, &["tools/call"])))
        .unwrap();
    let outcome = handle.call(json!({"text": "x"})).await;
    assert!(
        matches!(
            outcome,
            Err(CallError::Overloaded {
                status: 429,
                retry_after: None,
                ..
            })
        ),
        "{outcome:?}"
    );
    // A wait longer than the call's own deadline is not waited.
    mock.faults()
        .set_status_fault(Some(fault(429, Some("30"), 1, &["tools/call"])))
        .unwrap();
    let outcome = handle
        .call_with(
            json!({"text": "x"}),
            CallOptions::new().timeout(Duration::from_secs(5)),
        )
        .await;
    assert!(
        matches!(&outcome, Err(CallError::Overloaded { retry_after: Some(wait), .. }) if *wait == Duration::from_secs(30)),
        "{outcome:?}"
    );
    assert!(outcome.unwrap_err().is_transient());
    // `Retry-After: 0` on every attempt: a few resends, each waiting longer, then `Overloaded`
    // (not a storm of resends, and not a `Timeout`: nothing ran).
    let before = mock.faults().faults_injected();
    mock.faults()
        .set_status_fault(Some(fault(429, Some("0"), 1, &["tools/call"])))
        .unwrap();
    let outcome = handle.call(json!({"text": "x"})).await;
    assert!(
        matches!(outcome, Err(CallError::Overloaded { .. })),
        "{outcome:?}"
    );
    assert_eq!(
        mock.faults().faults_injected() - before,
        6,
        "sent once and resent five times"
    );
    assert_eq!(mock.faults().state().await.calls, 0, "nothing ran");
    mock.faults().set_status_fault(None).unwrap();
    assert_eq!(echo(&registry, "busy", "after").await.unwrap(), "after");
    assert_eq!(
        server.status().ready().map(u64::from),
        Some(1),
        "overload is not death"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_5xx_without_retry_after_is_one_miss_and_failures_in_a_row_confirmed_by_a_probe_are_death()
 {
    init_tracing();
    let mock = mock(MockTransport::Http).await;
    let config = fast(ServerConfig::http("flaky", mock.http_url())).heartbeat(
        Heartbeat::default()
            // Long enough that no probe runs during the test: only the calls are judged.
            .interval(Duration::from_secs(60))
            .timeout(Duration::from_secs(5))
            .failures(2),
    );
    let (server, registry) = ready(config).await;
    let mut events = server.events();
    let faults = mock.faults();
    faults
        .set_status_fault(Some(fault(502, None, 2, &["tools/call"])))
        .unwrap();
    // Success, suspect, success, suspect, success: never two in a row, so never death.
    for i in 0..5 {
        let outcome = echo(&registry, "flaky", "x").await;
        if i % 2 == 1 {
            assert!(
                matches!(
                    outcome,
                    Err(CallError::Http {
                        status: Some(502),
                        ..
                    })
                ),
                "{outcome:?}"
            );
        } else {
            outcome.expect("every other call passes");
        }
    }
    assert_eq!(server.status().ready().map(u64::from), Some(1));
    // Two suspect answers in a row, but the probe that follows is answered: a flaky gateway in
    // front of a live server, not death.
    faults
        .set_status_fault(Some(fault(502, None, 1, &["tools/call"])))
        .unwrap();
    for _ in 0..2 {
        let outcome = echo(&registry, "flaky", "x").await;
        assert!(
            matches!(outcome, Err(CallError::Http { .. })),
            "{outcome:?}"
        );
    }
    assert_eq!(
        server.status().ready().map(u64::from),
        Some(1),
        "the confirming probe was answered"
    );
    // Two in a row and the probe fails as well: death.
    faults
        .set_status_fault(Some(fault(
            502,
            None,
            1,
            &["tools/call", "ping", "server/discover"],
        )))
        .unwrap();
    for _ in 0..2 {
        let outcome = echo(&registry, "flaky", "x").await;
        assert!(
            matches!(outcome, Err(CallError::Http { .. })),
            "{outcome:?}"
        );
    }
    let (_, death, _) = lost(&mut events).await;
    assert_eq!(death.cause, Cause::HeartbeatTimeout, "{death:?}");
    faults.set_status_fault(None).unwrap();
    assert_eq!(ready_generation(&mut events).await, 2);
    server.shutdown().await;
}

#[tokio::test]
async fn a_json_rpc_error_proves_the_server_alive() {
    init_tracing();
    let mock = mock(MockTransport::Http).await;
    let (server, registry) = ready(quiet("alive", mock.http_url())).await;
    let outcome = registry
        .handle("mcp__alive__sleep")
        .expect("sleep is listed")
        .call(json!({"ms": "not a number"}))
        .await;
    assert!(matches!(outcome, Err(CallError::Server(_))), "{outcome:?}");
    assert_eq!(server.status().ready().map(u64::from), Some(1));
    assert!(server.status().state.is_ready());
    server.shutdown().await;
}

#[tokio::test]
async fn a_probe_answered_429_proves_life_and_probes_less_often() {
    init_tracing();
    let mock = mock(MockTransport::Http).await;
    let config = fast(ServerConfig::http("limited", mock.http_url())).heartbeat(
        Heartbeat::default()
            .interval(Duration::from_millis(200))
            .timeout(Duration::from_millis(100))
            .failures(1),
    );
    let (server, _registry) = ready(config).await;
    let mut events = server.events();
    let faults = mock.faults();
    faults
        .set_status_fault(Some(fault(429, None, 1, &["ping", "server/discover"])))
        .unwrap();
    // Watch the probes for 2.5 s. Stretched (200, 400, 800, 800 ms apart) that is about four;
    // not one of them may count as a miss (failures = 1), and none may follow another at once
    // (a refusal is not a message, so it does not reset the idle clock).
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let probes = faults.faults_injected();
    assert!(
        (2..=6).contains(&probes),
        "{probes} probes in 2.5 s: the interval must stretch, not spin"
    );
    assert_eq!(
        server.status().ready().map(u64::from),
        Some(1),
        "an overloaded server is alive"
    );
    while let Ok(Some(event)) = events.try_recv() {
        assert!(
            !matches!(
                event,
                Event::ProbeMissed { .. }
                    | Event::State {
                        status: mcp_resilient::Status { .. },
                        ..
                    }
            ),
            "{event:?}"
        );
    }
    server.shutdown().await;
}

#[tokio::test]
async fn unauthorized_at_connect_fails_at_once_and_retries_only_at_max_delay() {
    init_tracing();
    let mock = mock(MockTransport::Http).await;
    let mut bearer = fault(401, None, 1, &[]);
    bearer.www_authenticate = Some("Bearer realm=\"mock\"".to_owned());
    mock.faults().set_status_fault(Some(bearer)).unwrap();
    let registry = ToolRegistry::new();
    let config = fast(ServerConfig::http("locked", mock.http_url())).reconnect(
        Reconnect::default()
            .initial_delay(Duration::from_millis(20))
            .max_delay(Duration::from_millis(300))
            .max_attempts(3),
    );
    let server = Supervisor::spawn(config, &registry).unwrap();
    let mut events = server.events();
    let (reason, death, retry_in) = failed_state(&server).await;
    assert_eq!(
        (reason, death.cause),
        (Reason::ConnectionFailed, Cause::Unauthorized)
    );
    assert_eq!(retry_in, Some(Duration::from_millis(300)));
    assert_eq!(
        mock.faults().faults_injected(),
        1,
        "no retry loop: one request was refused"
    );
    // The slow retry picks the server up once the credentials are accepted again.
    mock.faults().set_status_fault(None).unwrap();
    let generation = ready_generation(&mut events).await;
    assert!(generation >= 2);
    assert!(registry.snapshot().server("locked").is_some());
    server.shutdown().await;
}

#[tokio::test]
async fn forbidden_is_rejected_on_both_remote_transports() {
    init_tracing();
    let mock = mock(MockTransport::Both).await;
    mock.faults()
        .set_status_fault(Some(fault(403, None, 1, &[])))
        .unwrap();
    for config in [
        ServerConfig::http("no", mock.http_url()),
        ServerConfig::sse("no", mock.sse_url()),
        ServerConfig::remote("no", mock.http_url()),
    ] {
        let registry = ToolRegistry::new();
        let server = Supervisor::spawn(fast(config), &registry).unwrap();
        let (_, death, retry_in) = failed_state(&server).await;
        assert_eq!(death.cause, Cause::Rejected, "{death:?}");
        assert!(death.detail.contains("403"), "{death:?}");
        assert!(retry_in.is_some());
        server.shutdown().await;
    }
}

#[tokio::test]
async fn a_wrong_path_is_rejected_after_every_transport_auto_tries() {
    init_tracing();
    let mock = mock(MockTransport::Both).await;
    let url = format!("http://{}/no-such-endpoint", mock.addr());
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(fast(ServerConfig::remote("lost", url)), &registry).unwrap();
    let mut events = server.events();
    let (_, death, _) = failed_state(&server).await;
    assert_eq!(death.cause, Cause::Rejected, "{death:?}");
    assert!(
        death.detail.contains("streamable HTTP") && death.detail.contains("legacy SSE"),
        "both transports were tried: {death:?}"
    );
    while let Ok(Some(event)) = events.try_recv() {
        assert!(
            !matches!(
                event,
                Event::State {
                    status: mcp_resilient::Status {
                        state: ConnectionState::Reconnecting { .. },
                        ..
                    },
                    ..
                }
            ),
            "no retry at the normal pace: {event:?}"
        );
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_server_that_speaks_only_2026_is_rejected_by_a_2025_client_with_its_versions() {
    init_tracing();
    let mock = mock(MockTransport::Http).await;
    mock.faults().set_modern_only(true);
    let registry = ToolRegistry::new();
    let config = era_2025(fast(ServerConfig::http("modern", mock.http_url())));
    let server = Supervisor::spawn(config, &registry).unwrap();
    let (_, death, _) = failed_state(&server).await;
    assert_eq!(death.cause, Cause::Rejected, "{death:?}");
    assert!(death.detail.contains("2026-07-28"), "{death:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn a_401_during_a_session_fails_the_call_and_the_server() {
    init_tracing();
    let mock = mock(MockTransport::Http).await;
    let (server, registry) = ready(quiet("expiring", mock.http_url())).await;
    mock.faults()
        .set_status_fault(Some(fault(401, None, 1, &["tools/call"])))
        .unwrap();
    let outcome = echo(&registry, "expiring", "x").await;
    assert!(
        matches!(
            outcome,
            Err(CallError::Rejected {
                status: Some(401),
                ..
            })
        ),
        "{outcome:?}"
    );
    let (reason, death, _) = failed_state(&server).await;
    assert_eq!(
        (reason, death.cause),
        (Reason::ConnectionLost, Cause::Unauthorized)
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_403_on_one_call_fails_that_call_only() {
    init_tracing();
    let mock = mock(MockTransport::Http).await;
    let (server, registry) = ready(quiet("scoped", mock.http_url())).await;
    mock.faults()
        .set_status_fault(Some(fault(403, None, 1, &["tools/call"])))
        .unwrap();
    let outcome = echo(&registry, "scoped", "x").await;
    assert!(
        matches!(&outcome, Err(e @ CallError::Rejected { .. }) if !e.is_transient()),
        "{outcome:?}"
    );
    mock.faults().set_status_fault(None).unwrap();
    assert_eq!(echo(&registry, "scoped", "y").await.unwrap(), "y");
    assert_eq!(server.status().ready().map(u64::from), Some(1));
    server.shutdown().await;
}

#[tokio::test]
async fn a_busy_server_is_not_killed_by_the_heartbeat() {
    init_tracing();
    for config in [
        stdio_mock("blocked", &[]),
        fast(ServerConfig::http(
            "blocked",
            mock(MockTransport::Http).await.http_url(),
        )),
    ] {
        let heartbeat = Heartbeat::default()
            .interval(Duration::from_millis(200))
            .timeout(Duration::from_millis(100))
            .failures(2);
        let (server, registry) = ready(config.heartbeat(heartbeat)).await;
        let mut events = server.events();
        // The server's loop is blocked for 1.5 s: every probe in that time goes unanswered,
        // which without the busy rule is death after interval + 2 × timeout = 0.4 s.
        let block = registry.handle("mcp__blocked__block").unwrap();
        let result = block
            .call(json!({"ms": 1500}))
            .await
            .expect("the call completes");
        assert!(format!("{result:?}").contains("blocked 1500ms"));
        assert_eq!(
            server.status().ready().map(u64::from),
            Some(1),
            "busy is not dead"
        );
        while let Ok(Some(event)) = events.try_recv() {
            assert!(
                !matches!(
                    event,
                    Event::State {
                        status: mcp_resilient::Status { .. },
                        ..
                    }
                ),
                "{event:?}"
            );
        }
        server.shutdown().await;
    }
}

#[tokio::test]
async fn a_cross_origin_redirect_is_never_followed() {
    init_tracing();
    let target = mock(MockTransport::Http).await;
    let mock = mock(MockTransport::Http).await;
    mock.faults().set_redirect(Some(target.http_url())).unwrap();
    let registry = ToolRegistry::new();
    let config = fast(ServerConfig::http("moved", mock.http_url())).header("X-Api-Key", "secret");
    let server = Supervisor::spawn(config, &registry).unwrap();
    let (_, death, _) = failed_state(&server).await;
    assert_eq!(death.cause, Cause::Rejected, "{death:?}");
    assert!(
        target.faults().requests().is_empty(),
        "nothing (no header, no body) reached the other origin"
    );
    server.shutdown().await;
}
