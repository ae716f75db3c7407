//! A request in a replica's hands when the replica is killed, as a host behind nginx sees it: the
//! response's head and a first event with an id came out before the replica waited on anything,
//! so the host asks for the rest and is answered, never left with nginx's `502`.

use serde_json::json;

use super::{
    nginx::Nginx,
    redis::Redis,
    replica::Replica,
    takeover::{first_event_id, wait_records},
};
use crate::{
    common::{LIMIT, process::MockProcess},
    serve::raw::Raw,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_on_a_replica_killed_while_taking_its_session_over_is_answered_may_have_run_through_nginx()
 {
    let dir = tempfile::tempdir().expect("temp dir");
    let redis = Redis::start(dir.path()).await;
    let mock = MockProcess::start("http").await;
    // The upstream is each host session's own: a replica that takes a session over starts it
    // again before it serves the session's request, and waits for it (up to a minute here).
    let own = ["--per-host", "mock", "--startup-wait", "60s"];
    let mut a = Replica::start_with(&mock.url(), &redis.url(), &own).await;
    let mut b = Replica::start_with(&mock.url(), &redis.url(), &own).await;
    let nginx = Nginx::start(dir.path(), &[a.port, b.port]).await;
    let id = Raw::new(&a.url()).session().await;
    wait_records(&redis, 1).await;
    let initializes = |methods: std::collections::BTreeMap<String, u64>| {
        methods.get("initialize").copied().unwrap_or(0)
    };
    let before = initializes(mock.try_methods().await.expect("the mock's counts"));

    // A is gone and the upstream answers nothing: the call goes to B, which takes the session
    // over and then waits, starting the session's upstream again.
    a.kill().await;
    mock.admin("hang", json!({})).await;
    let host = Raw::new(&nginx.url());
    let call = json!({"jsonrpc": "2.0", "id": 41, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "in flight"}}});
    let session = id.clone();
    let posted = tokio::spawn(async move { host.post(&call, &host.in_session(&session)).await });
    // The upstream has B's initialize: B holds the call, in the middle of the take-over.
    mock.wait_requests("initialize", before + 1).await;
    b.kill().await;

    let response = tokio::time::timeout(LIMIT, posted)
        .await
        .expect("nginx answers in time")
        .expect("the call's task");
    assert_eq!(
        response.status(),
        reqwest::StatusCode::OK,
        "the call in flight on the killed replica got no stream to resume"
    );
    let last_event_id = first_event_id(response).await;

    // The host asks for the rest through nginx, which now has A, started again.
    mock.admin("unhang", json!({})).await;
    a.restart().await;
    super::resumed_as_may_have_run(&nginx.url(), &id, &last_event_id, 41).await;
    // It had not run: B died before the call reached the upstream (the answer says "may").
    let methods = mock.try_methods().await.expect("the mock's counts");
    assert_eq!(methods.get("tools/call"), None, "{methods:?}");
    nginx.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_call_in_flight_on_a_killed_replica_gets_a_stream_that_breaks_never_a_502() {
    let dir = tempfile::tempdir().expect("temp dir");
    let redis = Redis::start(dir.path()).await;
    let mock = MockProcess::start("http").await;
    let mut a = Replica::start(&mock.url(), &redis.url()).await;
    let mut b = Replica::start(&mock.url(), &redis.url()).await;
    let nginx = Nginx::start(dir.path(), &[a.port, b.port]).await;

    // A call that would take a minute, on whichever replica nginx gave it; once the upstream has
    // it, both replicas are killed.
    let host = Raw::new(&nginx.url());
    let posted = tokio::spawn(async move {
        let call = json!({"name": "peek", "arguments": {"ms": 60_000}});
        host.modern(9, "tools/call", call).await
    });
    mock.wait_requests("tools/call", 1).await;
    a.kill().await;
    b.kill().await;

    let response = tokio::time::timeout(LIMIT, posted)
        .await
        .expect("nginx answers in time")
        .expect("the call's task");
    assert_eq!(
        response.status(),
        reqwest::StatusCode::OK,
        "the call in flight on the killed replica got nginx's answer, not a stream"
    );
    // The stream breaks without an answer: a 2026-07-28 host sends the request again.
    let read = async {
        use futures::StreamExt;
        let (mut seen, mut body) = (String::new(), response.bytes_stream());
        while let Some(Ok(chunk)) = body.next().await {
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        seen
    };
    let seen = tokio::time::timeout(LIMIT, read)
        .await
        .expect("the stream ends in time");
    assert!(!seen.contains("\"id\":9"), "{seen}");
    nginx.stop().await;
}
