//! Streamable HTTP mode, in-process, with an rmcp client and raw requests.

use crate::common;

use std::time::Duration;

use common::{call, connect_http, http_client, ping, text, within};
use mcp_mock_server::{MockOptions, MockServer, MockTransport, PortHold, SetTools};
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn start(transport: MockTransport, port: u16) -> MockServer {
    let opts = MockOptions {
        transport,
        port,
        ..MockOptions::default()
    };
    within("start", MockServer::start(opts))
        .await
        .expect("start")
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
const PING: &str = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;

fn post(url: &str, body: &'static str) -> reqwest::RequestBuilder {
    http_client()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body)
}

#[tokio::test]
async fn http_echo_and_whoami_work() {
    let server = start(MockTransport::Http, 0).await;
    let (running, _changed) = connect_http(&server.http_url()).await;
    assert_eq!(
        text(&call(&running, "echo", json!({"text": "over http"})).await),
        "over http"
    );
    let who = call(&running, "whoami", json!({})).await;
    let state = server.faults().state().await;
    assert_eq!(
        who.structured_content
            .as_ref()
            .map(|w| w["boot_id"].clone()),
        Some(json!(state.boot_id))
    );
    assert_eq!((state.sessions, state.calls), (1, 2));
    let requests = server.faults().requests();
    assert!(requests.iter().all(|r| r.path == "/mcp"), "{requests:?}");
    assert!(
        requests
            .iter()
            .any(|r| r.headers.contains_key("mcp-session-id"))
    );
    drop(running);
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn expired_sessions_get_404_and_400_when_stale_400_is_on() {
    let server = start(MockTransport::Http, 0).await;
    let url = server.http_url();
    let init = within("init", post(&url, INITIALIZE).send())
        .await
        .expect("init");
    assert_eq!(init.status(), StatusCode::OK);
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .expect("ascii")
        .to_owned();
    drop(init);

    server.faults().expire_sessions().await;
    let stale = within(
        "ping",
        post(&url, PING).header("mcp-session-id", &session).send(),
    )
    .await
    .expect("ping");
    assert_eq!(stale.status(), StatusCode::NOT_FOUND);

    server.faults().set_stale_400(true);
    let stale = within(
        "ping",
        post(&url, PING).header("mcp-session-id", &session).send(),
    )
    .await
    .expect("ping");
    assert_eq!(stale.status(), StatusCode::BAD_REQUEST);
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn hang_leaves_a_ping_unanswered_until_unhang() {
    let server = start(MockTransport::Http, 0).await;
    let (running, _changed) = connect_http(&server.http_url()).await;
    within("first ping", ping(&running)).await.expect("ping");
    server.faults().hang();
    let hung = tokio::time::timeout(Duration::from_millis(300), ping(&running)).await;
    assert!(hung.is_err(), "ping answered while hung: {hung:?}");
    server.faults().unhang();
    within("ping after unhang", ping(&running))
        .await
        .expect("ping");
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn admin_set_tools_notifies_connected_sessions() {
    let server = start(MockTransport::Http, 0).await;
    let (_running, mut changed) = connect_http(&server.http_url()).await;
    within("standalone stream", server.faults().wait_streams(1)).await;
    let change = SetTools {
        add: vec!["later".into()],
        ..SetTools::default()
    };
    assert_eq!(
        server.faults().set_tools(change).await,
        mcp_mock_server::BUILTINS.len() + 1
    );
    within("list_changed", changed.recv())
        .await
        .expect("notification");
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn in_process_crash_kills_and_the_port_restarts() {
    // Held until the end: after the crash no other server can take the port.
    let hold = PortHold::new().expect("a port");
    let port = hold.port();
    let server = start(MockTransport::Both, port).await;
    let (running, _changed) = connect_http(&server.http_url()).await;
    assert_eq!(text(&call(&running, "crash", json!({})).await), "crashing");
    within("ping fails after crash", async {
        while ping(&running).await.is_ok() {
            tokio::task::yield_now().await;
        }
    })
    .await;
    drop(running);

    let restarted = start(MockTransport::Both, port).await;
    assert_eq!(restarted.addr().port(), port);
    let state: Value = within(
        "state",
        http_client()
            .get(format!("http://{}/_mock/state", restarted.addr()))
            .send(),
    )
    .await
    .expect("state")
    .json()
    .await
    .expect("json");
    assert_eq!(state["sessions"], json!(0));
    within("shutdown", server.shutdown()).await;
    within("shutdown", restarted.shutdown()).await;
    drop(hold);
}

#[tokio::test]
async fn tools_list_pages_by_50() {
    let opts = MockOptions {
        transport: MockTransport::Http,
        extra_tools: 60,
        ..MockOptions::default()
    };
    let server = within("start", MockServer::start(opts))
        .await
        .expect("start");
    let (running, _changed) = connect_http(&server.http_url()).await;
    let first = within("page 1", running.list_tools(None))
        .await
        .expect("page");
    assert_eq!(
        (first.tools.len(), first.next_cursor.as_deref()),
        (50, Some("50"))
    );
    let all = within("all pages", running.list_all_tools())
        .await
        .expect("list");
    assert_eq!(all.len(), mcp_mock_server::BUILTINS.len() + 60);
    assert_eq!(all.last().map(|t| t.name.as_ref()), Some("extra_9"));
    within("shutdown", server.shutdown()).await;
}
