//! Servers that answer off the protocol: a response to an id never sent, every answer twice,
//! lines or bodies that are not JSON. Each keeps its generation alive (their verdict is *alive*,
//! see `verdict`) and every call either works or fails typed within its call timeout — never a
//! hang, never a new generation.

use std::time::{Duration, Instant};

use crate::common::{LIMIT, fast, mock_binary, wait_state};
use mcp_mock_server::{HostileReplies, ReplyKind, ReplyOptions};
use mcp_resilient::{CallError, ConnectionState, ServerConfig, Supervisor, ToolRegistry};
use serde_json::json;

fn stdio(kind: &str) -> ServerConfig {
    let args = ["mock-server", "--hostile", kind, "--transport", "stdio"];
    fast(ServerConfig::stdio("s", mock_binary()).args(args))
}

async fn http(kind: ReplyKind) -> (HostileReplies, ServerConfig) {
    let server = HostileReplies::start(ReplyOptions::new(kind))
        .await
        .expect("hostile server");
    let config = fast(ServerConfig::http("s", server.url()));
    (server, config)
}

/// Starts `config`, waits until ready, and returns the supervisor and the ready generation.
async fn ready(config: ServerConfig) -> (Supervisor, ToolRegistry, u64) {
    let registry = ToolRegistry::new();
    let supervisor = Supervisor::spawn(config, &registry).expect("start");
    let mut states = supervisor.watch();
    let state = wait_state(&mut states, ConnectionState::is_ready).await;
    let ConnectionState::Ready { generation, .. } = state else {
        unreachable!()
    };
    (supervisor, registry, generation.get())
}

async fn echo(registry: &ToolRegistry, tool: &str, text: &str) -> Result<String, CallError> {
    let handle = registry
        .handle(&format!("mcp__s__{tool}"))
        .expect("tool registered");
    let result = tokio::time::timeout(LIMIT, handle.call(json!({ "text": text })))
        .await
        .expect("the call ended within the test limit")?;
    Ok(result.content[0]
        .as_text()
        .map(|t| t.text.clone())
        .unwrap_or_default())
}

/// Ten calls, each answered with its own text, on the generation that was ready first.
async fn calls_keep_working(supervisor: &Supervisor, registry: &ToolRegistry, generation: u64) {
    for i in 0..10 {
        let text = format!("call {i}");
        assert_eq!(echo(registry, "echo", &text).await.expect("echo"), text);
    }
    assert_eq!(
        supervisor.status().ready().map(u64::from),
        Some(generation),
        "no new generation"
    );
    assert!(
        supervisor.status().state.is_ready(),
        "{:?}",
        supervisor.status().state
    );
}

#[tokio::test]
async fn stray_and_duplicate_responses_are_ignored_and_calls_keep_working() {
    for kind in ["stray-response", "duplicate-response"] {
        let (supervisor, registry, generation) = ready(stdio(kind)).await;
        calls_keep_working(&supervisor, &registry, generation).await;
        supervisor.shutdown().await;
    }
    for kind in [ReplyKind::StrayResponse, ReplyKind::DuplicateResponse] {
        let (server, config) = http(kind).await;
        let (supervisor, registry, generation) = ready(config).await;
        calls_keep_working(&supervisor, &registry, generation).await;
        supervisor.shutdown().await;
        server.shutdown().await;
    }
}

#[tokio::test]
async fn a_stdio_line_that_is_not_json_is_skipped_and_an_unanswered_call_times_out() {
    let config = stdio("malformed-json").call_timeout(Duration::from_secs(1));
    let (supervisor, registry, generation) = ready(config).await;
    // The line before the answer is skipped; the answer after it is read as usual.
    calls_keep_working(&supervisor, &registry, generation).await;
    let started = Instant::now();
    let error = echo(&registry, "broken", "x").await.expect_err("no answer");
    assert!(matches!(error, CallError::Timeout { .. }), "{error:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    calls_keep_working(&supervisor, &registry, generation).await;
    supervisor.shutdown().await;
}

#[tokio::test]
async fn a_body_that_is_not_json_fails_its_call_typed_and_the_generation_lives() {
    let (server, config) = http(ReplyKind::MalformedJson).await;
    let (supervisor, registry, generation) = ready(config).await;
    // `broken` is answered with a JSON body that is not JSON: that call fails typed, at once.
    let started = Instant::now();
    let error = echo(&registry, "broken", "x").await.expect_err("not JSON");
    assert!(
        matches!(error, CallError::Http { status: None, .. }),
        "{error:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // `echo` is answered with an SSE stream whose first event is not JSON: rmcp skips that
    // event and reads the answer after it.
    assert_eq!(echo(&registry, "echo", "x").await.expect("echo"), "x");
    calls_keep_working(&supervisor, &registry, generation).await;
    assert_eq!(
        supervisor.status().ready().map(u64::from),
        Some(generation),
        "no new generation"
    );
    supervisor.shutdown().await;
    server.shutdown().await;
}
