//! Every message a host receives is valid in the host's revision, whatever its upstream speaks.
//!
//! The matrix: host revision (2025-11-25, 2026-07-28) × upstream revision (the mock, held to
//! one revision by `--protocol`) × front (the stdio `proxy`, `serve`). In each cell a host with
//! no MCP client in between (plain lines on the proxy's stdin and stdout, plain HTTP to serve)
//! lists and calls tools (progress, logging, a tool error, an unknown tool), lists and gets
//! prompts, lists and reads resources (one that does not exist), and completes an argument;
//! every JSON-RPC message it receives is checked against the official JSON Schema of its
//! revision (`schema.rs`), and a message that fails fails the test with the message and the
//! schema paths that refused it.

mod hosts;
mod schema;

use serde_json::{Value, json};

use self::{hosts::Front, schema::Revision};

/// What one cell's host asks, in order: the method and its parameters (the 2026-07-28 `_meta`
/// is added by the host), and whether the answer must be a JSON-RPC error.
fn script(host: Revision) -> Vec<(&'static str, Value, bool)> {
    let mut steps = Vec::new();
    if host == Revision::V2025 {
        steps.push(("ping", json!({}), false));
        steps.push(("logging/setLevel", json!({"level": "debug"}), false));
    }
    steps.extend([
        ("tools/list", json!({}), false),
        (
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
            false,
        ),
        (
            "tools/call",
            json!({"name": "progress", "arguments": {"steps": 3, "ms": 1},
                   "_meta": {"progressToken": "p-1"}}),
            false,
        ),
        (
            "tools/call",
            json!({"name": "log", "arguments": {"level": "warning", "message": "noted"}}),
            false,
        ),
        (
            "tools/call",
            json!({"name": "fail", "arguments": {}}),
            false,
        ),
        (
            "tools/call",
            json!({"name": "no_such_tool", "arguments": {}}),
            true,
        ),
        ("prompts/list", json!({}), false),
        (
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
            false,
        ),
        ("resources/list", json!({}), false),
        ("resources/templates/list", json!({}), false),
        ("resources/read", json!({"uri": "mock://echo/hello"}), false),
        ("resources/read", json!({"uri": "mock://no/such"}), true),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"},
                   "argument": {"name": "name", "value": "A"}}),
            false,
        ),
    ]);
    steps
}

/// Runs the script in one cell and checks every message the host received.
async fn cell(host: Revision, upstream: Revision, front: Front) {
    let mut wire = hosts::Host::start(front, host, upstream).await;
    wire.handshake().await;
    let mut progress = 0;
    for (id, (method, params, error)) in (10..).zip(script(host)) {
        let received = wire.request(id, method, params.clone()).await;
        let answer = received
            .iter()
            .find(|m| m["id"] == json!(id) && m.get("method").is_none())
            .unwrap_or_else(|| panic!("{method} {params} was not answered: {received:?}"));
        assert_eq!(
            answer.get("error").is_some(),
            error,
            "{method} {params}: {answer}"
        );
        progress += received
            .iter()
            .filter(|m| m["method"] == json!("notifications/progress"))
            .count();
    }
    assert!(progress > 0, "no progress reached the host");
    let checked = wire.finish().await;
    eprintln!(
        "revisions: host {} upstream {} {front:?}: {checked} messages checked",
        host.as_str(),
        upstream.as_str()
    );
}

#[tokio::test]
async fn serve_a_2026_host_in_front_of_a_2025_upstream() {
    cell(Revision::V2026, Revision::V2025, Front::Serve).await;
}

#[tokio::test]
async fn serve_a_2026_host_in_front_of_a_2026_upstream() {
    cell(Revision::V2026, Revision::V2026, Front::Serve).await;
}

#[tokio::test]
async fn serve_a_2025_host_in_front_of_a_2026_upstream() {
    cell(Revision::V2025, Revision::V2026, Front::Serve).await;
}

#[tokio::test]
async fn serve_a_2025_host_in_front_of_a_2025_upstream() {
    cell(Revision::V2025, Revision::V2025, Front::Serve).await;
}

#[tokio::test]
async fn proxy_a_2026_host_in_front_of_a_2025_upstream() {
    cell(Revision::V2026, Revision::V2025, Front::Proxy).await;
}

#[tokio::test]
async fn proxy_a_2026_host_in_front_of_a_2026_upstream() {
    cell(Revision::V2026, Revision::V2026, Front::Proxy).await;
}

#[tokio::test]
async fn proxy_a_2025_host_in_front_of_a_2026_upstream() {
    cell(Revision::V2025, Revision::V2026, Front::Proxy).await;
}

#[tokio::test]
async fn proxy_a_2025_host_in_front_of_a_2025_upstream() {
    cell(Revision::V2025, Revision::V2025, Front::Proxy).await;
}
