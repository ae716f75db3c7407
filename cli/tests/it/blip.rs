//! A blip costs a caller nothing: with default settings, a call made while its server is killed
//! and started again within a second is answered by the next generation, on every transport;
//! and a call lost in flight is sent again only to a tool annotated read-only or idempotent.
//!
//! A remote mock is killed and restarted through [`MockProcess`], which holds its port
//! ([`mcp_mock_server::PortHold`]) from the first start until it is dropped: while the process
//! is down a connection to the port is refused at once, and no other test's server can take the
//! port before the restart.

use std::time::Duration;

use mcp_resilient::{
    CallError, ServerConfig, Supervisor, ToolRegistry,
    config::{Reconnect, Replay},
    rmcp::model::CallToolResult,
};
use nix::{sys::signal, unistd::Pid};
use serde_json::json;

use crate::common::{
    LIMIT, call, host::text, init_tracing, mock_binary, process::MockProcess, stdio_mock, whoami,
};

/// A remote server with every setting at its default.
fn remote(name: &str, mock: &MockProcess) -> ServerConfig {
    match mock.kind {
        "sse" => ServerConfig::sse(name, mock.url()),
        _ => ServerConfig::http(name, mock.url()),
    }
}

/// The boot id a `whoami` or `peek` result names.
fn boot_id(result: &CallToolResult) -> String {
    match mcp_mock_server::Whoami::from_result(result) {
        Some(who) => who.boot_id,
        None => text(result).trim_matches('"').to_owned(),
    }
}

/// How many `tools/call` requests the child that made this `whoami` result had received.
fn calls(result: &CallToolResult) -> u64 {
    mcp_mock_server::Whoami::from_result(result)
        .and_then(|who| who.methods.get("tools/call").copied())
        .unwrap_or(0)
}

/// Waits (bounded) for a spawned call and returns its outcome.
async fn outcome(
    call: tokio::task::JoinHandle<Result<CallToolResult, CallError>>,
) -> Result<CallToolResult, CallError> {
    tokio::time::timeout(LIMIT, call)
        .await
        .expect("the call ended in time")
        .expect("the call task")
}

async fn a_call_during_a_restart_within_a_second_is_answered(kind: &'static str) {
    init_tracing();
    let mut mock = MockProcess::start(kind).await;
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(remote("blip", &mock), &registry).expect("spawn");
    server.wait_ready(LIMIT).await.expect("ready");
    let (before, _) = whoami(&registry, "blip").await;
    let handle = registry.handle("mcp__blip__whoami").expect("whoami");
    mock.kill().await;
    // The call is made while nothing listens (the held port refuses it); the server is back
    // within a second.
    let call = tokio::spawn(async move { handle.call(json!({})).await });
    mock.restart().await;
    let answer = outcome(call)
        .await
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
    let (before, pid) = whoami(&registry, "blip").await;
    // The child is killed from outside; the call is made once the supervisor saw it die.
    let mut watch = server.watch();
    let child = Pid::from_raw(i32::try_from(pid).expect("a pid"));
    signal::kill(child, signal::Signal::SIGKILL).expect("kill the child");
    tokio::time::timeout(LIMIT, watch.wait_for(|status| !status.is_ready()))
        .await
        .expect("the death is seen in time")
        .expect("the server is running");
    let (after, _) = whoami(&registry, "blip").await;
    assert_ne!(after, before, "the next child answered");
    server.shutdown().await;
}

/// A `peek` (read-only) in flight when the server is killed: with `replay`, answered by the
/// next generation; without, `ConnectionLost { may_have_run: true }`.
async fn a_lost_call_to_a_read_only_tool(kind: &'static str, replay: Replay) {
    init_tracing();
    let mut mock = MockProcess::start(kind).await;
    let registry = ToolRegistry::new();
    let config = remote("replay", &mock).replay(replay).reconnect(
        Reconnect::default()
            .initial_delay(Duration::from_millis(20))
            .max_delay(Duration::from_millis(200)),
    );
    let server = Supervisor::spawn(config, &registry).expect("spawn");
    server.wait_ready(LIMIT).await.expect("ready");
    let (before, _) = whoami(&registry, "replay").await;
    let peek = registry.handle("mcp__replay__peek").expect("peek");
    let call = tokio::spawn(async move { peek.call(json!({"ms": 2_000})).await });
    // The server has the call: the whoami and the peek.
    mock.wait_requests("tools/call", 2).await;
    mock.kill().await;
    mock.restart().await;
    let outcome = outcome(call).await;
    match replay {
        Replay::Annotated => {
            let answer = outcome.expect("replayed on the next generation");
            assert_ne!(boot_id(&answer), before, "the restarted server answered");
            assert_eq!(server.replayed_calls(), 1, "counted once");
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
    if replay != Replay::Annotated {
        assert_eq!(server.replayed_calls(), 0, "nothing was sent again");
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
    let first = call(&registry, "replay", "whoami", json!({})).await;
    let (before, base) = (boot_id(&first), calls(&first));
    let peek = registry.handle("mcp__replay__peek").expect("peek");
    let peeked = tokio::spawn(async move { peek.call(json!({"ms": 5_000})).await });
    // Wait (bounded) until the child has the peek: each look is a call of its own.
    tokio::time::timeout(LIMIT, async {
        for looks in 1.. {
            let now = calls(&call(&registry, "replay", "whoami", json!({})).await);
            if now >= base + 1 + looks {
                return;
            }
        }
    })
    .await
    .expect("the peek reached the child");
    // The child dies while the peek is in flight (a second call makes it exit).
    call(&registry, "replay", "crash", json!({"code": 9})).await;
    let answer = outcome(peeked).await.expect("replayed on the next child");
    assert_ne!(boot_id(&answer), before, "the next child answered");
    server.shutdown().await;
}
