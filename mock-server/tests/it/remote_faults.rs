//! The other remote faults, in-process: modern-only (`-32022` for `initialize`), redirect, and
//! `block` holding the answers of a legacy SSE stream.

use crate::common;
use crate::raw;

use common::{Client, http_client, sse_events, within};
use futures::StreamExt;
use mcp_mock_server::MockTransport;
use raw::{QUIET, admin, call, header, initialize, ping, post, start};
use reqwest::StatusCode;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

#[tokio::test]
async fn modern_only_refuses_initialize_with_rmcps_unsupported_version_error() {
    let server = start(MockTransport::Http).await;
    let url = server.http_url();
    assert_eq!(
        admin(&server, "modern-only", json!({"on": true})).await.0,
        StatusCode::OK
    );
    for id in [json!(7), json!("seven")] {
        let answer = within(
            "initialize",
            post(&url, None, &initialize(id.clone())).send(),
        )
        .await
        .expect("post");
        assert_eq!(answer.status(), StatusCode::BAD_REQUEST);
        assert_eq!(header(&answer, "content-type"), Some("application/json"));
        let body: Value = within("body", answer.json()).await.expect("json");
        let expected = json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "2025-06-18"}
        }});
        assert_eq!(body, expected);
    }
    // A 2026-07-28 client never sends `initialize`: it is served.
    let transport = StreamableHttpClientTransport::with_client(
        http_client(),
        StreamableHttpClientTransportConfig::with_uri(url.clone()),
    );
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let modern = within(
        "discover",
        Client::new().0.serve_with_lifecycle(transport, lifecycle),
    )
    .await
    .expect("a 2026 client is served");
    let echoed = common::call(&modern, "echo", json!({"text": "modern"})).await;
    assert_eq!(common::text(&echoed), "modern");
    assert_eq!(server.faults().faults_injected(), 2);

    server.faults().set_modern_only(false);
    let answer = within("initialize", post(&url, None, &initialize(json!(8))).send())
        .await
        .expect("post");
    assert_eq!(answer.status(), StatusCode::OK);
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn redirect_answers_every_mcp_request_with_307() {
    let server = start(MockTransport::Both).await;
    let location = "http://127.0.0.1:9/elsewhere";
    let set = admin(&server, "redirect", json!({"location": location})).await;
    assert_eq!(set, (StatusCode::OK, json!({"ok": true})));
    let client = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let message = format!("http://{}/message?sessionId=x", server.addr());
    let answers = [
        client.get(server.sse_url()).send(),
        client
            .post(server.http_url())
            .body(initialize(json!(1)).to_string())
            .send(),
        client.post(message).body(ping(2).to_string()).send(),
    ];
    for answer in answers {
        let answer = within("redirected", answer).await.expect("request");
        assert_eq!(answer.status(), StatusCode::TEMPORARY_REDIRECT);
        assert_eq!(header(&answer, "location"), Some(location));
    }
    let state = server.faults().state().await;
    assert_eq!((state.sessions, state.faults_injected), (0, 3));
    assert!(
        admin(&server, "redirect", json!({"location": "a\nb"}))
            .await
            .0
            .is_client_error()
    );
    admin(&server, "redirect", json!({"location": null})).await;
    let sse = within("GET /sse", client.get(server.sse_url()).send())
        .await
        .expect("get");
    assert_eq!(sse.status(), StatusCode::OK);
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn sse_block_holds_ping_answers_on_the_stream_until_it_ends() {
    let server = start(MockTransport::Sse).await;
    let client = http_client();
    let stream = within("GET /sse", client.get(server.sse_url()).send())
        .await
        .expect("get");
    let mut events = sse_events(stream);
    let endpoint = within("endpoint", events.next()).await.expect("endpoint");
    let url = format!("http://{}{}", server.addr(), endpoint.data);
    // POSTs run as owned tasks: while blocked, even their 202 is held.
    let mut posts = tokio::task::JoinSet::new();
    let mut send = |message: Value| {
        posts.spawn(client.post(&url).body(message.to_string()).send());
    };
    send(initialize(json!(1)));
    let reply = within("init reply", events.next()).await.expect("event");
    assert!(reply.data.contains(r#""id":1"#), "{}", reply.data);
    send(serde_json::from_str(raw::INITIALIZED).expect("json"));
    let mut block = call(2, "block", json!({"ms": 1500}));
    block["params"]["_meta"] = json!({"progressToken": "b"});
    send(block);
    let progress = within("progress", events.next()).await.expect("event");
    assert!(
        progress.data.contains("notifications/progress"),
        "{}",
        progress.data
    );

    send(ping(3));
    send(ping(4));
    let early = tokio::time::timeout(QUIET, events.next()).await;
    assert!(early.is_err(), "sent while blocked: {early:?}");
    let mut ids = Vec::new();
    while ids.last() != Some(&json!(2)) {
        let event = within("held event", events.next()).await.expect("event");
        let message: Value = serde_json::from_str(&event.data).expect("json");
        ids.push(message["id"].clone());
    }
    ids[..2].sort_by_key(|id| id.to_string());
    assert_eq!(ids, [json!(3), json!(4), json!(2)]);
    while let Some(done) = within("POST answers", posts.join_next()).await {
        let response = done.expect("task").expect("post");
        assert_eq!(response.status(), StatusCode::ACCEPTED);
    }
    within("shutdown", server.shutdown()).await;
}
