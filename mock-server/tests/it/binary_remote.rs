//! The binary in remote modes: the LISTENING line, `crash` over HTTP and SSE, restart on a port.

use crate::common;

use std::process::Stdio;

use common::{call, connect_http, http_client, sse_events, text, within};
use futures::StreamExt;
use mcp_mock_server::PortHold;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// Spawns the binary and returns it with the `host:port` of its LISTENING line.
async fn spawn(args: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-mock-server"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn mock server");
    let stdout = child.stdout.take().expect("stdout");
    let line = within("LISTENING", BufReader::new(stdout).lines().next_line())
        .await
        .expect("read")
        .expect("a line");
    let addr = line
        .strip_prefix("LISTENING ")
        .expect("LISTENING line")
        .to_owned();
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    (child, addr)
}

#[tokio::test]
async fn http_binary_crashes_after_the_reply_and_restarts_on_its_port() {
    // Held until the end: after the crash no other server can take the port.
    let hold = PortHold::new().expect("a port");
    let port = hold.port().to_string();
    let (mut child, addr) =
        spawn(&["--transport", "http", "--port", &port, "--boot-id", "one"]).await;
    let (running, _changed) = connect_http(&format!("http://{addr}/mcp")).await;
    assert_eq!(
        text(&call(&running, "crash", json!({"code": 5})).await),
        "crashing"
    );
    let status = within("crash exit", child.wait()).await.expect("wait");
    assert_eq!(status.code(), Some(5));
    drop(running);

    let (mut again, addr_again) =
        spawn(&["--transport", "http", "--port", &port, "--boot-id", "two"]).await;
    assert_eq!(addr_again, addr);
    let state: Value = within(
        "state",
        http_client()
            .get(format!("http://{addr}/_mock/state"))
            .send(),
    )
    .await
    .expect("state")
    .json()
    .await
    .expect("json");
    assert_eq!(state["boot_id"], json!("two"));
    let sse = within(
        "GET /sse",
        http_client().get(format!("http://{addr}/sse")).send(),
    )
    .await
    .expect("get");
    assert!(matches!(
        sse.status(),
        StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED
    ));

    again.start_kill().expect("SIGKILL");
    within("killed", again.wait()).await.expect("wait");
    let (mut third, addr_third) = spawn(&["--transport", "http", "--port", &port]).await;
    assert_eq!(addr_third, addr);
    third.start_kill().expect("SIGKILL");
    within("killed", third.wait()).await.expect("wait");
    drop(hold);
}

#[tokio::test]
async fn sse_binary_crash_reply_arrives_before_exit() {
    let (mut child, addr) = spawn(&["--transport", "sse"]).await;
    let client = http_client();
    let response = within("GET /sse", client.get(format!("http://{addr}/sse")).send())
        .await
        .expect("get");
    let mut events = sse_events(response);
    let endpoint = within("endpoint", events.next()).await.expect("endpoint");
    let url = format!("http://{addr}{}", endpoint.data);
    let messages = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"crash","arguments":{"code":3}}}"#,
    ];
    for message in messages {
        let post = within("POST", client.post(&url).body(message).send())
            .await
            .expect("post");
        assert_eq!(post.status(), StatusCode::ACCEPTED);
    }
    let mut reply = Value::Null;
    while reply["id"] != json!(2) {
        let event = within("reply", events.next()).await.expect("message event");
        reply = serde_json::from_str(&event.data).expect("json");
    }
    assert_eq!(reply["result"]["content"][0]["text"], json!("crashing"));
    let status = within("crash exit", child.wait()).await.expect("wait");
    assert_eq!(status.code(), Some(3));
}
