//! The origin set's size: the process's descriptor budget, a set at its ceiling, and which
//! connection a request goes on once streams end on older ones.

use std::{sync::Arc, time::Duration};

use mcp_mock_server::{MockOptions, MockServer, MockTransport};
use tokio::task::JoinHandle;

use super::LIMIT;
use crate::transport::http2::{OriginSet, conn::Target};

/// The mock, allowing `streams` concurrent streams per HTTP/2 connection.
async fn mock(streams: u32) -> MockServer {
    let options = MockOptions {
        transport: MockTransport::Http,
        h2_max_streams: Some(streams),
        ..Default::default()
    };
    MockServer::start(options).await.expect("mock starts")
}

fn target(server: &MockServer) -> Target {
    let url: url::Url = server.http_url().parse().unwrap();
    Target {
        host: "127.0.0.1".to_owned(),
        port: url.port().expect("the mock's port"),
        tls: false,
        ping: None,
    }
}

/// Sends a `DELETE` of no session (the mock answers it at once, unless hung) through `set`;
/// true when it was answered over HTTP/2. The answer is dropped, and its stream with it.
fn send(set: &Arc<OriginSet>, server: &MockServer) -> JoinHandle<bool> {
    let (set, url) = (set.clone(), server.http_url());
    let make = move || reqwest::Client::new().delete(&url);
    tokio::spawn(async move { matches!(set.send(make).await, Ok(Some(_))) })
}

async fn answered(sends: Vec<JoinHandle<bool>>) {
    for send in sends {
        let sent = tokio::time::timeout(LIMIT, send)
            .await
            .expect("answered in time");
        assert!(sent.expect("the task ends"), "answered over HTTP/2");
    }
}

async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + LIMIT;
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: not within {LIMIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[test]
fn the_process_budget_is_half_the_soft_limit_left_after_the_reserve() {
    use crate::transport::http2::budget::{PER_ORIGIN, RESERVE, share};
    assert_eq!(share(1024), 384);
    assert_eq!(share(20_000), 9_872);
    assert_eq!(
        share(RESERVE as u64),
        0,
        "the origin's first connection only"
    );
    assert_eq!(share(0), 0);
    assert!(share(u64::MAX) > PER_ORIGIN);
}

/// Past its budget (a ceiling of two connections, the mock allowing two streams on each) the
/// set opens no third connection: the requests past the four streams go on the least busy
/// connection, hyper queues them there, and they are answered as streams end.
#[tokio::test]
async fn past_the_budget_requests_queue_on_the_connections_open_and_are_answered() {
    let server = mock(2).await;
    let set = Arc::new(OriginSet::with_ceiling(target(&server), 2));
    // Every request is held at the server until `unhang`, so the four streams stay taken.
    server.faults().hang();
    let sends: Vec<_> = (0..6).map(|_| send(&set, &server)).collect();
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let held = server.faults().requests().len();
        if held == 4 && set.past_budget_count() == 2 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not within {LIMIT:?}: {held} requests at the server, {} past the budget",
            set.past_budget_count()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    server.faults().unhang();
    answered(sends).await;
    let wire = server.faults().wire();
    assert_eq!(wire.http2_connections, 2, "{wire:?}");
    assert_eq!(wire.http2_requests, 6, "{wire:?}");
    assert_eq!(set.connections(), 2);
}

/// Once the streams on the older connections end, new requests go there: the set looks again
/// from the oldest (it had passed them over while they were full) and opens no other.
#[tokio::test]
async fn streams_ended_on_older_connections_are_taken_before_another_opens() {
    let server = mock(1).await;
    let set = Arc::new(OriginSet::new(target(&server)));
    let at_server = |n: usize| {
        let faults = server.faults().clone();
        move || faults.requests().len() == n
    };
    // One stream per connection: two requests held at the server take two connections.
    server.faults().hang();
    let held: Vec<_> = (0..2).map(|_| send(&set, &server)).collect();
    until("two at the server", at_server(2)).await;
    server.faults().unhang();
    answered(held).await;
    // Both streams ended; two more, held one after the other, take both connections again.
    server.faults().hang();
    let first = send(&set, &server);
    until("the third at the server", at_server(3)).await;
    let second = send(&set, &server);
    until("the fourth at the server", at_server(4)).await;
    server.faults().unhang();
    answered(vec![first, second]).await;
    let wire = server.faults().wire();
    assert_eq!(
        (wire.http2_connections, wire.http2_requests),
        (2, 4),
        "{wire:?}"
    );
    assert_eq!(set.connections(), 2);
}
