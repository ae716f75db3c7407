//! The remote transports against the in-process mock server: legacy SSE, Streamable HTTP and
//! `auto`, and how each one's faults end a generation.

use std::time::Duration;

use mcp_mock_server::{MockOptions, MockServer, MockTransport, RecordedRequest};
use mcp_resilient::{
    ConnectionState, ServerConfig, Supervisor, ToolRegistry,
    config::{Heartbeat, Reconnect},
    state::{Cause, Event, Reason},
};
use serde_json::json;

/// The limit of every wait: generous for a loaded 2-core machine; a hang still fails the test.
const LIMIT: Duration = Duration::from_secs(20);

async fn mock(transport: MockTransport) -> MockServer {
    let options = MockOptions {
        transport,
        port: 0,
        ..Default::default()
    };
    MockServer::start(options)
        .await
        .expect("mock server starts")
}

/// Quick backoff, no heartbeat (so every detection below comes from the transport itself).
fn fast(config: ServerConfig) -> ServerConfig {
    config
        .reconnect(
            Reconnect::default()
                .initial_delay(Duration::from_millis(20))
                .max_delay(Duration::from_millis(200))
                .max_attempts(5),
        )
        .heartbeat(Heartbeat::disabled())
        .call_timeout(Duration::from_secs(10))
        .connect_timeout(Duration::from_secs(10))
}

/// Sessions (and their expiry) exist only up to 2025-11-25; the mock speaks both eras.
fn era_2025(config: ServerConfig) -> ServerConfig {
    config.protocol(mcp_resilient::config::ProtocolChoice::V2025_11_25)
}

async fn start(config: ServerConfig) -> (Supervisor, ToolRegistry) {
    let registry = ToolRegistry::new();
    let supervisor = Supervisor::spawn(config, &registry).expect("supervisor starts");
    (supervisor, registry)
}

async fn ready(supervisor: &Supervisor) -> u64 {
    match supervisor.wait_ready(LIMIT).await {
        Ok(generation) => generation.get(),
        Err(state) => panic!("not ready within {LIMIT:?}: {state:?}"),
    }
}

async fn echo(registry: &ToolRegistry, server: &str) -> String {
    let handle = registry
        .handle(&format!("mcp__{server}__echo"))
        .expect("echo is registered");
    let result = handle
        .call(json!({"text": "hi"}))
        .await
        .expect("echo answers");
    serde_json::to_string(&result.content).expect("content serializes")
}

/// The next state event that satisfies `want`, at most [`LIMIT`].
async fn next_state(
    events: &mut mcp_resilient::state::EventReceiver,
    mut want: impl FnMut(&ConnectionState) -> bool,
) -> ConnectionState {
    let wait = async {
        loop {
            match events.recv().await {
                Ok(Event::State {
                    status: mcp_resilient::Status { state, .. },
                    ..
                }) if want(&state) => return state,
                Ok(_) | Err(mcp_resilient::state::RecvError::Lagged(_)) => {}
                Err(mcp_resilient::state::RecvError::Closed) => panic!("event channel closed"),
            }
        }
    };
    tokio::time::timeout(LIMIT, wait)
        .await
        .expect("state reached in time")
}

fn lost_with(cause: Cause) -> impl FnMut(&ConnectionState) -> bool {
    move |state| matches!(state, ConnectionState::Reconnecting { reason: Reason::ConnectionLost, death, .. } if death.cause == cause)
}

fn set_max_event_bytes(config: ServerConfig, bytes: usize) -> ServerConfig {
    let limits = config.get_limits().clone().max_sse_event_bytes(bytes);
    config.limits(limits)
}

fn has_headers(request: &RecordedRequest) -> bool {
    request.headers.get("authorization").map(String::as_str) == Some("Bearer s3cret")
        && request.headers.get("x-trace").map(String::as_str) == Some("t-1")
}

fn paths(requests: &[RecordedRequest]) -> Vec<String> {
    requests
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

/// A session's standalone GET stream is open before the generation is called ready (here the
/// server takes 300 ms to answer it), so what the server sends on it from then on is heard: a
/// tool change announced at once reaches the registry.
#[tokio::test]
async fn the_standalone_stream_is_open_before_the_generation_is_ready() {
    let mock = mock(MockTransport::Http).await;
    mock.faults().set_slow_streams(Duration::from_millis(300));
    let config = era_2025(fast(ServerConfig::http("standalone", mock.http_url())));
    let (supervisor, registry) = start(config).await;
    let generation = ready(&supervisor).await;
    assert_eq!(mock.faults().state().await.streams, 1, "open when ready");
    let mut events = supervisor.events();
    let change = mcp_mock_server::SetTools {
        add: vec!["fresh".to_owned()],
        ..Default::default()
    };
    mock.faults().set_tools(change).await;
    let changed = tokio::time::timeout(LIMIT, async {
        loop {
            match events.recv().await {
                Ok(Event::Tools(change)) => return change,
                Ok(_) => continue,
                Err(e) => panic!("events: {e}"),
            }
        }
    })
    .await
    .expect("the change is heard");
    assert_eq!(changed.generation, generation);
    assert_eq!(changed.added, vec!["fresh".to_owned()]);
    assert!(registry.snapshot().get("mcp__standalone__fresh").is_some());
    supervisor.shutdown().await;
    mock.shutdown().await;
}

#[tokio::test]
async fn sse_connects_and_calls_tools() {
    let server = mock(MockTransport::Sse).await;
    let (supervisor, registry) = start(fast(ServerConfig::sse("legacy", server.sse_url()))).await;
    ready(&supervisor).await;
    assert!(echo(&registry, "legacy").await.contains("hi"));
    supervisor.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn http_connects_and_calls_tools() {
    let server = mock(MockTransport::Http).await;
    let (supervisor, registry) = start(fast(ServerConfig::http("modern", server.http_url()))).await;
    ready(&supervisor).await;
    assert!(echo(&registry, "modern").await.contains("hi"));
    supervisor.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn configured_headers_reach_every_request_of_both_transports() {
    let server = mock(MockTransport::Both).await;
    for config in [
        ServerConfig::sse("legacy", server.sse_url()),
        ServerConfig::http("modern", server.http_url()),
    ] {
        let name = config.name().to_owned();
        let config = fast(config)
            .header("Authorization", "Bearer s3cret")
            .header("X-Trace", "t-1");
        let (supervisor, registry) = start(config).await;
        ready(&supervisor).await;
        echo(&registry, &name).await;
        supervisor.shutdown().await;
    }
    let requests = server.faults().requests();
    let seen = paths(&requests);
    for expected in ["GET /sse", "POST /message", "POST /mcp"] {
        assert!(
            seen.iter().any(|p| p == expected),
            "no {expected} in {seen:?}"
        );
    }
    let missing: Vec<_> = requests.iter().filter(|r| !has_headers(r)).collect();
    assert!(
        missing.is_empty(),
        "requests without the configured headers: {missing:?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn an_endpoint_on_another_origin_is_refused_and_never_contacted() {
    let server = mock(MockTransport::Sse).await;
    let other = mock(MockTransport::Both).await;
    let foreign = format!("http://{}/message?sessionId=stolen", other.addr());
    server.faults().set_cross_origin(Some(foreign));
    let config = fast(ServerConfig::sse("legacy", server.sse_url()))
        .header("Authorization", "Bearer s3cret")
        .reconnect(Reconnect::default().max_attempts(1));
    let (supervisor, _registry) = start(config).await;
    let Err(mcp_resilient::NotReady {
        status:
            mcp_resilient::Status {
                state: ConnectionState::Failed { death, .. },
                ..
            },
        ..
    }) = supervisor.wait_ready(LIMIT).await
    else {
        panic!("expected failed, got {:?}", supervisor.status().state);
    };
    assert_eq!(death.cause, Cause::ConnectFailed);
    assert!(death.detail.contains("origin"), "detail: {}", death.detail);
    assert!(
        other.faults().requests().is_empty(),
        "the other origin was contacted"
    );
    supervisor.shutdown().await;
    server.shutdown().await;
    other.shutdown().await;
}

#[tokio::test]
async fn an_oversized_sse_event_ends_the_generation_with_a_clear_detail() {
    let server = mock(MockTransport::Sse).await;
    let config = set_max_event_bytes(fast(ServerConfig::sse("legacy", server.sse_url())), 4096);
    let (supervisor, _registry) = start(config).await;
    ready(&supervisor).await;
    let mut events = supervisor.events();
    server.faults().set_oversized(64 * 1024);
    // A limit exceeded is a verdict like a refusal: failed, tried again only at max_delay.
    let state = next_state(&mut events, |state| {
        matches!(state, ConnectionState::Failed { reason: Reason::ConnectionLost, death, retry_in: Some(_), .. }
            if death.cause == Cause::LimitExceeded)
    })
    .await;
    let ConnectionState::Failed { death, .. } = state else {
        unreachable!()
    };
    assert!(
        death
            .detail
            .contains("limits.max_sse_event_bytes (4096 bytes)"),
        "detail: {}",
        death.detail
    );
    server.faults().set_oversized(0);
    supervisor.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_dropped_sse_stream_ends_the_generation_and_a_new_one_follows() {
    let server = mock(MockTransport::Sse).await;
    let (supervisor, registry) = start(fast(ServerConfig::sse("legacy", server.sse_url()))).await;
    let first = ready(&supervisor).await;
    let mut events = supervisor.events();
    server.faults().drop_streams().await;
    next_state(&mut events, lost_with(Cause::StreamClosed)).await;
    let next = next_state(&mut events, |s| matches!(s, ConnectionState::Ready { .. })).await;
    assert!(matches!(next, ConnectionState::Ready { generation, .. } if generation.get() > first));
    assert!(echo(&registry, "legacy").await.contains("hi"));
    supervisor.shutdown().await;
    server.shutdown().await;
}

/// With a 30 s backoff, only the immediate rebuild on session expiry can be ready in time.
async fn expired_session_is_rebuilt_at_once(stale_400: bool) {
    let server = mock(MockTransport::Http).await;
    let config = era_2025(fast(ServerConfig::http("modern", server.http_url()))).reconnect(
        Reconnect::default()
            .initial_delay(Duration::from_secs(30))
            .max_delay(Duration::from_secs(60)),
    );
    let (supervisor, registry) = start(config).await;
    let first = ready(&supervisor).await;
    let mut events = supervisor.events();
    server.faults().set_stale_400(stale_400);
    server.faults().expire_sessions().await;
    let handle = registry
        .handle("mcp__modern__echo")
        .expect("echo is registered");
    let outcome = handle.call(json!({"text": "hi"})).await;
    assert!(
        outcome.is_ok(),
        "a call refused for an expired session did not run; it goes to the rebuilt one: {outcome:?}"
    );
    next_state(&mut events, lost_with(Cause::SessionExpired)).await;
    let next = next_state(&mut events, |s| matches!(s, ConnectionState::Ready { .. })).await;
    assert!(matches!(next, ConnectionState::Ready { generation, .. } if generation.get() > first));
    assert!(echo(&registry, "modern").await.contains("hi"));
    supervisor.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn an_expired_http_session_is_rebuilt_without_backoff() {
    expired_session_is_rebuilt_at_once(false).await;
}

#[tokio::test]
async fn a_400_for_a_stale_http_session_counts_as_expiry() {
    expired_session_is_rebuilt_at_once(true).await;
}

#[tokio::test]
async fn auto_picks_sse_for_an_sse_only_server_and_remembers_it() {
    let server = mock(MockTransport::Sse).await;
    let (supervisor, registry) = start(fast(ServerConfig::remote("auto", server.sse_url()))).await;
    ready(&supervisor).await;
    assert!(echo(&registry, "auto").await.contains("hi"));
    assert!(paths(&server.faults().requests()).contains(&"POST /message".to_owned()));
    // The next generation goes straight to legacy SSE: no second `POST initialize` probe.
    server.faults().clear_requests();
    let mut events = supervisor.events();
    server.faults().drop_streams().await;
    next_state(&mut events, |s| matches!(s, ConnectionState::Ready { .. })).await;
    let seen = paths(&server.faults().requests());
    assert_eq!(
        seen.first().map(String::as_str),
        Some("GET /sse"),
        "requests: {seen:?}"
    );
    assert!(
        !seen.contains(&"POST /sse".to_owned()),
        "requests: {seen:?}"
    );
    supervisor.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn auto_picks_http_for_an_http_only_server() {
    let server = mock(MockTransport::Http).await;
    let (supervisor, registry) = start(fast(ServerConfig::remote("auto", server.http_url()))).await;
    ready(&supervisor).await;
    assert!(echo(&registry, "auto").await.contains("hi"));
    let seen = paths(&server.faults().requests());
    assert_eq!(
        seen.first().map(String::as_str),
        Some("POST /mcp"),
        "requests: {seen:?}"
    );
    assert!(
        !seen
            .iter()
            .any(|p| p.contains("/sse") || p.contains("/message")),
        "requests: {seen:?}"
    );
    supervisor.shutdown().await;
    server.shutdown().await;
}
