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
    if host == Revision::V2026 {
        // An input response that is not an object: a malformed request (SEP-2322).
        let params =
            json!({"name": "echo", "arguments": {"text": "x"}, "inputResponses": {"k": 5}});
        steps.push(("tools/call", params, true));
    }
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
        // Asks the host (an elicitation, or a 2026-07-28 upstream's input_required round).
        (
            "tools/call",
            json!({"name": "confirm", "arguments": {"question": "go?"}}),
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
    let mut told = std::collections::BTreeMap::<String, usize>::new();
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
        if params["uri"] == json!("mock://no/such") {
            assert_eq!(answer["error"]["data"]["uri"], params["uri"], "{answer}");
        }
        if params["name"] == json!("confirm")
            && matches!(front, Front::Proxy)
            && host == Revision::V2025
        {
            // The stdio host answered the elicitation, whichever way the upstream asked.
            let text = answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default();
            assert!(text.contains("from the host"), "{answer}");
        }
        progress += received
            .iter()
            .filter(|m| m["method"] == json!("notifications/progress"))
            .count();
        for method in received.iter().filter_map(|m| m["method"].as_str()) {
            *told.entry(method.to_owned()).or_default() += 1;
        }
    }
    assert!(progress > 0, "no progress reached the host");
    let checked = wire.finish().await;
    eprintln!(
        "revisions: host {} upstream {} {front:?}: {checked} messages checked; notifications {told:?}",
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

/// A 2026-07-28 host on stdio whose first request is `tools/list` (no `initialize`, no
/// `server/discover` before it: the SDKs' hosts do this) is shown the upstream's tools: the
/// request starts the upstreams and is answered after that start, not with the none before it.
async fn first_request_lists_tools(upstream: Revision) {
    let mut host = hosts::Host::start(Front::Proxy, Revision::V2026, upstream).await;
    let listed = host.request(1, "tools/list", json!({})).await;
    let answer = (listed.iter())
        .find(|m| m["id"] == json!(1))
        .expect("the answer");
    let tools = answer["result"]["tools"].as_array().expect("tools");
    assert!(
        tools.iter().any(|t| t["name"] == json!("echo")),
        "the upstream's tools at the first request: {answer}"
    );
    host.finish().await;
}

#[tokio::test]
async fn proxy_a_2026_host_whose_first_request_is_tools_list_sees_a_2025_upstreams_tools() {
    first_request_lists_tools(Revision::V2025).await;
}

#[tokio::test]
async fn proxy_a_2026_host_whose_first_request_is_tools_list_sees_a_2026_upstreams_tools() {
    first_request_lists_tools(Revision::V2026).await;
}

/// A 2026-07-28 host on stdio hears a change of its tools on its listen stream, stamped with
/// the stream's subscription id, and nowhere else; every message it gets is valid.
async fn listen_on_stdio(upstream: Revision) {
    let mut host = hosts::Host::start(Front::Proxy, Revision::V2026, upstream).await;
    host.handshake().await;
    let filter = json!({"notifications": {"toolsListChanged": true}});
    host.send(5, "subscriptions/listen", filter).await;
    let acknowledged = host
        .read_until(|m| m["method"] == json!("notifications/subscriptions/acknowledged"))
        .await;
    let ack = acknowledged.last().expect("the acknowledgment");
    let subscription = ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].clone();
    assert!(!subscription.is_null(), "{ack}");
    assert_eq!(
        ack["params"]["notifications"]["toolsListChanged"],
        json!(true)
    );
    let change = json!({"name": "set_tools", "arguments": {"add": ["fresh"]}});
    // The change may be told before or after the call's answer: it is the stream's, not the
    // call's.
    let changed = |m: &serde_json::Value| m["method"] == json!("notifications/tools/list_changed");
    let mut told = host.request(6, "tools/call", change).await;
    if !told.iter().any(changed) {
        told = host.read_until(changed).await;
    }
    let change = told.iter().find(|m| changed(m)).expect("the change");
    assert_eq!(
        change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], subscription,
        "{change}"
    );
    let listed = host.request(7, "tools/list", json!({})).await;
    let tools = &listed.last().expect("the list")["result"]["tools"];
    assert!(
        tools
            .as_array()
            .expect("tools")
            .iter()
            .any(|t| t["name"] == json!("fresh")),
        "{tools}"
    );
    host.notify("notifications/cancelled", json!({"requestId": 5}))
        .await;
    let checked = host.finish().await;
    eprintln!(
        "revisions: listen on stdio, upstream {}: {checked} messages checked",
        upstream.as_str()
    );
}

#[tokio::test]
async fn proxy_a_2026_host_hears_tool_changes_on_its_listen_stream_from_a_2025_upstream() {
    listen_on_stdio(Revision::V2025).await;
}

#[tokio::test]
async fn proxy_a_2026_host_hears_tool_changes_on_its_listen_stream_from_a_2026_upstream() {
    listen_on_stdio(Revision::V2026).await;
}

/// `inputResponses: null` is malformed (a JSON-RPC error, SEP-2322); rmcp's typed parse reads
/// it as absent, so `serve` looks at the body itself. (The stdio front reads the same parse and
/// takes it for absent: the call runs.)
#[tokio::test]
async fn serve_refuses_a_2026_call_whose_input_responses_are_null() {
    let mut host = hosts::Host::start(Front::Serve, Revision::V2026, Revision::V2025).await;
    host.handshake().await;
    let call = json!({"name": "echo", "arguments": {"text": "x"}, "inputResponses": null});
    let answered = host.request(5, "tools/call", call).await;
    let answer = answered.last().expect("an answer");
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
    let fine = json!({"name": "echo", "arguments": {"text": "x"}, "inputResponses": {}});
    let answered = host.request(6, "tools/call", fine).await;
    let answer = answered.last().expect("an answer");
    assert_eq!(
        answer["result"]["content"][0]["text"],
        json!("x"),
        "{answer}"
    );
    host.finish().await;
}
