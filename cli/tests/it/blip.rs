//! A blip costs a caller nothing: with default settings, a call made while its server is killed
//! and started again within a second is answered by the next generation, on every transport;
//! and a call lost in flight is sent again only to a tool annotated read-only or idempotent.

use std::time::Duration;

use mcp_resilient::{
    CallError, ServerConfig, Supervisor, ToolRegistry,
    config::{Reconnect, Replay},
};
use serde_json::json;

use crate::common::{LIMIT, init_tracing, mock_binary, process::MockProcess, stdio_mock};

/// A remote server with every setting at its default.
fn remote(name: &str, mock: &MockProcess) -> ServerConfig {
    match mock.kind {
        "sse" => ServerConfig::sse(name, mock.url()),
        _ => ServerConfig::http(name, mock.url()),
    }
}

/// The boot id a `whoami` or `peek` result names.
fn boot_id(result: &mcp_resilient::rmcp::model::CallToolResult) -> String {
    let text = result.content[0].as_text().map(|t| t.text.clone());
    let text = text.expect("a text result");
    match mcp_mock_server::Whoami::from_result(result) {
        Some(who) => who.boot_id,
        None => text,
    }
}

async fn a_call_during_a_restart_within_a_second_is_answered(kind: &'static str) {
    init_tracing();
    let mut mock = MockProcess::start(kind).await;
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(remote("blip", &mock), &registry).expect("spawn");
    server.wait_ready(LIMIT).await.expect("ready");
    let whoami = registry.handle("mcp__blip__whoami").expect("whoami");
    let before = boot_id(&whoami.call(json!({})).await.expect("whoami"));
    mock.kill().await;
    // The call is made while nothing listens; the server is back within a second.
    let call = tokio::spawn(async move { whoami.call(json!({})).await });
    mock.restart().await;
    let answer = tokio::time::timeout(LIMIT, call)
        .await
        .expect("the call ended in time")
        .expect("the call task")
        .expect("the call is answered by the next generation");
    assert_ne!(boot_id(&answer), before, "the restarted server answered");
    server.shutdown().await;
}

#[tokio::test]
async fn http_a_call_during_a_restart_within_a_second_is_answered() {
    a_call_during_a_restart_within_a_second_is_answered("http").await;
}

#[tokio::test]
async fn sse_a_call_during_a_restart_within_a_second_is_answered() {
    a_call_during_a_restart_within_a_second_is_answered("sse").await;
}

#[tokio::test]
async fn stdio_a_call_during_a_restart_is_answered() {
    init_tracing();
    let registry = ToolRegistry::new();
    let config =
        ServerConfig::stdio("blip", mock_binary()).args(["mock-server", "--transport", "stdio"]);
    let server = Supervisor::spawn(config, &registry).expect("spawn");
    server.wait_ready(LIMIT).await.expect("ready");
    let whoami = registry.handle("mcp__blip__whoami").expect("whoami");
    let before = boot_id(&whoami.call(json!({})).await.expect("whoami"));
    // The child is killed from outside; the call is made once the supervisor saw it die.
    let pid = mcp_mock_server::Whoami::from_result(&whoami.call(json!({})).await.expect("whoami"))
        .expect("a whoami result")
        .pid;
    let mut watch = server.watch();
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success(), "kill -9 {pid}");
    tokio::time::timeout(LIMIT, watch.wait_for(|status| !status.is_ready()))
        .await
        .expect("the death is seen in time")
        .expect("the server is running");
    let answer = whoami
        .call(json!({}))
        .await
        .expect("the call is answered by the next generation");
    assert_ne!(boot_id(&answer), before, "the next child answered");
    server.shutdown().await;
}

/// A `peek` (read-only) in flight when the server is killed: with `replay`, answered by the
/// next generation; without, `ConnectionLost { may_have_run: true }`.
async fn a_lost_call_to_a_read_only_tool(kind: &'static str, replay: Replay) {
    init_tracing();
    let mut mock = MockProcess::start(kind).await;
    let registry = ToolRegistry::new();
    let config = remote("replay", &mock).replay(replay).reconnect(Reconnect {
        initial_delay: Duration::from_millis(20),
        max_delay: Duration::from_millis(200),
        ..Reconnect::default()
    });
    let server = Supervisor::spawn(config, &registry).expect("spawn");
    server.wait_ready(LIMIT).await.expect("ready");
    let whoami = registry.handle("mcp__replay__whoami").expect("whoami");
    let before = boot_id(&whoami.call(json!({})).await.expect("whoami"));
    let peek = registry.handle("mcp__replay__peek").expect("peek");
    let call = tokio::spawn(async move { peek.call(json!({"ms": 2_000})).await });
    // Wait (bounded) until the server has the call.
    tokio::time::timeout(LIMIT, async {
        loop {
            let state = mock.admin_get("state").await;
            if state["methods"]["tools/call"].as_u64().unwrap_or(0) >= 2 {
                return;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the call reached the server");
    mock.kill().await;
    mock.restart().await;
    let outcome = tokio::time::timeout(LIMIT, call)
        .await
        .expect("the call ended in time")
        .expect("the call task");
    match replay {
        Replay::Annotated => {
            let answer = outcome.expect("replayed on the next generation");
            assert_ne!(boot_id(&answer), before, "the restarted server answered");
        }
        _ => assert!(
            matches!(
                outcome,
                Err(CallError::ConnectionLost {
                    may_have_run: true,
                    ..
                })
            ),
            "{outcome:?}"
        ),
    }
    server.shutdown().await;
}

#[tokio::test]
async fn http_a_read_only_call_lost_in_flight_is_replayed_once() {
    a_lost_call_to_a_read_only_tool("http", Replay::Annotated).await;
}

#[tokio::test]
async fn sse_a_read_only_call_lost_in_flight_is_replayed_once() {
    a_lost_call_to_a_read_only_tool("sse", Replay::Annotated).await;
}

#[tokio::test]
async fn with_replay_never_a_read_only_call_lost_in_flight_fails_as_may_have_run() {
    a_lost_call_to_a_read_only_tool("http", Replay::Never).await;
}

#[tokio::test]
async fn stdio_a_read_only_call_lost_with_its_child_is_replayed() {
    init_tracing();
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(stdio_mock("replay", &[]), &registry).expect("spawn");
    server.wait_ready(LIMIT).await.expect("ready");
    let whoami = registry.handle("mcp__replay__whoami").expect("whoami");
    let first = whoami.call(json!({})).await.expect("whoami");
    let before = boot_id(&first);
    let calls = |result: &mcp_resilient::rmcp::model::CallToolResult| {
        mcp_mock_server::Whoami::from_result(result)
            .and_then(|who| who.methods.get("tools/call").copied())
            .unwrap_or(0)
    };
    let base = calls(&first);
    let peek = registry.handle("mcp__replay__peek").expect("peek");
    let call = tokio::spawn(async move { peek.call(json!({"ms": 5_000})).await });
    // Wait (bounded) until the child has the peek: each look is a call of its own.
    tokio::time::timeout(LIMIT, async {
        for looks in 1.. {
            let now = calls(&whoami.call(json!({})).await.expect("whoami"));
            if now >= base + 1 + looks {
                return;
            }
        }
    })
    .await
    .expect("the peek reached the child");
    // The child dies while the peek is in flight (a second call makes it exit).
    let crash = registry.handle("mcp__replay__crash").expect("crash");
    crash
        .call(json!({"code": 9}))
        .await
        .expect("crash replies first");
    let answer = tokio::time::timeout(LIMIT, call)
        .await
        .expect("the call ended in time")
        .expect("the call task")
        .expect("replayed on the next child");
    assert_ne!(boot_id(&answer), before, "the next child answered");
    server.shutdown().await;
}
