//! The origin set against the mock's h2c: its bounds and its memory, which the session-level
//! tests (`tests/it/http2.rs`) do not reach.

use std::time::Duration;

use mcp_mock_server::{MockOptions, MockServer, MockTransport};

use super::{Http2Error, SendError, origin_set, set::MAX_ATTEMPTS};
use crate::config::Http2;

const LIMIT: Duration = Duration::from_secs(20);

async fn mock(http1_only: bool) -> MockServer {
    let options = MockOptions {
        transport: MockTransport::Http,
        http1_only,
        ..Default::default()
    };
    MockServer::start(options).await.expect("mock starts")
}

/// A `DELETE` of no session: the mock answers it at once, whatever it is.
fn request(server: &MockServer) -> impl Fn() -> reqwest::RequestBuilder {
    let url = server.http_url();
    move || reqwest::Client::new().delete(&url)
}

#[tokio::test]
async fn a_request_refused_every_time_fails_as_never_ran_after_the_last_attempt() {
    let server = mock(false).await;
    let set = origin_set(&server.http_url().parse().unwrap(), Http2::PriorKnowledge).unwrap();
    server.faults().refuse_streams(MAX_ATTEMPTS);
    let sent = tokio::time::timeout(LIMIT, set.send(request(&server))).await;
    match sent.expect("within the limit") {
        Err(SendError::Http2(error @ Http2Error::Unprocessed { attempts, .. })) => {
            assert_eq!(attempts, MAX_ATTEMPTS);
            assert!(error.never_ran());
        }
        other => panic!("not refused: {other:?}"),
    }
    assert_eq!(
        server.faults().wire().refused_streams,
        u64::from(MAX_ATTEMPTS)
    );
    // The next one goes through on the same connection.
    let answer = tokio::time::timeout(LIMIT, set.send(request(&server))).await;
    assert!(matches!(answer.expect("within the limit"), Ok(Some(_))));
    assert_eq!((server.faults().wire().accepted, set.connections()), (1, 1));
}

#[tokio::test]
async fn an_origin_found_to_speak_http1_is_not_asked_again() {
    let server = mock(true).await;
    let set = origin_set(&server.http_url().parse().unwrap(), Http2::PriorKnowledge).unwrap();
    for _ in 0..3 {
        let sent = tokio::time::timeout(LIMIT, set.send(request(&server))).await;
        assert!(matches!(sent.expect("within the limit"), Ok(None)));
    }
    assert_eq!(
        server.faults().wire().accepted,
        1,
        "one preface, then no more"
    );
}

#[tokio::test]
async fn sessions_of_one_origin_get_one_set_and_other_modes_none() {
    let url = "http://127.0.0.1:9/mcp".parse().unwrap();
    let one = origin_set(&url, Http2::PriorKnowledge).unwrap();
    let two = origin_set(&url, Http2::PriorKnowledge).unwrap();
    assert!(std::sync::Arc::ptr_eq(&one, &two));
    assert!(
        origin_set(&url, Http2::Auto).is_none(),
        "h2c only by prior knowledge"
    );
    assert!(origin_set(&url, Http2::Off).is_none());
    let tls = "https://127.0.0.1:9/mcp".parse().unwrap();
    assert!(origin_set(&tls, Http2::Auto).is_some());
}
