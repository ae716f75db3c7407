//! Streamable HTTP over HTTP/2 (`http2 = prior-knowledge`, h2c to the in-process mock): the
//! sessions of one origin share its connections, a second one opens at the server's stream
//! limit, a `GOAWAY` drains a connection without ending a session, a refused stream is sent
//! again, a connection whose `PING`s go unanswered is closed and its sessions go on on a new
//! one, and an HTTP/1.1-only server is spoken to in HTTP/1.1. What is counted (connections
//! that carried requests, requests by version) is counted by the mock: not the connections it
//! accepted, which on a shared machine include strangers' (another test's client reconnecting
//! to a port the mock now holds).

use mcp_mock_server::{MockOptions, MockServer, MockTransport};
use std::time::Duration;

use mcp_resilient::{
    ConnectionState, ServerConfig, Supervisor, ToolRegistry,
    config::{Heartbeat, HeartbeatScope, Http2},
    state::{Cause, Event, EventReceiver},
};
use serde_json::json;

use crate::common::{LIMIT, era_2025, fast, until};

pub async fn mock(h2_max_streams: Option<u32>, http1_only: bool) -> MockServer {
    let options = MockOptions {
        transport: MockTransport::Http,
        h2_max_streams,
        http1_only,
        ..Default::default()
    };
    MockServer::start(options)
        .await
        .expect("mock server starts")
}

/// A 2025 session (it holds a standalone `GET` stream for its life) over HTTP/2; no heartbeat,
/// so every request the server sees is one the test made or the session's own.
pub fn config(name: &str, server: &MockServer) -> ServerConfig {
    let config = ServerConfig::http(name, server.http_url()).http2(Http2::PriorKnowledge);
    era_2025(fast(config)).heartbeat(Heartbeat::disabled())
}

/// Spawns `n` sessions to `server` (named `s0`, `s1`, …) in one registry and waits until each is
/// ready on its first generation.
pub async fn sessions(server: &MockServer, n: usize) -> (Vec<Supervisor>, ToolRegistry) {
    let registry = ToolRegistry::new();
    let supervisors: Vec<Supervisor> = (0..n)
        .map(|i| Supervisor::spawn(config(&format!("s{i}"), server), &registry).expect("spawns"))
        .collect();
    for supervisor in &supervisors {
        let generation = supervisor.wait_ready(LIMIT).await.expect("ready");
        assert_eq!(generation.get(), 1);
    }
    (supervisors, registry)
}

pub async fn echo(registry: &ToolRegistry, server: &str, text: &str) {
    let handle = registry
        .handle(&format!("mcp__{server}__echo"))
        .expect("echo is registered");
    let answer = tokio::time::timeout(LIMIT, handle.call(json!({ "text": text })))
        .await
        .expect("echo within the limit")
        .expect("echo answers");
    let content = serde_json::to_string(&answer.content).expect("serializes");
    assert!(content.contains(text), "{content}");
}

/// The session is still on its first generation and never left ready: what it went through was
/// a drain, not a death.
fn assert_stayed_ready(supervisor: &Supervisor, events: &mut EventReceiver) {
    assert_eq!(supervisor.status().generation.map(|g| g.get()), Some(1));
    while let Ok(Some(event)) = events.try_recv() {
        assert!(
            !matches!(event, Event::State { ref status, .. } if !status.state.is_ready()),
            "the session left ready: {event:?}"
        );
    }
}

pub async fn shutdown(supervisors: Vec<Supervisor>) {
    for supervisor in supervisors {
        supervisor.shutdown().await;
    }
}

#[tokio::test]
async fn the_sessions_of_one_origin_share_one_connection() {
    let server = mock(None, false).await;
    let (supervisors, registry) = sessions(&server, 20).await;
    for i in 0..20 {
        echo(&registry, &format!("s{i}"), "shared").await;
    }
    let wire = server.faults().wire();
    assert_eq!(wire.http2_connections, 1, "{wire:?}");
    assert_eq!(wire.http1_requests, 0, "{wire:?}");
    assert!(
        wire.http2_requests >= 60,
        "initialize, GET, echo each: {wire:?}"
    );
    shutdown(supervisors).await;
}

#[tokio::test]
async fn a_second_connection_opens_when_the_first_reaches_the_stream_limit() {
    let server = mock(Some(3), false).await;
    // Five standalone streams alone need two connections of three streams.
    let (supervisors, registry) = sessions(&server, 5).await;
    for i in 0..5 {
        echo(&registry, &format!("s{i}"), "limit").await;
    }
    let wire = server.faults().wire();
    assert!(
        wire.http2_connections >= 2,
        "one connection carried more streams than allowed: {wire:?}"
    );
    assert!(
        wire.http2_connections < 5,
        "a connection per session: {wire:?}"
    );
    assert_eq!(wire.http1_requests, 0, "{wire:?}");
    shutdown(supervisors).await;
}

#[tokio::test]
async fn goaway_mid_call_drains_the_connection_and_ends_no_session() {
    let server = mock(None, false).await;
    let (supervisors, registry) = sessions(&server, 1).await;
    let mut events = supervisors[0].events();
    server.faults().clear_requests();
    server.faults().hang();
    let call = tokio::spawn({
        let registry = registry.clone();
        async move { echo(&registry, "s0", "in flight").await }
    });
    let faults = server.faults().clone();
    until("the call reached the server", || {
        faults
            .requests()
            .iter()
            .any(|r| r.rpc_methods.iter().any(|m| m == "tools/call"))
    })
    .await;
    server.faults().goaway();
    server.faults().unhang();
    tokio::time::timeout(LIMIT, call)
        .await
        .expect("the call in flight ends")
        .expect("the call in flight succeeds");
    // New requests go on a new connection.
    echo(&registry, "s0", "after goaway").await;
    assert_eq!(server.faults().wire().http2_connections, 2);
    assert_stayed_ready(&supervisors[0], &mut events);
    shutdown(supervisors).await;
}

#[tokio::test]
async fn a_refused_stream_is_sent_again_and_the_call_succeeds() {
    let server = mock(None, false).await;
    let (supervisors, registry) = sessions(&server, 1).await;
    server.faults().refuse_streams(2);
    echo(&registry, "s0", "refused twice").await;
    let wire = server.faults().wire();
    assert_eq!(wire.refused_streams, 2, "{wire:?}");
    assert_eq!(
        wire.http2_connections, 1,
        "a refused stream does not drain its connection"
    );
    assert_eq!(supervisors[0].status().generation.map(|g| g.get()), Some(1));
    shutdown(supervisors).await;
}

#[tokio::test]
async fn an_http1_only_server_is_spoken_to_in_http1() {
    let server = mock(None, true).await;
    let (supervisors, registry) = sessions(&server, 2).await;
    echo(&registry, "s0", "over http/1.1").await;
    echo(&registry, "s1", "over http/1.1").await;
    let wire = server.faults().wire();
    assert_eq!(wire.http2_requests, 0, "{wire:?}");
    assert!(wire.http1_requests >= 6, "{wire:?}");
    shutdown(supervisors).await;
}

#[tokio::test]
async fn after_goaway_a_cut_standalone_stream_opens_again_on_a_new_connection() {
    let server = mock(None, false).await;
    let (supervisors, registry) = sessions(&server, 1).await;
    let mut events = supervisors[0].events();
    server.faults().goaway();
    // The session's standalone `GET` still runs on the drained connection; cutting it makes the
    // session open it again, and no new stream may go where the `GOAWAY` came from.
    let before = server.faults().wire();
    server.faults().cut_streams();
    let faults = server.faults().clone();
    until("the standalone stream opened again", || {
        let wire = faults.wire();
        wire.http2_connections == 2 && wire.http2_requests > before.http2_requests
    })
    .await;
    echo(&registry, "s0", "after the cut").await;
    assert_eq!(server.faults().wire().http2_connections, 2);
    assert_stayed_ready(&supervisors[0], &mut events);
    shutdown(supervisors).await;
}

/// The causes of the generations that ended among `events` (their `Reconnecting` states).
fn deaths(events: &mut EventReceiver) -> Vec<Cause> {
    let mut out = Vec::new();
    while let Ok(Some(event)) = events.try_recv() {
        if let Event::State { status, .. } = event
            && let ConnectionState::Reconnecting { death, .. } = status.state
        {
            out.push(death.cause);
        }
    }
    out
}

/// A connection whose server stopped acknowledging `PING`s (the TCP connection open, every
/// other frame flowing) is closed by the client's keep-alive. What that ends is the
/// connection, not the sessions: each session's standalone stream ends with it and opens again
/// at once on a new connection, on the same session (a new stream is life). A request of a
/// session in flight on the closed connection (a heartbeat probe, as the group's probes run
/// every interval here too) fails on the transport: that session's generation ends as
/// `transport_error` and its next generation comes up on the new connection. Either way every
/// session answers on the new connection, and no other cause ends a generation.
#[tokio::test]
async fn a_connection_whose_pings_go_unanswered_is_closed_and_its_sessions_go_on_a_new_one() {
    let server = mock(None, false).await;
    let interval = Duration::from_millis(400);
    // The heartbeat's interval and timeout are the connection's `PING` interval and timeout;
    // three misses to death, so that no slow answer ends a generation here.
    let beat = Heartbeat::default()
        .interval(interval)
        .timeout(interval * 9 / 10)
        .failures(3)
        .scope(HeartbeatScope::Origin)
        .session_check_every(1000);
    let registry = ToolRegistry::new();
    let mut supervisors = Vec::new();
    for i in 0..3 {
        let config = config(&format!("p{i}"), &server).heartbeat(beat.clone());
        let supervisor = Supervisor::spawn(config, &registry).expect("spawns");
        assert_eq!(supervisor.wait_ready(LIMIT).await.expect("ready").get(), 1);
        supervisors.push(supervisor);
    }
    let mut events: Vec<EventReceiver> = supervisors.iter().map(Supervisor::events).collect();
    let before = server.faults().wire();
    assert_eq!(before.http2_connections, 1, "{before:?}");
    server.faults().silence_pings();
    let faults = server.faults().clone();
    until(
        "a PING went unanswered and the client closed its connection",
        || {
            let wire = faults.wire();
            wire.unanswered_pings >= 1 && wire.closed > before.closed && wire.http2_connections >= 2
        },
    )
    .await;
    for (i, supervisor) in supervisors.iter().enumerate() {
        supervisor
            .wait_ready(LIMIT)
            .await
            .expect("ready on the new connection");
        echo(&registry, &format!("p{i}"), "on the new connection").await;
    }
    let wire = server.faults().wire();
    assert_eq!(wire.http1_requests, 0, "{wire:?}");
    for (supervisor, events) in supervisors.iter().zip(&mut events) {
        let deaths = deaths(events);
        assert!(
            deaths.iter().all(|cause| *cause == Cause::TransportError),
            "{deaths:?}"
        );
        let generation = supervisor.status().generation.map(|g| g.get());
        assert_eq!(generation, Some(1 + deaths.len() as u64), "{deaths:?}");
    }
    shutdown(supervisors).await;
}
