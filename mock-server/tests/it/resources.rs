//! Resources: `mock://static/hello`, `mock://counter` and the `mock://echo/{text}` template read
//! back in both eras, and a counter bump (the `bump` tool, `Faults::bump_counter` or
//! `POST /_mock/bump-counter`) reaching initialize-era `resources/subscribe` subscribers and
//! 2026-07-28 `subscriptions/listen` filters as `notifications/resources/updated`, over
//! Streamable HTTP and stdio.
#![allow(deprecated)] // rmcp marks resources/subscribe legacy-only; the mock serves it

use crate::common;
use crate::modern;
use crate::notes;
use crate::raw;

use common::{state_until, text, within};
use mcp_mock_server::{MockOptions, MockServer, MockTransport, Whoami};
use modern::{Asker, Era, connect_http, connect_stdio, error_code, params, spawn_stdio};
use notes::Recorder;
use raw::{admin, mock_state};
use rmcp::RoleClient;
use rmcp::model::{
    ErrorCode, ReadResourceRequestParams, ServerNotification, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{RunningService, Subscription};
use serde_json::json;

const HELLO: &str = "mock://static/hello";
const COUNTER: &str = "mock://counter";

async fn start() -> MockServer {
    let opts = MockOptions {
        transport: MockTransport::Http,
        ..MockOptions::default()
    };
    within("start", MockServer::start(opts))
        .await
        .expect("start")
}

async fn read<H: rmcp::ClientHandler>(
    running: &RunningService<RoleClient, H>,
    uri: &str,
) -> String {
    let result = within(
        uri,
        running.read_resource(ReadResourceRequestParams::new(uri)),
    )
    .await
    .expect(uri);
    let contents = serde_json::to_value(&result.contents).expect("serializes");
    assert_eq!(contents[0]["uri"], json!(uri), "{contents}");
    contents[0]["text"]
        .as_str()
        .expect("text contents")
        .to_owned()
}

async fn whoami<H: rmcp::ClientHandler>(running: &RunningService<RoleClient, H>) -> Whoami {
    let result = within("whoami", running.call_tool(params("whoami", json!({}))))
        .await
        .expect("whoami");
    Whoami::from_result(&result).expect("a whoami result")
}

async fn bump_tool<H: rmcp::ClientHandler>(running: &RunningService<RoleClient, H>) -> String {
    let result = within("bump", running.call_tool(params("bump", json!({}))))
        .await
        .expect("bump");
    text(&result)
}

async fn listen_counter<H: rmcp::ClientHandler>(
    running: &RunningService<RoleClient, H>,
) -> Subscription {
    let filter = SubscriptionFilter::builder()
        .resource_subscriptions([COUNTER, "mock://nope"])
        .build();
    let subscription = within("listen", running.listen(filter))
        .await
        .expect("the subscription is acknowledged");
    assert_eq!(
        subscription.acknowledged().resource_subscriptions,
        Some(vec![COUNTER.to_owned()]),
        "only resources that exist are accepted"
    );
    subscription
}

async fn expect_updated(subscription: &mut Subscription, uri: &str) {
    match within("resources/updated", subscription.next()).await {
        Ok(Some(ServerNotification::ResourceUpdatedNotification(updated))) => {
            assert_eq!(updated.params.uri, uri);
        }
        other => panic!("expected resources/updated, got {other:?}"),
    }
}

#[tokio::test]
async fn the_static_counter_and_template_resources_read_back_in_both_eras() {
    let server = start().await;
    for era in [Era::Legacy, Era::Modern] {
        let running = connect_http(&server.http_url(), era, Asker::mute()).await;
        let listed = within("list", running.list_all_resources())
            .await
            .expect("resources/list");
        let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(uris, [HELLO, COUNTER], "{era:?}");
        let templates = within("templates", running.list_all_resource_templates())
            .await
            .expect("resources/templates/list");
        let templates: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
        assert_eq!(templates, ["mock://echo/{text}"], "{era:?}");

        assert_eq!(read(&running, HELLO).await, "hello");
        assert_eq!(read(&running, "mock://echo/hi%20there").await, "hi there");
        let before: u64 = read(&running, COUNTER).await.parse().expect("a number");
        let bumped = server.faults().bump_counter().await;
        assert_eq!(bumped, before + 1);
        assert_eq!(read(&running, COUNTER).await, bumped.to_string(), "{era:?}");

        let missing = running.read_resource(ReadResourceRequestParams::new("mock://nope"));
        let missing = within("read a missing resource", missing).await;
        // rmcp maps resource-not-found to invalid-params for 2026-07-28 peers.
        let expected = match era {
            Era::Legacy => ErrorCode::RESOURCE_NOT_FOUND,
            Era::Modern => ErrorCode::INVALID_PARAMS,
        };
        assert_eq!(error_code(missing), expected, "{era:?}");
    }
    assert_eq!(server.faults().state().await.counter, 2);
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn a_legacy_http_subscriber_gets_resources_updated_for_each_bump_until_it_unsubscribes() {
    let server = start().await;
    let (recorder, mut notes) = Recorder::new();
    let running = connect_http(&server.http_url(), Era::Legacy, recorder).await;
    // Notifications outside a request go on the session's standalone GET stream.
    within("standalone stream", server.faults().wait_streams(1)).await;

    for uri in [COUNTER, COUNTER, HELLO] {
        let subscribed = running.subscribe(SubscribeRequestParams::new(uri));
        within("subscribe", subscribed).await.expect("subscribed");
    }
    let state = server.faults().state().await;
    assert_eq!(state.resource_subscriptions, 2, "one per (session, URI)");
    assert_eq!(whoami(&running).await.resource_subscriptions, 2);

    assert_eq!(server.faults().bump_counter().await, 1);
    assert_eq!(notes.updated().await, COUNTER);
    assert_eq!(read(&running, COUNTER).await, "1");
    assert_eq!(bump_tool(&running).await, "2");
    assert_eq!(notes.updated().await, COUNTER);
    assert_eq!(read(&running, COUNTER).await, "2");
    let (status, bumped) = admin(&server, "bump-counter", json!({})).await;
    assert!(status.is_success(), "{status}");
    assert_eq!(bumped, json!({"ok": true, "counter": 3}));
    assert_eq!(notes.updated().await, COUNTER);
    let state = mock_state(&server).await;
    assert_eq!(state["counter"], json!(3), "{state}");
    assert_eq!(state["resource_subscriptions"], json!(2), "{state}");

    let unsubscribed = running.unsubscribe(UnsubscribeRequestParams::new(COUNTER));
    within("unsubscribe", unsubscribed)
        .await
        .expect("unsubscribed");
    assert_eq!(server.faults().state().await.resource_subscriptions, 1);
    let missing = running.subscribe(SubscribeRequestParams::new("mock://nope"));
    let missing = within("subscribe to a missing resource", missing).await;
    assert_eq!(error_code(missing), ErrorCode::RESOURCE_NOT_FOUND);

    // A closed session's subscriptions no longer count.
    within("cancel", running.cancel()).await.expect("closed");
    state_until(
        &server,
        "subscriptions of the closed session gone",
        |state| state.resource_subscriptions == 0,
    )
    .await;
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn a_legacy_stdio_subscriber_gets_resources_updated_when_the_bump_tool_runs() {
    let mut child = spawn_stdio(&[]);
    let (recorder, mut notes) = Recorder::new();
    let running = connect_stdio(&mut child, Era::Legacy, recorder).await;
    let subscribed = running.subscribe(SubscribeRequestParams::new(COUNTER));
    within("subscribe", subscribed).await.expect("subscribed");
    assert_eq!(bump_tool(&running).await, "1");
    assert_eq!(notes.updated().await, COUNTER);
    let who = whoami(&running).await;
    assert_eq!((who.counter, who.resource_subscriptions), (1, 1), "{who:?}");
}

#[tokio::test]
async fn an_http_listen_filter_naming_the_counter_gets_resources_updated() {
    let server = start().await;
    let running = connect_http(&server.http_url(), Era::Modern, Asker::mute()).await;
    let mut first = listen_counter(&running).await;
    // Right after the acknowledgment, maybe before the server registered the subscription:
    // the update must not slip past it.
    server.faults().bump_counter().await;
    expect_updated(&mut first, COUNTER).await;
    state_until(&server, "the subscription counted", |state| {
        state.resource_subscriptions == 1
    })
    .await;
    within("cancel", first.cancel()).await.expect("cancelled");
    state_until(&server, "the cancelled subscription gone", |state| {
        state.resource_subscriptions == 0
    })
    .await;

    let mut second = listen_counter(&running).await;
    state_until(&server, "the new subscription counted", |state| {
        state.resource_subscriptions == 1
    })
    .await;
    assert_eq!(bump_tool(&running).await, "2");
    expect_updated(&mut second, COUNTER).await;
    assert_eq!(read(&running, COUNTER).await, "2");
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn a_stdio_listen_filter_naming_the_counter_gets_resources_updated() {
    let mut child = spawn_stdio(&[]);
    let running = connect_stdio(&mut child, Era::Modern, Asker::mute()).await;
    let mut subscription = listen_counter(&running).await;
    assert_eq!(bump_tool(&running).await, "1");
    expect_updated(&mut subscription, COUNTER).await;
    // A notification went out, so the subscription is registered by now.
    let who = whoami(&running).await;
    assert_eq!((who.counter, who.resource_subscriptions), (1, 1), "{who:?}");
}
