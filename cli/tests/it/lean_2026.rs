//! 2026-07-28 Streamable HTTP sessions on the lean link (the default): a call the host gives
//! up is cancelled on the server by its dropped `POST` (the revision's cancellation) and the
//! generation goes on; a resource the host subscribed to sends its updates through the
//! generation's `subscriptions/listen` stream to the host's notification handler.

use std::time::Duration;

use crate::common::*;
use mcp_mock_server::{MockOptions, MockServer, MockTransport};
use mcp_resilient::{
    ServerConfig, Supervisor, ToolRegistry,
    config::{Heartbeat, ProtocolChoice},
    host::HostHandlers,
};
use rmcp::model::ServerNotification;
use serde_json::json;

async fn mock() -> MockServer {
    MockServer::start(MockOptions {
        transport: MockTransport::Http,
        ..MockOptions::default()
    })
    .await
    .expect("mock server starts")
}

/// Waits until the mock's state says `done`, looking every 10 ms, at most [`LIMIT`].
async fn mock_until(
    server_side: &MockServer,
    what: &str,
    done: impl Fn(&mcp_mock_server::MockState) -> bool,
) {
    let deadline = tokio::time::Instant::now() + LIMIT;
    while !done(&server_side.faults().state().await) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: not within {LIMIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_2026_call_the_host_gives_up_is_cancelled_on_the_server_and_the_generation_goes_on() {
    init_tracing();
    let server_side = mock().await;
    let config = fast(ServerConfig::http("giveup", server_side.http_url()))
        .protocol(ProtocolChoice::V2026_07_28)
        .heartbeat(Heartbeat::disabled());
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(config, &registry).expect("valid config");
    server.wait_ready(LIMIT).await.expect("ready");
    assert_eq!(server.status().protocol(), Some("2026-07-28"));
    let generation = server.status().ready();
    let before = server_side.faults().state().await.calls;
    // `peek` tells its caller it began (a progress notification) and waits: its answer stream is
    // open while the server works.
    let handle = registry.handle("mcp__giveup__peek").expect("peek listed");
    // Boxed, so that dropping it drops the call (a pinned reference would not).
    let mut sleeping = Box::pin(handle.call(json!({"ms": 600_000})));
    // The call runs until the server is working on it; then the host gives it up.
    tokio::select! {
        answered = &mut sleeping => panic!("peek answered: {answered:?}"),
        () = mock_until(&server_side, "the server runs the call", |s| s.calls > before) => {}
    }
    drop(sleeping);
    mock_until(&server_side, "the server counts the call cancelled", |s| {
        s.cancelled >= 1
    })
    .await;
    assert_eq!(server.status().ready(), generation, "no new generation");
    call(&registry, "giveup", "echo", json!({"text": "after"})).await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_resource_update_reaches_the_host_through_the_2026_listen_stream() {
    init_tracing();
    let server_side = mock().await;
    let (tx, mut seen) = tokio::sync::mpsc::unbounded_channel();
    let handlers = HostHandlers::new().on_notification(move |_, notification| {
        let _ = tx.send(notification);
        async {}
    });
    let config = fast(ServerConfig::http("updates", server_side.http_url()))
        .protocol(ProtocolChoice::V2026_07_28)
        .heartbeat(Heartbeat::disabled())
        .handlers(handlers);
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(config, &registry).expect("valid config");
    server.wait_ready(LIMIT).await.expect("ready");
    assert_eq!(server.status().protocol(), Some("2026-07-28"));
    server
        .subscribe("mock://counter")
        .await
        .expect("subscribed");
    // The listener asks again, with the resource in its filter.
    mock_until(&server_side, "the listen stream names the resource", |s| {
        s.resource_subscriptions >= 1
    })
    .await;
    server_side.faults().bump_counter().await;
    let update = tokio::time::timeout(LIMIT, async {
        loop {
            match seen.recv().await {
                Some(ServerNotification::ResourceUpdatedNotification(update)) => break update,
                Some(_) => {}
                None => panic!("the handler is gone"),
            }
        }
    })
    .await
    .expect("the update reaches the host");
    assert_eq!(update.params.uri, "mock://counter");
    assert_eq!(server.status().ready().map(u64::from), Some(1));
    server.shutdown().await;
}
