//! Status injection in remote modes, in-process: which requests get the status, with which
//! headers, that the handler never sees them, and how settings are checked.

use crate::common;
use crate::raw;

use common::{Client, http_client, sse_events, within};
use futures::StreamExt;
use mcp_mock_server::{MockTransport, StatusFault};
use raw::{
    admin, call, first_message, header, initialize, mock_state, open_session, ping, post, start,
};
use reqwest::StatusCode;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;

#[tokio::test]
async fn every_third_tools_call_gets_the_status_and_never_reaches_the_handler() {
    let server = start(MockTransport::Http).await;
    let url = server.http_url();
    let session = open_session(&url).await;
    let fault = json!({"status": 503, "retry_after": "7", "every": 3, "methods": ["tools/call"]});
    assert_eq!(
        admin(&server, "status-fault", fault).await,
        (StatusCode::OK, json!({"ok": true}))
    );
    for i in 1..=7u64 {
        // Pings do not match the methods filter: answered, and not counted towards `every`.
        let pong = within("ping", post(&url, Some(&session), &ping(100 + i)).send())
            .await
            .expect("ping");
        assert_eq!(pong.status(), StatusCode::OK, "ping {i}");
        let body = call(i, "echo", json!({"text": format!("call {i}")}));
        let answer = within("call", post(&url, Some(&session), &body).send())
            .await
            .expect("call");
        if i % 3 == 0 {
            assert_eq!(answer.status(), StatusCode::SERVICE_UNAVAILABLE, "call {i}");
            assert_eq!(header(&answer, "retry-after"), Some("7"));
        } else {
            assert_eq!(answer.status(), StatusCode::OK, "call {i}");
            let reply = first_message(answer).await;
            assert_eq!(
                reply["result"]["content"][0]["text"],
                json!(format!("call {i}"))
            );
        }
    }
    let state = mock_state(&server).await;
    assert_eq!(
        (state["calls"].clone(), state["faults_injected"].clone()),
        (json!(5), json!(2))
    );
    assert_eq!(server.faults().faults_injected(), 2);
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn unauthorized_with_a_challenge_answers_get_sse_and_post_mcp() {
    let server = start(MockTransport::Both).await;
    let challenge = r#"Bearer realm="mock", error="invalid_token""#;
    let fault = StatusFault {
        www_authenticate: Some(challenge.into()),
        ..StatusFault::new(401)
    };
    server
        .faults()
        .set_status_fault(Some(fault))
        .expect("valid fault");
    let sse = within("GET /sse", http_client().get(server.sse_url()).send())
        .await
        .expect("get");
    let init = within(
        "POST /mcp",
        post(&server.http_url(), None, &initialize(json!(1))).send(),
    )
    .await
    .expect("post");
    for answer in [&sse, &init] {
        assert_eq!(answer.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(header(answer, "www-authenticate"), Some(challenge));
    }
    // rmcp's client reports the challenge as an auth error, not a dead server.
    let transport = StreamableHttpClientTransport::with_client(
        http_client(),
        StreamableHttpClientTransportConfig::with_uri(server.http_url()),
    );
    let refused = within(
        "rmcp initialize",
        rmcp::ServiceExt::serve(Client::new().0, transport),
    )
    .await;
    let error = refused.err().expect("initialize refused").to_string();
    assert!(error.to_lowercase().contains("auth"), "{error}");
    let state = server.faults().state().await;
    assert_eq!((state.sessions, state.faults_injected), (0, 3));

    let (status, body) = admin(&server, "status-fault/clear", json!({})).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"ok": true})));
    let sse = within("GET /sse", http_client().get(server.sse_url()).send())
        .await
        .expect("get");
    assert_eq!(sse.status(), StatusCode::OK);
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn a_status_fault_replaces_the_legacy_202_and_bad_settings_are_refused() {
    let server = start(MockTransport::Sse).await;
    let client = http_client();
    let stream = within("GET /sse", client.get(server.sse_url()).send())
        .await
        .expect("get");
    let mut events = sse_events(stream);
    let endpoint = within("endpoint", events.next()).await.expect("endpoint");
    let message_url = format!("http://{}{}", server.addr(), endpoint.data);
    let fault = json!({"status": 429, "retry_after": "1", "methods": ["ping"], "count": 1});
    assert_eq!(
        admin(&server, "status-fault", fault).await.0,
        StatusCode::OK
    );
    let init = initialize(json!(1)).to_string();
    let accepted = within("POST init", client.post(&message_url).body(init).send())
        .await
        .expect("post");
    assert_eq!(accepted.status(), StatusCode::ACCEPTED);
    for (expected, id) in [
        (StatusCode::TOO_MANY_REQUESTS, 2),
        (StatusCode::ACCEPTED, 3),
    ] {
        let sent = within(
            "POST ping",
            client.post(&message_url).body(ping(id).to_string()).send(),
        )
        .await
        .expect("post");
        assert_eq!(
            sent.status(),
            expected,
            "ping {id} (count caps the fault at 1)"
        );
    }

    let (status, body) = admin(&server, "status-fault", json!({"status": 42})).await;
    assert_eq!(
        (status, body["ok"].clone()),
        (StatusCode::BAD_REQUEST, json!(false))
    );
    let (status, _) = admin(
        &server,
        "status-fault",
        json!({"status": 503, "retryAfter": "1"}),
    )
    .await;
    assert!(status.is_client_error(), "camelCase is refused: {status}");
    within("shutdown", server.shutdown()).await;
}
