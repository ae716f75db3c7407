//! The `confirm` tool: `input_required` rounds for 2026-07-28 clients, a real
//! `elicitation/create` for initialize-era sessions.

use crate::common;
use crate::modern;

use common::{text, within};
use mcp_mock_server::{MockOptions, MockServer, MockTransport};
use modern::{Asker, Era, connect_http, connect_stdio, error_code, params, spawn_stdio};
use rmcp::model::{CallToolResponse, ErrorCode, InputResponses};
use serde_json::json;

const QUESTION: &str = "deploy now?";

async fn start() -> MockServer {
    let opts = MockOptions {
        transport: MockTransport::Http,
        ..MockOptions::default()
    };
    within("start", MockServer::start(opts))
        .await
        .expect("start")
}

fn confirm() -> rmcp::model::CallToolRequestParams {
    params("confirm", json!({"question": QUESTION}))
}

fn answered() -> Asker {
    Asker::answering(json!({"confirmed": false, "note": "not today"}))
}

async fn round_trip(running: &modern::Running, asker: &Asker) {
    let result = within("confirm", running.call_tool(confirm()))
        .await
        .expect("confirm");
    assert_eq!(text(&result), "confirmed: false (not today)");
    let asked = asker.questions();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["message"], json!(QUESTION));
    let properties = &asked[0]["requestedSchema"]["properties"];
    assert_eq!(properties["confirmed"]["default"], json!(true));
    assert_eq!(properties["note"]["default"], json!("ok"));
}

#[tokio::test]
async fn a_2026_client_over_http_confirms_through_input_required_rounds() {
    let server = start().await;
    let asker = answered();
    let running = connect_http(&server.http_url(), Era::Modern, asker.clone()).await;
    round_trip(&running, &asker).await;
    let state = server.faults().state().await;
    assert_eq!(state.methods.get("tools/call"), Some(&2), "two rounds");
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn a_2026_client_over_stdio_confirms_through_input_required_rounds() {
    let mut child = spawn_stdio(&[]);
    let asker = answered();
    let running = connect_stdio(&mut child, Era::Modern, asker.clone()).await;
    round_trip(&running, &asker).await;
}

#[tokio::test]
async fn a_retry_with_a_wrong_used_or_missing_request_state_is_invalid_params() {
    let server = start().await;
    let running = connect_http(&server.http_url(), Era::Modern, answered()).await;
    let first = within("first round", running.call_tool_once(confirm()))
        .await
        .expect("first round");
    let CallToolResponse::InputRequired(first) = first else {
        panic!("expected input_required, got {first:?}")
    };
    let requests = first.input_requests.expect("input requests");
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["confirm"]);
    let state = first.request_state.expect("a request state");
    let responses = InputResponses::from([(
        "confirm".to_owned(),
        json!({"action": "accept", "content": {"confirmed": true, "note": "yes"}}),
    )]);
    let retry = |state: Option<String>| {
        let mut params = confirm();
        params.input_responses = Some(responses.clone());
        params.request_state = state;
        running.call_tool_once(params)
    };

    let tampered = state.replace(QUESTION, "other question?");
    for bad in [None, Some("forged".to_owned()), Some(tampered)] {
        let refused = within("bad retry", retry(bad.clone())).await;
        assert_eq!(error_code(refused), ErrorCode::INVALID_PARAMS, "{bad:?}");
    }
    let done = within("retry", retry(Some(state.clone())))
        .await
        .expect("retry");
    let CallToolResponse::Complete(done) = done else {
        panic!("expected a result, got {done:?}")
    };
    assert_eq!(text(&done), "confirmed: true (yes)");
    let replayed = within("replay", retry(Some(state))).await;
    assert_eq!(error_code(replayed), ErrorCode::INVALID_PARAMS, "used once");
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn a_legacy_session_over_http_is_asked_with_elicitation_create() {
    let server = start().await;
    let asker = answered();
    let running = connect_http(&server.http_url(), Era::Legacy, asker.clone()).await;
    round_trip(&running, &asker).await;
    let state = server.faults().state().await;
    assert_eq!(
        state.methods.get("tools/call"),
        Some(&1),
        "one call, no rounds"
    );
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn a_legacy_session_over_stdio_is_asked_with_elicitation_create() {
    let mut child = spawn_stdio(&[]);
    let asker = answered();
    let running = connect_stdio(&mut child, Era::Legacy, asker.clone()).await;
    round_trip(&running, &asker).await;
}

#[tokio::test]
async fn a_client_without_elicitation_gets_a_tool_error_in_both_eras() {
    let server = start().await;
    for era in [Era::Legacy, Era::Modern] {
        let running = connect_http(&server.http_url(), era, Asker::mute()).await;
        let result = within("confirm", running.call_tool(confirm()))
            .await
            .expect("a tool result");
        assert_eq!(result.is_error, Some(true), "{era:?}: {result:?}");
        assert!(text(&result).contains("elicitation"), "{result:?}");
    }
    within("shutdown", server.shutdown()).await;
}
