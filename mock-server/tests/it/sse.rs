//! Legacy HTTP+SSE mode, in-process, with raw requests.

use crate::common;

use common::{http_client, sse_events, within};
use futures::StreamExt;
use mcp_mock_server::{MockOptions, MockServer, MockTransport};
use reqwest::StatusCode;
use serde_json::{Value, json};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

async fn start() -> MockServer {
    let opts = MockOptions {
        transport: MockTransport::Sse,
        ..MockOptions::default()
    };
    within("start", MockServer::start(opts))
        .await
        .expect("start")
}

#[tokio::test]
async fn sse_announces_the_endpoint_and_answers_on_the_stream() {
    let server = start().await;
    let client = http_client();
    let response = within("GET /sse", client.get(server.sse_url()).send())
        .await
        .expect("get");
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut events = sse_events(response);
    let endpoint = within("endpoint", events.next())
        .await
        .expect("endpoint event");
    assert_eq!(endpoint.event, "endpoint");
    assert!(
        endpoint.data.starts_with("/message?sessionId="),
        "{}",
        endpoint.data
    );

    let message_url = format!("http://{}{}", server.addr(), endpoint.data);
    let post = within("POST", client.post(&message_url).body(INITIALIZE).send())
        .await
        .expect("post");
    assert_eq!(post.status(), StatusCode::ACCEPTED);
    let reply = within("reply", events.next()).await.expect("message event");
    assert_eq!(reply.event, "message");
    let reply: Value = serde_json::from_str(&reply.data).expect("json");
    assert_eq!(reply["id"], json!(1));
    assert_eq!(
        reply["result"]["serverInfo"]["name"],
        json!("mcp-mock-server")
    );

    let bad = within("bad body", client.post(&message_url).body("{nope").send())
        .await
        .expect("post");
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
    let unknown = format!("http://{}/message?sessionId=unknown", server.addr());
    let unknown = within("unknown", client.post(unknown).body(INITIALIZE).send())
        .await
        .expect("post");
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    let wrong = within(
        "POST /sse",
        client.post(server.sse_url()).body(INITIALIZE).send(),
    )
    .await
    .expect("post");
    assert_eq!(wrong.status(), StatusCode::METHOD_NOT_ALLOWED);
    let wrong = within(
        "POST /mcp",
        client.post(server.http_url()).body(INITIALIZE).send(),
    )
    .await
    .expect("post");
    assert_eq!(wrong.status(), StatusCode::METHOD_NOT_ALLOWED);

    server.faults().set_oversized(1000);
    let big = within("oversized", events.next())
        .await
        .expect("oversized event");
    assert_eq!((big.event.as_str(), big.data.len()), ("message", 1000));

    server.faults().drop_streams().await;
    assert!(within("stream end", events.next()).await.is_none());
    let gone = within(
        "forgotten",
        client.post(&message_url).body(INITIALIZE).send(),
    )
    .await
    .expect("post");
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
    let requests = server.faults().requests();
    assert_eq!(
        requests
            .first()
            .map(|r| (r.method.as_str(), r.path.as_str())),
        Some(("GET", "/sse"))
    );
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn sse_cross_origin_endpoint_is_announced() {
    let server = start().await;
    server
        .faults()
        .set_cross_origin(Some("http://127.0.0.1:1/message".into()));
    let response = within("GET /sse", http_client().get(server.sse_url()).send())
        .await
        .expect("get");
    let mut events = sse_events(response);
    let endpoint = within("endpoint", events.next())
        .await
        .expect("endpoint event");
    assert_eq!(endpoint.data, "http://127.0.0.1:1/message");
    within("shutdown", server.shutdown()).await;
}
