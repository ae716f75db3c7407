//! `protocol: auto` against servers that do not speak 2026-07-28 and refuse `server/discover`
//! their own way (the mock's hostile kind `discover`): every shape leads to `initialize` within
//! the same attempt — on stdio on the same child — and the CLI, with the default `protocol`,
//! lists the tools at once. A 2026-only server still negotiates 2026-07-28.
//!
//! What the old code did, for the record: a result that is not a discover result (`{}`, another
//! object), `-32022` naming initialize-era versions, and every empty or foreign 2xx were never
//! connected (`tools` gave up after its 30 s connect timeout with "server/discover failed: expect
//! initialized result", or "rejected" for the `-32022`; a 202 waited out rmcp's 10 s discover
//! timeout first). The JSON-RPC errors and the 4xx already fell back; they are pinned here too.

use std::time::{Duration, Instant};

use crate::common::{LIMIT, call, fast, mock_binary, ready_generation, stdio_mock};
use mcp_mock_server::{DiscoverRefusal, MockOptions, MockServer, MockTransport, Whoami};
use mcp_resilient::{ServerConfig, Supervisor, ToolRegistry};
use serde_json::{Value, json};
use tokio::process::Command;

/// The bound on one whole CLI command (debug build, loaded 2-core machine): the old code took
/// 30 s (its connect timeout) or failed; a fallback in the same attempt takes well under 1 s.
const COMMAND_BOUND: Duration = Duration::from_secs(5);

/// Runs the CLI with `args`; its exit code, stdout and stderr, and how long it took.
async fn cli(args: &[&str]) -> (i32, String, String, Duration) {
    let started = Instant::now();
    let output = tokio::time::timeout(
        LIMIT,
        Command::new(mock_binary())
            .args(args)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the CLI finished within the test's limit")
    .expect("the CLI ran");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        started.elapsed(),
    )
}

/// A Streamable HTTP mock that refuses `server/discover` with `shape` (`None`: a 2026-only one).
async fn http_mock(shape: Option<DiscoverRefusal>) -> MockServer {
    let server = MockServer::start(MockOptions {
        transport: MockTransport::Http,
        ..MockOptions::default()
    })
    .await
    .expect("mock server starts");
    match shape {
        Some(shape) => server.faults().set_discover_refusal(Some(shape)),
        None => server.faults().set_modern_only(true),
    }
    server
}

/// `tools --json --url` (default transport and protocol): the tools it printed, each with the
/// protocol the generation negotiated.
async fn tools_over_http(server: &MockServer, shape: &str) -> Vec<(String, String)> {
    let url = server.http_url();
    let (code, stdout, stderr, took) = cli(&["tools", "--json", "--url", &url]).await;
    assert_eq!(code, 0, "{shape}: {stderr}");
    assert!(
        took < COMMAND_BOUND,
        "{shape}: tools took {took:?}: {stderr}"
    );
    let tools: Value = serde_json::from_str(stdout.trim()).expect("one JSON document");
    let tools = tools.as_array().cloned().unwrap_or_default();
    let field = |tool: &Value, key: &str| tool[key].as_str().unwrap_or_default().to_owned();
    tools
        .iter()
        .map(|tool| (field(tool, "name"), field(tool, "protocol")))
        .collect()
}

/// Over Streamable HTTP: the tools are listed by a 2025-11-25 session, and the mock saw one
/// `server/discover` and one `initialize`: one attempt.
async fn falls_back_over_http(spelling: &str) {
    let shape: DiscoverRefusal = spelling.parse().expect("a shape");
    let server = http_mock(Some(shape)).await;
    let tools = tools_over_http(&server, spelling).await;
    assert!(
        tools.contains(&("echo".to_owned(), "2025-11-25".to_owned())),
        "{spelling}: {tools:?}"
    );
    let methods = server.faults().state().await.methods;
    let count = |m: &str| methods.get(m).copied().unwrap_or(0);
    assert_eq!(
        (count("server/discover"), count("initialize")),
        (1, 1),
        "{spelling}: one attempt asks once and falls back once: {methods:?}"
    );
    server.shutdown().await;
}

/// Over stdio: `call whoami` (which needs the tool list) answers from the child that was asked
/// `server/discover`, and that child saw one `server/discover` and one `initialize`: the
/// fallback ran on the same child, in one attempt.
async fn falls_back_over_stdio(spelling: &str) {
    let args = [
        "call",
        "whoami",
        "{}",
        "--stdio",
        "--",
        mock_binary(),
        "mock-server",
        "--transport",
        "stdio",
        "--discover-refusal",
        spelling,
    ];
    let (code, stdout, stderr, took) = cli(&args).await;
    assert_eq!(code, 0, "{spelling}: {stderr}");
    assert!(
        took < COMMAND_BOUND,
        "{spelling}: call took {took:?}: {stderr}"
    );
    let result: Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    let methods = &result["structuredContent"]["methods"];
    assert_eq!(
        (&methods["server/discover"], &methods["initialize"]),
        (&Value::from(1), &Value::from(1)),
        "{spelling}: {result}"
    );
}

macro_rules! shapes {
    ($run:ident: $($name:ident => $spelling:literal),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $name() {
                $run($spelling).await;
            }
        )*
    };
}

shapes! { falls_back_over_http:
    http_discover_answered_with_an_empty_result => "empty-result",
    http_discover_answered_with_another_object => "other-result",
    http_discover_answered_method_not_found => "error:-32601",
    http_discover_answered_invalid_request => "error:-32600",
    http_discover_answered_invalid_params => "error:-32602",
    http_discover_answered_with_initialize_era_versions_only => "legacy-versions",
    http_discover_answered_400 => "status:400",
    http_discover_answered_400_with_a_json_rpc_body => "status:400+body",
    http_discover_answered_404 => "status:404",
    http_discover_answered_404_with_a_json_rpc_body => "status:404+body",
    http_discover_answered_405 => "status:405",
    http_discover_answered_405_with_a_json_rpc_body => "status:405+body",
    http_discover_answered_an_empty_200 => "empty:200",
    http_discover_answered_an_empty_200_that_claims_json => "empty:200+json",
    http_discover_answered_an_empty_202 => "empty:202",
    http_discover_answered_an_empty_event_stream => "empty:200+sse",
}

shapes! { falls_back_over_stdio:
    stdio_discover_answered_with_an_empty_result => "empty-result",
    stdio_discover_answered_with_another_object => "other-result",
    stdio_discover_answered_method_not_found => "error:-32601",
    stdio_discover_answered_invalid_request => "error:-32600",
    stdio_discover_answered_invalid_params => "error:-32602",
    stdio_discover_answered_with_initialize_era_versions_only => "legacy-versions",
}

#[tokio::test]
async fn a_2026_only_server_still_negotiates_2026_07_28_over_http() {
    let server = http_mock(None).await;
    let tools = tools_over_http(&server, "modern-only").await;
    assert!(
        tools.contains(&("echo".to_owned(), "2026-07-28".to_owned())),
        "{tools:?}"
    );
    let methods = server.faults().state().await.methods;
    assert_eq!(methods.get("initialize"), None, "{methods:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn a_2026_only_server_still_negotiates_2026_07_28_over_stdio() {
    let args = [
        "tools",
        "--json",
        "--stdio",
        "--",
        mock_binary(),
        "mock-server",
        "--transport",
        "stdio",
        "--modern-only",
    ];
    let (code, stdout, stderr, took) = cli(&args).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(took < COMMAND_BOUND, "tools took {took:?}: {stderr}");
    let tools: Value = serde_json::from_str(stdout.trim()).expect("one JSON document");
    let echo = tools
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "echo"));
    assert_eq!(
        echo.map(|t| &t["protocol"]),
        Some(&Value::from("2026-07-28")),
        "{tools}"
    );
}

/// Starts a supervisor on `config` and waits until it is ready on 2025-11-25.
async fn ready_on_2025(config: ServerConfig) -> (Supervisor, ToolRegistry) {
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(config, &registry).expect("valid config");
    server.wait_ready(LIMIT).await.expect("ready");
    assert_eq!(
        server.status().protocol().map(str::to_owned).as_deref(),
        Some("2025-11-25")
    );
    (server, registry)
}

#[tokio::test]
async fn after_a_fallback_the_next_generation_opens_with_initialize_at_once_over_http() {
    let mock = http_mock(Some(DiscoverRefusal::EmptyResult)).await;
    let (server, _registry) = ready_on_2025(fast(ServerConfig::http("old", mock.http_url()))).await;
    let mut events = server.events();
    mock.faults().expire_sessions().await;
    ready_generation(&mut events).await;
    let methods = mock.faults().state().await.methods;
    let count = |m: &str| methods.get(m).copied().unwrap_or(0);
    assert_eq!(
        (count("server/discover"), count("initialize")),
        (1, 2),
        "the era was remembered: {methods:?}"
    );
    server.shutdown().await;
    mock.shutdown().await;
}

#[tokio::test]
async fn after_a_fallback_the_next_child_is_opened_with_initialize_at_once() {
    let config = stdio_mock("old", &["--discover-refusal", "empty-result"]);
    let (server, registry) = ready_on_2025(config).await;
    let mut events = server.events();
    call(&registry, "old", "crash", json!({})).await;
    ready_generation(&mut events).await;
    let result = call(&registry, "old", "whoami", json!({})).await;
    let who = Whoami::from_result(&result).expect("a whoami result");
    assert_eq!(
        who.methods.get("server/discover"),
        None,
        "{:?}",
        who.methods
    );
    assert_eq!(who.methods.get("initialize"), Some(&1), "{:?}", who.methods);
    server.shutdown().await;
}

#[tokio::test]
async fn pinned_to_2026_07_28_a_server_that_answers_discover_with_an_empty_result_is_rejected() {
    // The old code called this a transient failure and retried until its 30 s connect timeout.
    let server = http_mock(Some(DiscoverRefusal::EmptyResult)).await;
    let url = server.http_url();
    let args = ["tools", "--url", &url, "--protocol", "2026-07-28"];
    let (code, _, stderr, took) = cli(&args).await;
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("rejected"), "{stderr}");
    assert!(stderr.contains("not a discover result"), "{stderr}");
    assert!(took < COMMAND_BOUND, "tools took {took:?}: {stderr}");
    server.shutdown().await;
}
