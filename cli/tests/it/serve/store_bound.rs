//! The Redis host-session store's bound when Redis does not answer: a Redis that accepts
//! connections and never replies (a real socket on 127.0.0.1 that reads and says nothing).
//! No operation waits past the store's `wait`; the core's calls never wait at all.

#![allow(deprecated)]

use std::time::Duration;

use mcp_resilient_gateway::state::{HostStore, RedisHostStore, RedisStoreOptions};
use rmcp::model::LoggingLevel;

use super::{gateway::Gateway, raw::Raw};
use crate::common::{LIMIT, process::MockProcess};

/// Accepts connections and reads from them forever, answering nothing.
async fn silent_redis() -> (u16, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("address").port();
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    (port, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_redis_costs_a_claim_at_most_its_wait_and_the_core_nothing() {
    let (port, silent) = silent_redis().await;
    let mut options = RedisStoreOptions::default();
    options.wait = Duration::from_millis(200);
    options.retry = Duration::from_millis(50);
    let store = RedisHostStore::open(&format!("redis://127.0.0.1:{port}"), options.clone())
        .expect("a store, though Redis says nothing");

    // The core's calls: 64 sessions, each changed 100 times and shared, while nothing answers.
    for n in 0..64 {
        let key = format!("s{n}");
        for _ in 0..100 {
            store.update(&key, &mut |s| s.level = Some(LoggingLevel::Debug));
        }
        // Sharing waits for the record, bounded: the host's `initialize` waits on it.
        tokio::time::timeout(options.wait * 5, store.share(&key))
            .await
            .expect("a share ends within its bound");
        let mut seen = false;
        store.view(&key, &mut |s| seen = s.is_some());
        assert!(seen);
    }
    assert_eq!(store.len(), 64);

    // A claim gives up within its wait (the deadline here is a generous multiple of it), and
    // says it could not tell, not that the session is unknown.
    let claim = tokio::time::timeout(options.wait * 5, store.claim("elsewhere")).await;
    let claim = claim.expect("the claim ended within its bound");
    assert!(
        claim
            .as_ref()
            .is_err_and(|e| e.detail.contains("did not answer")),
        "{claim:?}"
    );

    // The writer keeps one pending operation per session, however many changes were made.
    let wait = async {
        while !store.status().degraded {
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(LIMIT, wait).await.expect("degraded");
    let status = store.status();
    assert!(status.pending <= 64, "{status:?}");
    assert!(status.failures >= 1, "{status:?}");
    silent.abort();
}

/// A host whose session this replica does not hold, while the store cannot answer: the front
/// says `503` with `Retry-After` (nothing ran: the host keeps its session and asks again, and
/// a balancer may send it to another replica), not `404` (which tells a host to start a new
/// session, losing what it had), nor `500`. Either front.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_the_silent_store_cannot_look_up_is_a_503_not_a_404() {
    let (port, silent) = silent_redis().await;
    let mock = MockProcess::start("http").await;
    let store = format!("redis://127.0.0.1:{port}");
    let url = mock.url();
    let gateway = Gateway::start(&[
        "--store",
        &store,
        "--name",
        "mock",
        "--protocol",
        "2025-11-25",
        "--url",
        &url,
    ])
    .await;
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "x"}}});
    let answer = tokio::time::timeout(
        LIMIT,
        Raw::new(&gateway.url()).post(&call, &[("mcp-session-id", "held-elsewhere")]),
    )
    .await
    .expect("answered within the claim's bound");
    let again = answer.headers().get("retry-after").cloned();
    assert_eq!(
        answer.status(),
        reqwest::StatusCode::SERVICE_UNAVAILABLE,
        "{:?}",
        answer.text().await
    );
    assert_eq!(again.as_ref().and_then(|v| v.to_str().ok()), Some("1"));
    gateway.stop().await;
    silent.abort();
}
