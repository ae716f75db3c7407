//! Host sessions of both eras through the gateway: they outlive their upstream's death, see
//! the standalone stream, `DELETE` and `list_changed` as the spec says, and a stop ends them
//! all in order.

use reqwest::StatusCode;
use serde_json::json;

use super::{
    gateway::{FAST, Gateway, HttpHost},
    raw::{Raw, answer},
};
use crate::common::{LIMIT, alive, host::text, mock_binary, process::MockProcess};
use mcp_mock_server::Whoami;

fn args<'a>(upstream: &[&'a str]) -> Vec<&'a str> {
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend_from_slice(upstream);
    args
}

async fn whoami(host: &HttpHost) -> Whoami {
    let result = host.call("whoami", json!({})).await;
    Whoami::from_result(&result).unwrap_or_else(|| panic!("a whoami result: {result:?}"))
}

/// Calls `echo` until it answers with the text (each call waits out an outage up to the call
/// wait), at most [`LIMIT`].
async fn echo_until_ok(host: &HttpHost, text_in: &str) {
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let result = host
            .try_call("echo", json!({"text": text_in}))
            .await
            .unwrap_or_else(|e| panic!("the host's session failed: {e}"));
        if result.is_error != Some(true) {
            assert_eq!(text(&result), text_in);
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "echo still failing after {LIMIT:?}: {}",
            text(&result)
        );
    }
}

/// A 2026-07-28 host's `echo`, without a session.
async fn modern_echo(raw: &Raw, id: u64, text_in: &str) -> String {
    let call = json!({"name": "echo", "arguments": {"text": text_in}});
    let response = raw.modern(id, "tools/call", call).await;
    assert_eq!(response.status(), StatusCode::OK);
    let reply = answer(response, id).await;
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a tool result: {reply}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosts_of_both_eras_keep_their_sessions_across_an_http_upstream_restart() {
    let mut mock = MockProcess::start("http").await;
    let url = mock.url();
    let gateway = Gateway::start(&args(&[
        "--name",
        "mock",
        "--transport",
        "http",
        "--url",
        &url,
    ]))
    .await;
    let (a, b) = (gateway.host().await, gateway.host().await);
    let raw = Raw::new(&gateway.url());
    assert_eq!(text(&a.call("echo", json!({"text": "a"})).await), "a");
    assert_eq!(modern_echo(&raw, 1, "modern").await, "modern");
    let first = whoami(&a).await;

    mock.kill().await;
    let during = b.try_call("echo", json!({"text": "during"}));
    let (during, ()) = tokio::join!(during, mock.restart());
    during.expect("a call during the outage is answered, not a lost session");
    echo_until_ok(&a, "after").await;
    echo_until_ok(&b, "after").await;
    assert_ne!(
        first.boot_id,
        whoami(&b).await.boot_id,
        "the new process answered"
    );
    assert_eq!(modern_echo(&raw, 2, "modern again").await, "modern again");
    assert!(!a.session.is_closed() && !b.session.is_closed());
    let status = gateway.stop().await;
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_stdio_upstream_is_restarted_under_every_host_session() {
    let gateway = Gateway::start(&args(&[
        "--name",
        "mock",
        "--stdio",
        "--",
        mock_binary(),
        "mock-server",
        "--transport",
        "stdio",
    ]))
    .await;
    let (a, b) = (gateway.host().await, gateway.host().await);
    let first = whoami(&a).await;
    // The upstream exits after answering: the next calls wait for the next generation.
    let _ = a.try_call("crash", json!({})).await;
    echo_until_ok(&b, "after a crash").await;
    echo_until_ok(&a, "after a crash").await;
    let second = whoami(&b).await;
    assert_ne!(first.pid, second.pid, "a new child answered");
    assert!(!alive(first.pid), "the crashed child was reaped");
    let status = gateway.stop().await;
    assert!(status.success(), "{status}");
    assert!(!alive(second.pid), "the stop reaped the upstream");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_has_its_stream_ends_with_delete_and_is_then_not_found() {
    let mock = MockProcess::start("http").await;
    let url = mock.url();
    let gateway = Gateway::start(&args(&["--name", "mock", "--url", &url])).await;
    let raw = Raw::new(&gateway.url());
    let id = raw.session().await;
    let stream = raw.standalone(&id).await;
    assert_eq!(stream.status(), StatusCode::OK);
    let kind = stream.headers().get("content-type").cloned();
    assert_eq!(
        kind.as_ref().and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "in session"}}});
    let reply = answer(raw.post(&call, &raw.in_session(&id)).await, 2).await;
    assert_eq!(reply["result"]["content"][0]["text"], "in session");
    let deleted = raw.delete(&id).await;
    assert_eq!(
        deleted.status(),
        StatusCode::NO_CONTENT,
        "a DELETE ends the session"
    );
    let after = raw.post(&call, &raw.in_session(&id)).await;
    assert_eq!(
        after.status(),
        StatusCode::NOT_FOUND,
        "a deleted session is gone"
    );
    drop(stream);
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_host_session_hears_list_changed_when_the_shared_tools_change() {
    let mock = MockProcess::start("http").await;
    let url = mock.url();
    let gateway = Gateway::start(&args(&["--name", "mock", "--url", &url])).await;
    let (a, b) = (gateway.host().await, gateway.host().await);
    assert!(!a.tool_names().await.contains(&"fresh".to_owned()));
    let set = a.call("set_tools", json!({"add": ["fresh"]})).await;
    assert_ne!(set.is_error, Some(true), "{}", text(&set));
    for host in [&a, &b] {
        host.wait_told("tools/list_changed", |t| t.tools_changed > 0)
            .await;
        assert!(host.tool_names().await.contains(&"fresh".to_owned()));
    }
    gateway.stop().await;
}
