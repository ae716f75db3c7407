//! The wire under the routes: h2c beside HTTP/1.1, and its faults (a low stream limit,
//! `GOAWAY`, refused streams, HTTP/1.1 alone), spoken to with the `h2` crate's own client.

use crate::common::within;

use bytes::Bytes;
use h2::client::SendRequest;
use hyper::{Method, Request};
use mcp_mock_server::{MockOptions, MockServer, MockTransport};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

async fn start(http1_only: bool, h2_max_streams: Option<u32>) -> MockServer {
    let opts = MockOptions {
        transport: MockTransport::Http,
        http1_only,
        h2_max_streams,
        ..MockOptions::default()
    };
    within("start", MockServer::start(opts))
        .await
        .expect("start")
}

/// An h2c connection by prior knowledge, and the task that drives it (it returns how the
/// connection ended).
async fn connect(server: &MockServer) -> (SendRequest<Bytes>, JoinHandle<Result<(), h2::Error>>) {
    let tcp = within("connect", TcpStream::connect(server.addr()))
        .await
        .expect("tcp");
    let (send, connection) = within("handshake", h2::client::handshake(tcp))
        .await
        .expect("h2 handshake");
    (send, tokio::spawn(connection))
}

/// POSTs `initialize` on `send`; the answer's status, or the stream's error.
async fn initialize(server: &MockServer, send: &mut SendRequest<Bytes>) -> Result<u16, h2::Error> {
    let request = Request::builder()
        .method(Method::POST)
        .uri(server.http_url())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(())
        .expect("request");
    let mut ready = within("ready", send.clone().ready()).await?;
    let (answer, mut body) = ready.send_request(request, false)?;
    body.send_data(Bytes::from_static(INITIALIZE.as_bytes()), true)?;
    let answer = within("answer", answer).await?;
    Ok(answer.status().as_u16())
}

#[tokio::test]
async fn h2c_is_served_beside_http1_and_counted() {
    let server = start(false, None).await;
    let (mut send, _driver) = connect(&server).await;
    assert_eq!(initialize(&server, &mut send).await.expect("answered"), 200);
    let answer = within(
        "http1",
        reqwest::Client::new()
            .post(server.http_url())
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(INITIALIZE)
            .send(),
    )
    .await
    .expect("http1 answered");
    assert_eq!(answer.status().as_u16(), 200);
    let wire = server.faults().wire();
    assert_eq!((wire.http2_connections, wire.http1_connections), (1, 1));
    assert_eq!((wire.http2_requests, wire.http1_requests), (1, 1));
}

#[tokio::test]
async fn the_stream_limit_is_announced_in_settings() {
    let server = start(false, Some(2)).await;
    let (mut send, _driver) = connect(&server).await;
    initialize(&server, &mut send).await.expect("answered");
    assert_eq!(send.current_max_send_streams(), 2);
}

#[tokio::test]
async fn a_refused_stream_is_reset_before_the_routes_see_it() {
    let server = start(false, None).await;
    server.faults().refuse_streams(1);
    let (mut send, _driver) = connect(&server).await;
    let refused = initialize(&server, &mut send).await.expect_err("refused");
    assert_eq!(refused.reason(), Some(h2::Reason::REFUSED_STREAM));
    assert_eq!(initialize(&server, &mut send).await.expect("answered"), 200);
    let wire = server.faults().wire();
    assert_eq!((wire.refused_streams, wire.http2_requests), (1, 2));
    assert!(
        server.faults().requests().len() <= 1,
        "the refused request reached the routes"
    );
}

#[tokio::test]
async fn goaway_ends_the_connection_gracefully_and_refuses_new_streams() {
    let server = start(false, None).await;
    let (mut send, driver) = connect(&server).await;
    initialize(&server, &mut send).await.expect("answered");
    server.faults().goaway();
    let ended = within("graceful close", driver).await.expect("driver");
    assert!(
        ended.is_ok(),
        "a graceful GOAWAY ends the connection without an error: {ended:?}"
    );
    assert!(initialize(&server, &mut send).await.is_err());
    // A new connection is served as before.
    let (mut again, _driver) = connect(&server).await;
    assert_eq!(
        initialize(&server, &mut again).await.expect("answered"),
        200
    );
}

#[tokio::test]
async fn an_http1_only_server_does_not_understand_the_h2c_preface() {
    let server = start(true, None).await;
    let tcp = TcpStream::connect(server.addr()).await.expect("tcp");
    let failed = match within("handshake", h2::client::handshake(tcp)).await {
        Err(_) => true,
        Ok((mut send, connection)) => {
            let _driver = tokio::spawn(connection);
            initialize(&server, &mut send).await.is_err()
        }
    };
    assert!(failed, "an HTTP/1.1-only server answered HTTP/2");
    assert_eq!(server.faults().wire().http2_requests, 0);
}
