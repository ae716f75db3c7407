//! The fleet as a host sees it: two replicas behind nginx (or HAProxy), one killed with SIGKILL
//! and then the other, and the host's session goes on with what it had set up.

#![allow(deprecated)]

use rmcp::model::{LoggingLevel, SetLevelRequestParams, SubscribeRequestParams};
use serde_json::json;

use super::{
    front::{Balancer, Front},
    redis::Redis,
    replica::Replica,
};
use crate::{
    common::{LIMIT, host::text, process::MockProcess},
    serve::gateway::HttpHost,
};

/// Waits (bounded) until Redis holds `count` host-session records.
pub async fn wait_records(redis: &Redis, count: usize) {
    let wait = async {
        while redis.host_keys().await.len() != count {
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(LIMIT, wait)
        .await
        .unwrap_or_else(|_| panic!("{count} host-session records not in Redis within {LIMIT:?}"));
}

/// The replica part of the only record's owner (`<replica>/<n>`).
async fn owner_replica(redis: &Redis) -> String {
    let key = redis.host_keys().await[0].clone();
    let reply = redis.command(&["HGET", &key, "owner"]).await;
    let value = reply.lines().nth(1).unwrap_or_default().to_owned();
    value.split('/').next().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_session_survives_sigkill_of_the_replica_it_was_on_with_its_subscription_and_level()
{
    survives_sigkill(Balancer::Nginx).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_haproxy_a_host_session_survives_sigkill_of_the_replica_it_was_on() {
    survives_sigkill(Balancer::HaProxy).await;
}

async fn survives_sigkill(balancer: Balancer) {
    let dir = tempfile::tempdir().expect("temp dir");
    let redis = Redis::start(dir.path()).await;
    let mock = MockProcess::start("http").await;
    let mut a = Replica::start(&mock.url(), &redis.url()).await;
    let mut b = Replica::start(&mock.url(), &redis.url()).await;
    let front = Front::start(balancer, dir.path(), &[a.port, b.port]).await;

    let host = HttpHost::connect(&front.url(), None).await;
    assert_eq!(
        text(&host.call("echo", json!({"text": "before"})).await),
        "before"
    );
    let subscribe = host
        .session
        .subscribe(SubscribeRequestParams::new("mock://counter"));
    tokio::time::timeout(LIMIT, subscribe)
        .await
        .expect("subscribe answered in time")
        .expect("resources/subscribe");
    let level = host
        .session
        .set_level(SetLevelRequestParams::new(LoggingLevel::Debug));
    tokio::time::timeout(LIMIT, level)
        .await
        .expect("setLevel answered in time")
        .expect("logging/setLevel");
    wait_records(&redis, 1).await;
    // Written behind: what the host set is in Redis a moment after it was answered.
    let written = async {
        loop {
            let key = &redis.host_keys().await[0];
            let state = redis.command(&["HGET", key, "state"]).await;
            if state.contains("mock://counter") && state.contains("debug") {
                return;
            }
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(LIMIT, written)
        .await
        .expect("the subscription and level were written in time");

    // Whichever replica held it, the second kill is of the one it is on.
    a.kill().await;
    assert_eq!(
        text(&host.call("echo", json!({"text": "a gone"})).await),
        "a gone"
    );
    a.restart().await;
    b.kill().await;
    assert_eq!(
        text(&host.call("echo", json!({"text": "b gone"})).await),
        "b gone"
    );

    // It moved at least once, and where it landed its subscription and level were set up again.
    mock.wait_requests("resources/subscribe", 2).await;
    mock.wait_requests("logging/setLevel", 2).await;
    assert!(
        !host.session.is_closed(),
        "the host's session is the same one"
    );
    assert_eq!(redis.host_keys().await.len(), 1, "one record, still");
    front.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_asked_of_another_replica_is_taken_over_fenced_on_the_first_and_deleted_by_its_host()
 {
    let dir = tempfile::tempdir().expect("temp dir");
    let redis = Redis::start(dir.path()).await;
    let mock = MockProcess::start("http").await;
    let a = Replica::start(&mock.url(), &redis.url()).await;
    let b = Replica::start(&mock.url(), &redis.url()).await;
    let raw_a = crate::serve::raw::Raw::new(&a.url());
    let id = raw_a.session().await;
    wait_records(&redis, 1).await;
    // The session id lets a host in: Redis holds its hash, never the id.
    let stored = redis.everything().await;
    assert!(stored.contains("mcp-resilient:host:"), "{stored}");
    assert!(
        !stored.contains(&id),
        "the session id is in Redis: {stored}"
    );

    // No balancer: the host asks B, which never saw the session.
    let raw_b = crate::serve::raw::Raw::new(&b.url());
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "moved"}}});
    let response = raw_b.post(&call, &raw_b.in_session(&id)).await;
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    let reply = crate::serve::raw::answer(response, 7).await;
    assert_eq!(reply["result"]["content"][0]["text"], "moved", "{reply}");

    // A still holds its old copy. Its next write is fenced, and from then on A lets its copy go
    // and claims the session back from Redis rather than serve it stale.
    let b_owner = owner_replica(&redis).await;
    let level = json!({"jsonrpc": "2.0", "id": 8, "method": "logging/setLevel",
        "params": {"level": "error"}});
    let back = async {
        loop {
            let response = raw_a.post(&level, &raw_a.in_session(&id)).await;
            assert_eq!(response.status(), reqwest::StatusCode::OK);
            let _ = crate::serve::raw::messages(response).await;
            if owner_replica(&redis).await != b_owner {
                return;
            }
        }
    };
    tokio::time::timeout(LIMIT, back)
        .await
        .expect("A claimed the session back after its write was fenced");

    // The host ends it where it is now: the record goes, whoever wrote it.
    let deleted = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client")
        .delete(a.url())
        .header("mcp-session-id", &id)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .expect("DELETE");
    assert!(deleted.status().is_success(), "{}", deleted.status());
    wait_records(&redis, 0).await;
    drop(b);
}

/// Reads a request's SSE stream until its first whole `id:` line (rmcp's priming event comes
/// first) and returns the id.
pub async fn first_event_id(response: reqwest::Response) -> String {
    use futures::StreamExt;
    let mut seen = String::new();
    let mut body = response.bytes_stream();
    let found = async {
        while let Some(chunk) = body.next().await {
            seen.push_str(&String::from_utf8_lossy(&chunk.expect("a chunk")));
            let whole = seen.rsplit_once('\n').map_or("", |(lines, _)| lines);
            if let Some(id) = whole.lines().find_map(|line| line.strip_prefix("id:")) {
                return id.trim().to_owned();
            }
        }
        panic!("the stream ended without an event id: {seen}");
    };
    tokio::time::timeout(LIMIT, found)
        .await
        .expect("an event id in time")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_in_flight_on_a_killed_replica_is_answered_may_have_run_when_its_host_asks_another()
{
    let dir = tempfile::tempdir().expect("temp dir");
    let redis = Redis::start(dir.path()).await;
    let mock = MockProcess::start("http").await;
    let mut a = Replica::start(&mock.url(), &redis.url()).await;
    let b = Replica::start(&mock.url(), &redis.url()).await;
    let raw_a = crate::serve::raw::Raw::new(&a.url());
    let id = raw_a.session().await;
    wait_records(&redis, 1).await;

    // A call that would take a minute, on A; the host has read its stream's first event.
    let call = json!({"jsonrpc": "2.0", "id": 41, "method": "tools/call",
        "params": {"name": "peek", "arguments": {"ms": 60_000}}});
    let response = raw_a.post(&call, &raw_a.in_session(&id)).await;
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    let last_event_id = first_event_id(response).await;
    a.kill().await;

    // The host asks for the rest where the balancer sends it now: B, which never had the stream.
    super::resumed_as_may_have_run(&b.url(), &id, &last_event_id, 41).await;
    drop(b);
}
