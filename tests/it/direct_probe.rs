//! The heartbeat's probes on Streamable HTTP and legacy SSE go around rmcp's session
//! (`src/transport/direct.rs`), one in ten through it, and the server sees the same probe
//! either way: the same headers, the same body but for its id.

use std::time::Duration;

use mcp_mock_server::{MockOptions, MockServer, MockTransport, RecordedRequest};
use mcp_resilient::{
    ConnectionState, ServerConfig, Supervisor, ToolRegistry,
    config::{Heartbeat, ProtocolChoice},
    state::Cause,
};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(20);
/// Heartbeat probes looked at: three whole rounds of ten.
const PROBES: usize = 30;

async fn mock(transport: MockTransport) -> MockServer {
    let options = MockOptions {
        transport,
        port: 0,
        ..Default::default()
    };
    MockServer::start(options).await.expect("mock starts")
}

/// The server's config, on legacy SSE for `None`, else on Streamable HTTP at `protocol`.
fn probed(server: &MockServer, protocol: Option<ProtocolChoice>) -> ServerConfig {
    let config = match protocol {
        Some(protocol) => ServerConfig::http("probed", server.http_url()).protocol(protocol),
        None => ServerConfig::sse("probed", server.sse_url()),
    };
    config.heartbeat(
        Heartbeat::default()
            .interval(Duration::from_millis(100))
            .timeout(Duration::from_millis(90))
            .failures(5),
    )
}

/// The probes the server received (the heartbeat's: nothing else is sent meanwhile).
fn probes(server: &MockServer, method: &str) -> Vec<RecordedRequest> {
    server
        .faults()
        .requests()
        .into_iter()
        .filter(|r| r.rpc_methods == [method])
        .collect()
}

/// Waits until the server has received `count` probes.
async fn await_probes(server: &MockServer, method: &str, count: usize) -> Vec<RecordedRequest> {
    let mut tick = tokio::time::interval(Duration::from_millis(20));
    tokio::time::timeout(LIMIT, async {
        loop {
            tick.tick().await;
            let seen = probes(server, method);
            if seen.len() >= count {
                return seen;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{count} probes not received within {LIMIT:?}"))
}

fn body(request: &RecordedRequest) -> Value {
    serde_json::from_str(&request.body).expect("a probe's body is JSON")
}

/// The body without what differs between two probes of the same generation: the id, and the
/// progress token rmcp's session gives every request.
fn comparable(mut body: Value) -> Value {
    body["id"] = Value::Null;
    let object = body.as_object_mut().expect("an object");
    if let Some(params) = object.get_mut("params").and_then(Value::as_object_mut) {
        if let Some(meta) = params.get_mut("_meta").and_then(Value::as_object_mut) {
            meta.remove("progressToken");
            if meta.is_empty() {
                params.remove("_meta");
            }
        }
        if params.is_empty() {
            object.remove("params");
        }
    }
    body
}

/// The request's MCP headers (`mcp-*`), which a probe's route and session depend on.
fn mcp_headers(request: &RecordedRequest) -> Vec<(String, String)> {
    request
        .headers
        .iter()
        .filter(|(name, _)| name.starts_with("mcp-"))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect()
}

async fn one_in_ten_through_the_session(protocol: Option<ProtocolChoice>, method: &str) {
    let server = mock(match protocol {
        Some(_) => MockTransport::Http,
        None => MockTransport::Sse,
    })
    .await;
    let registry = ToolRegistry::new();
    let supervisor = Supervisor::spawn(probed(&server, protocol), &registry).unwrap();
    let generation = supervisor.wait_ready(LIMIT).await.expect("ready");
    // From here on, only heartbeat probes are sent.
    server.faults().clear_requests();
    let seen = await_probes(&server, method, PROBES).await;
    let window = &seen[..PROBES];
    let (direct, session): (Vec<_>, Vec<_>) = window.iter().partition(|r| {
        body(r)["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("mcp-resilient-probe-"))
    });
    // Ten in a row are nine direct ones and one of rmcp's (a number id): any 30 in a row hold
    // exactly three of the session's.
    assert_eq!(
        session.len(),
        3,
        "{protocol:?}: ids {:?}",
        window
            .iter()
            .map(|r| body(r)["id"].clone())
            .collect::<Vec<_>>()
    );
    assert!(session.iter().all(|r| body(r)["id"].is_number()));
    let (a, b) = (direct[0], session[0]);
    assert_eq!(
        comparable(body(a)),
        comparable(body(b)),
        "{protocol:?}: bodies"
    );
    assert_eq!(mcp_headers(a), mcp_headers(b), "{protocol:?}: headers");
    let ids: std::collections::HashSet<_> =
        direct.iter().map(|r| body(r)["id"].to_string()).collect();
    assert_eq!(ids.len(), direct.len(), "every probe has its own id");
    // Nothing was judged amiss: still the first generation, ready.
    let status = supervisor.status();
    assert_eq!(status.ready(), Some(generation), "{status:?}");
    supervisor.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeat_probes_of_a_2025_session_go_around_it_but_one_in_ten() {
    one_in_ten_through_the_session(Some(ProtocolChoice::V2025_11_25), "ping").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeat_probes_of_a_2026_generation_go_around_its_session_but_one_in_ten() {
    one_in_ten_through_the_session(Some(ProtocolChoice::V2026_07_28), "server/discover").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeat_probes_of_a_legacy_sse_session_go_around_it_but_one_in_ten() {
    one_in_ten_through_the_session(None, "ping").await;
}

/// A direct probe's silence is a miss like any other: a server that stops answering while its
/// connections stay open is found dead by the heartbeat.
async fn a_hung_server_is_found_by_direct_probes(protocol: Option<ProtocolChoice>) {
    let server = mock(match protocol {
        Some(_) => MockTransport::Http,
        None => MockTransport::Sse,
    })
    .await;
    let registry = ToolRegistry::new();
    let config = probed(&server, protocol).heartbeat(
        Heartbeat::default()
            .interval(Duration::from_millis(200))
            .timeout(Duration::from_millis(150))
            .failures(2),
    );
    let supervisor = Supervisor::spawn(config, &registry).unwrap();
    supervisor.wait_ready(LIMIT).await.expect("ready");
    let mut status = supervisor.watch();
    // Past the first probe (through the session): the ones that follow are direct.
    server.faults().clear_requests();
    await_probes(&server, "ping", 2).await;
    server.faults().hang();
    let lost = tokio::time::timeout(
        LIMIT,
        status.wait_for(|s| !matches!(s.state, ConnectionState::Ready { .. })),
    )
    .await
    .expect("the loss is seen")
    .expect("the supervisor runs");
    match &lost.state {
        ConnectionState::Reconnecting { death, .. } | ConnectionState::Failed { death, .. } => {
            assert_eq!(
                death.cause,
                Cause::HeartbeatTimeout,
                "{protocol:?}: {lost:?}"
            );
        }
        other => panic!("unexpected {other:?}"),
    }
    let probes = probes(&server, "ping");
    assert!(
        probes.iter().any(|r| body(r)["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("mcp-resilient-probe-"))),
        "{protocol:?}: the misses were direct probes"
    );
    supervisor.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_http_server_is_found_by_direct_probes() {
    a_hung_server_is_found_by_direct_probes(Some(ProtocolChoice::V2025_11_25)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_legacy_sse_server_is_found_by_direct_probes() {
    a_hung_server_is_found_by_direct_probes(None).await;
}
