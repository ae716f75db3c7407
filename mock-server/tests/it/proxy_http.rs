//! `HttpFaultProxy` in front of an in-process `MockServer`, with real sockets on 127.0.0.1.

use crate::common;

use common::{call, connect_http, http_client, sse_events, text, within};
use futures::StreamExt;
use mcp_mock_server::proxy::{GatewayFault, HttpFaultProxy};
use mcp_mock_server::{MockOptions, MockServer};
use reqwest::StatusCode;
use serde_json::{Value, json};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const LEGACY_INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

async fn start(fault: Option<GatewayFault>) -> (MockServer, HttpFaultProxy) {
    let mock = within("mock", MockServer::start(MockOptions::default()))
        .await
        .expect("start mock");
    let upstream = format!("http://{}", mock.addr());
    let proxy = within("proxy", HttpFaultProxy::start(&upstream, fault))
        .await
        .expect("start proxy");
    (mock, proxy)
}

async fn post(url: &str, session: Option<&str>, body: String) -> reqwest::Response {
    let mut request = http_client()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    within("POST", request.send()).await.expect("post")
}

/// A raw Streamable HTTP session through `url`; returns its id.
async fn open_session(url: &str) -> String {
    let init = post(url, None, INITIALIZE.into()).await;
    assert_eq!(init.status(), StatusCode::OK);
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .expect("session id")
        .to_owned();
    within("initialize body", init.text()).await.expect("body");
    let initialized = post(url, Some(&session), INITIALIZED.into()).await;
    assert_eq!(initialized.status(), StatusCode::ACCEPTED);
    session
}

fn echo_call(id: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "echo", "arguments": {"text": "hi"}}})
    .to_string()
}

#[tokio::test]
async fn an_mcp_session_runs_through_the_proxy_with_headers_intact() {
    let (mock, proxy) = start(None).await;
    let (running, _changed) = connect_http(&proxy.url("/mcp")).await;
    let tools = within("tools/list", running.list_all_tools())
        .await
        .expect("list tools");
    assert!(tools.iter().any(|tool| tool.name == "echo"), "{tools:?}");
    let echoed = call(&running, "echo", json!({"text": "via proxy"})).await;
    assert_eq!(text(&echoed), "via proxy");
    assert_eq!(mock.faults().state().await.calls, 1);

    let requests = mock.faults().requests();
    let host = mock.addr().to_string();
    assert!(
        requests.iter().all(|r| r.headers["host"] == host),
        "{requests:?}"
    );
    assert!(
        requests
            .iter()
            .any(|r| r.headers.contains_key("mcp-session-id"))
    );
    assert!(proxy.forwarded() >= 3, "forwarded {}", proxy.forwarded());
    assert_eq!(proxy.injected(), 0);
    drop(running);

    mock.faults().clear_requests();
    let response = http_client()
        .get(proxy.url("/mcp"))
        .header("x-probe", "1")
        .header("last-event-id", "41")
        .header("x-hop", "1")
        .header("connection", "x-hop")
        .send();
    within("GET", response).await.expect("get");
    let requests = mock.faults().requests();
    let probe = requests.iter().find(|r| r.headers.contains_key("x-probe"));
    let seen = &probe.expect("the probe reached the server").headers;
    assert_eq!(seen.get("last-event-id").map(String::as_str), Some("41"));
    assert!(
        !seen.contains_key("x-hop"),
        "a hop-by-hop header leaked: {seen:?}"
    );
    within("shutdown", proxy.shutdown()).await;
    within("mock shutdown", mock.shutdown()).await;
}

#[tokio::test]
async fn every_third_tools_call_is_answered_by_the_proxy_and_never_reaches_the_server() {
    let fault = GatewayFault {
        retry_after: Some("1".into()),
        methods: vec!["tools/call".into()],
        ..GatewayFault::new(429, 3)
    };
    let (mock, proxy) = start(Some(fault)).await;
    let url = proxy.url("/mcp");
    let session = open_session(&url).await;
    let mut statuses = Vec::new();
    for id in 1..=6 {
        let response = post(&url, Some(&session), echo_call(10 + id)).await;
        let status = response.status();
        statuses.push(status.as_u16());
        if status == StatusCode::TOO_MANY_REQUESTS {
            assert_eq!(response.headers()["retry-after"], "1");
            let body = within("429 body", response.text()).await.expect("body");
            assert_eq!(body, "injected by fault proxy");
        } else {
            within("call body", response.text()).await.expect("body");
        }
        // Not a listed method: forwarded, and it does not move the pattern.
        let ping = json!({"jsonrpc": "2.0", "id": 100 + id, "method": "ping"}).to_string();
        assert_eq!(
            post(&url, Some(&session), ping).await.status(),
            StatusCode::OK
        );
    }
    assert_eq!(statuses, [200, 200, 429, 200, 200, 429]);
    assert_eq!(
        mock.faults().state().await.calls,
        4,
        "an answered call reached the server"
    );
    assert_eq!(proxy.injected(), 2);
    within("shutdown", proxy.shutdown()).await;
    within("mock shutdown", mock.shutdown()).await;
}

/// The statuses of `n` POSTs through a fresh proxy with `fault` (every POST matches).
async fn pattern(fault: GatewayFault, n: usize) -> Vec<bool> {
    let (mock, proxy) = start(Some(fault)).await;
    let mut answered = Vec::new();
    for _ in 0..n {
        let response = post(&proxy.url("/nowhere"), None, "{}".into()).await;
        answered.push(response.status() == StatusCode::SERVICE_UNAVAILABLE);
    }
    let injected = answered.iter().filter(|a| **a).count() as u64;
    assert_eq!(
        (proxy.injected(), proxy.forwarded()),
        (injected, n as u64 - injected)
    );
    within("shutdown", proxy.shutdown()).await;
    within("mock shutdown", mock.shutdown()).await;
    answered
}

#[tokio::test]
async fn a_seed_gives_the_same_pattern_every_time() {
    let seeded = GatewayFault {
        seed: Some(42),
        ..GatewayFault::new(503, 2)
    };
    let first = pattern(seeded.clone(), 24).await;
    assert_eq!(first, pattern(seeded, 24).await);
    assert!(first.contains(&true) && first.contains(&false), "{first:?}");
    let every_second: Vec<bool> = (1..=24).map(|n| n % 2 == 0).collect();
    assert_ne!(first, every_second, "the seed was ignored");
}

#[tokio::test]
async fn legacy_sse_streams_through_event_by_event() {
    let (mock, proxy) = start(None).await;
    let client = http_client();
    let response = within("GET /sse", client.get(proxy.url("/sse")).send())
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

    // The stream stays open: the answer to a later POST arrives on it.
    let message_url = proxy.url(&endpoint.data);
    let accepted = within(
        "POST",
        client.post(&message_url).body(LEGACY_INITIALIZE).send(),
    )
    .await
    .expect("post");
    assert_eq!(accepted.status(), StatusCode::ACCEPTED);
    let reply = within("reply", events.next()).await.expect("message event");
    let reply: Value = serde_json::from_str(&reply.data).expect("json");
    assert_eq!(
        reply["result"]["serverInfo"]["name"],
        json!("mcp-mock-server")
    );
    within("shutdown", proxy.shutdown()).await;
    assert!(
        within("stream ends", events.next()).await.is_none(),
        "the stream outlived the proxy"
    );
    within("mock shutdown", mock.shutdown()).await;
}

#[tokio::test]
async fn a_non_loopback_upstream_is_refused() {
    for bad in ["http://192.0.2.1:80", "https://127.0.0.1:1", "127.0.0.1:1"] {
        let error = HttpFaultProxy::start(bad, None).await.err().expect(bad);
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput, "{bad}");
    }
}
