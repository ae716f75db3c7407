//! A shared upstream's notifications fan out to the hosts they concern: a log message to the
//! hosts whose level admits it, a resource update to its subscribers; the upstream stays
//! subscribed while any host is.

// Logging is deprecated by SEP-2577; hosts of the session era still set levels.
#![allow(deprecated)]

use rmcp::model::{
    LoggingLevel, SetLevelRequestParams, SubscribeRequestParams, UnsubscribeRequestParams,
};
use serde_json::json;

use super::gateway::{FAST, Gateway, HttpHost};
use crate::common::{LIMIT, host::text, process::MockProcess};
use mcp_mock_server::Whoami;

async fn gateway_2025(mock: &MockProcess) -> Gateway {
    let url = mock.url();
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend(["--name", "mock", "--protocol", "2025-11-25", "--url", &url]);
    Gateway::start(&args).await
}

async fn set_level(host: &HttpHost, level: LoggingLevel) {
    let set = host
        .session
        .peer()
        .set_level(SetLevelRequestParams::new(level));
    tokio::time::timeout(LIMIT, set)
        .await
        .expect("answered in time")
        .expect("logging/setLevel");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_message_reaches_only_the_hosts_whose_level_admits_it() {
    let mock = MockProcess::start("http").await;
    let gateway = gateway_2025(&mock).await;
    let (quiet, chatty) = (gateway.host().await, gateway.host().await);
    set_level(&quiet, LoggingLevel::Error).await;
    set_level(&chatty, LoggingLevel::Debug).await;
    let info = json!({"level": "info", "message": "for the chatty"});
    let logged = quiet.call("log", info).await;
    assert_eq!(
        text(&logged),
        "logged info: for the chatty",
        "the upstream got the most verbose level"
    );
    chatty
        .wait_told("the info message", |t| {
            t.logs.iter().any(|l| l.data == json!("for the chatty"))
        })
        .await;
    let error = json!({"level": "error", "message": "for both"});
    quiet.call("log", error).await;
    quiet
        .wait_told("the error message", |t| {
            t.logs.iter().any(|l| l.data == json!("for both"))
        })
        .await;
    assert!(
        quiet.told(|t| t.logs.iter().all(|l| l.data != json!("for the chatty"))),
        "a host set to error never hears info"
    );
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shared_upstream_stays_subscribed_while_any_host_is() {
    let mock = MockProcess::start("http").await;
    let gateway = gateway_2025(&mock).await;
    let (a, b) = (gateway.host().await, gateway.host().await);
    let counter = "mock://counter";
    for host in [&a, &b] {
        let subscribe = host
            .session
            .peer()
            .subscribe(SubscribeRequestParams::new(counter));
        tokio::time::timeout(LIMIT, subscribe)
            .await
            .expect("in time")
            .expect("subscribed");
    }
    a.call("bump", json!({})).await;
    for host in [&a, &b] {
        host.wait_told("the first update", |t| t.updated.len() == 1)
            .await;
    }
    let unsubscribe = a
        .session
        .peer()
        .unsubscribe(UnsubscribeRequestParams::new(counter));
    tokio::time::timeout(LIMIT, unsubscribe)
        .await
        .expect("in time")
        .expect("unsubscribed");
    a.call("bump", json!({})).await;
    b.wait_told("the second update", |t| t.updated.len() == 2)
        .await;
    assert_eq!(a.told(|t| t.updated.len()), 1, "a unsubscribed");
    let whoami = Whoami::from_result(&a.call("whoami", json!({})).await).expect("whoami");
    assert_eq!(
        whoami.resource_subscriptions, 1,
        "one upstream subscription for two hosts"
    );
    // b's session ends: the last subscriber leaves, and the upstream is unsubscribed.
    b.close().await;
    let released = tokio::time::timeout(LIMIT, async {
        loop {
            let whoami = Whoami::from_result(&a.call("whoami", json!({})).await).expect("whoami");
            if whoami.resource_subscriptions == 0 {
                return;
            }
        }
    })
    .await;
    assert!(
        released.is_ok(),
        "the upstream stayed subscribed after its last host left"
    );
    gateway.stop().await;
}
