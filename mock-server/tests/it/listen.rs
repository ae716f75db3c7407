//! `subscriptions/listen` (2026-07-28): tools `list_changed` reaches every subscription, and
//! `end_listens` ends them with their final result (graceful) or without it (abrupt), over
//! Streamable HTTP and stdio.

use crate::common;
use crate::modern;
use crate::raw;

use common::within;
use mcp_mock_server::{MockOptions, MockServer, MockTransport, SetTools};
use modern::{Asker, Era, connect_http, connect_stdio, listen_tools, params, spawn_stdio};
use raw::admin;
use rmcp::model::{ErrorCode, ServerNotification};
use rmcp::service::{ServiceError, Subscription, SubscriptionEnd};
use serde_json::json;

async fn start() -> MockServer {
    let opts = MockOptions {
        transport: MockTransport::Http,
        ..MockOptions::default()
    };
    within("start", MockServer::start(opts))
        .await
        .expect("start")
}

fn add(name: &str) -> SetTools {
    SetTools {
        add: vec![name.to_owned()],
        ..SetTools::default()
    }
}

async fn expect_list_changed(subscription: &mut Subscription) {
    let next = within("a notification", subscription.next()).await;
    match next {
        Ok(Some(ServerNotification::ToolListChangedNotification(_))) => {}
        other => panic!("expected tools/list_changed, got {other:?}"),
    }
}

async fn expect_end(subscription: &mut Subscription) -> Result<(), ServiceError> {
    let next = within("the end of the subscription", subscription.next()).await;
    match next {
        Ok(None) => Ok(()),
        Ok(Some(notification)) => panic!("expected the end, got {notification:?}"),
        Err(error) => Err(error),
    }
}

#[tokio::test]
async fn http_subscriptions_get_list_changed_from_the_faults_and_from_the_tool() {
    let server = start().await;
    let running = connect_http(&server.http_url(), Era::Modern, Asker::mute()).await;
    let mut first = listen_tools(&running).await;
    let mut second = listen_tools(&running).await;
    assert_eq!(first.acknowledged().tools_list_changed, Some(true));

    // Right after the acknowledgment: the change must not slip past a subscription whose
    // `listen` has not registered yet.
    server.faults().set_tools(add("one")).await;
    expect_list_changed(&mut first).await;
    expect_list_changed(&mut second).await;

    let changed = running.call_tool(params("set_tools", json!({"remove": ["one"]})));
    within("set_tools", changed).await.expect("set_tools");
    expect_list_changed(&mut first).await;
    expect_list_changed(&mut second).await;
    assert_eq!(server.faults().state().await.listens, 2);
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn http_end_listens_graceful_sends_the_final_result() {
    let server = start().await;
    let running = connect_http(&server.http_url(), Era::Modern, Asker::mute()).await;
    let mut subscription = listen_tools(&running).await;
    server.faults().end_listens(true);
    expect_end(&mut subscription).await.expect("a clean end");
    assert!(
        matches!(subscription.end(), Some(SubscriptionEnd::Graceful(_))),
        "{:?}",
        subscription.end()
    );
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn http_end_listens_abrupt_cuts_the_stream_without_a_result() {
    let server = start().await;
    let running = connect_http(&server.http_url(), Era::Modern, Asker::mute()).await;
    let mut subscription = listen_tools(&running).await;
    let (status, _) = admin(&server, "end-listens", json!({"graceful": false})).await;
    assert!(status.is_success());
    expect_end(&mut subscription)
        .await
        .expect("a cut stream is an end, not an error");
    assert_eq!(subscription.end(), Some(&SubscriptionEnd::Abrupt));

    // Only the listen streams were cut: the client and the server go on, and a new
    // subscription works.
    let mut again = listen_tools(&running).await;
    server.faults().set_tools(add("after")).await;
    expect_list_changed(&mut again).await;
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn stdio_subscriptions_get_list_changed_and_end_both_ways() {
    let mut child = spawn_stdio(&[]);
    let running = connect_stdio(&mut child, Era::Modern, Asker::mute()).await;
    let mut subscription = listen_tools(&running).await;
    let changed = running.call_tool(params("set_tools", json!({"add": ["x"]})));
    within("set_tools", changed).await.expect("set_tools");
    expect_list_changed(&mut subscription).await;

    let end = running.call_tool(params("end_listens", json!({"graceful": true})));
    within("end_listens", end).await.expect("end_listens");
    expect_end(&mut subscription).await.expect("a clean end");
    assert!(matches!(
        subscription.end(),
        Some(SubscriptionEnd::Graceful(_))
    ));

    // stdio has no stream to cut: the abrupt end answers the listen request with an error.
    let mut subscription = listen_tools(&running).await;
    let end = running.call_tool(params("end_listens", json!({"graceful": false})));
    within("end_listens", end).await.expect("end_listens");
    match expect_end(&mut subscription).await {
        Err(ServiceError::McpError(error)) => assert_eq!(error.code, ErrorCode::INTERNAL_ERROR),
        other => panic!("expected an error answer, got {other:?}"),
    }
    assert_eq!(subscription.end(), Some(&SubscriptionEnd::Abrupt));
}
