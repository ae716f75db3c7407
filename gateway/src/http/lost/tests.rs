use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, NumberOrString, PingRequest,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;

use super::{MAX_ID_CHARS, PROCESS, Tag, Unanswered, tagged};

fn call(id: NumberOrString) -> ClientJsonRpcMessage {
    ClientJsonRpcMessage::request(
        ClientRequest::CallToolRequest(rmcp::model::Request::new(CallToolRequestParams::new(
            "echo",
        ))),
        id,
    )
}

fn ping(id: NumberOrString) -> ClientJsonRpcMessage {
    ClientJsonRpcMessage::request(ClientRequest::PingRequest(PingRequest::default()), id)
}

fn event(id: &str) -> ServerSseMessage {
    ServerSseMessage::priming(id, Duration::from_secs(3))
}

#[test]
fn a_calls_event_ids_name_this_process_and_the_request_and_split_back_to_rmcps() {
    let tag = Tag::of(&call(NumberOrString::Number(17))).expect("a tag");
    let id = tagged(event("3/5"), Some(&tag)).event_id.expect("an id");
    assert_eq!(id, format!("3/5~{}cn17", *PROCESS));
    let (rmcp, tag) = Tag::split(&id);
    assert_eq!(rmcp, "3/5");
    let tag = tag.expect("it parses");
    assert!(tag.here());
    assert_eq!(tag.id, NumberOrString::Number(17));
    assert!(tag.call);
}

#[test]
fn another_processes_tag_is_not_here_and_its_call_is_answered_may_have_run_with_its_id() {
    let (rmcp, tag) = Tag::split("0/2~00000000deadbeefcsabc-1");
    assert_eq!(rmcp, "0/2");
    let tag = tag.expect("it parses");
    assert!(!tag.here());
    let answer = tag.answer();
    assert_eq!(answer.event_id, None);
    let message = answer.message.expect("a message");
    let ServerJsonRpcMessage::Response(response) = message.as_ref() else {
        panic!("a response: {message:?}");
    };
    assert_eq!(response.id, NumberOrString::String("abc-1".into()));
    let ServerResult::CallToolResult(result) = &response.result else {
        panic!("a tool result: {response:?}");
    };
    assert_eq!(result.is_error, Some(true));
    let text = serde_json::to_string(&result.content).expect("json");
    assert!(text.contains("may have run"), "{text}");
}

#[test]
fn any_other_request_lost_is_a_json_rpc_error_with_its_id() {
    let tag = Tag::of(&ping(NumberOrString::Number(-4))).expect("a tag");
    let (_, tag) = Tag::split(&format!("1~{tag}"));
    let message = tag.expect("parses").answer().message.expect("a message");
    let ServerJsonRpcMessage::Error(error) = message.as_ref() else {
        panic!("an error: {message:?}");
    };
    assert_eq!(error.id, Some(NumberOrString::Number(-4)));
    assert!(error.error.message.contains("may have run"));
}

#[test]
fn long_or_unusual_string_ids_are_not_carried_and_events_without_ids_are_left_alone() {
    let long = "x".repeat(MAX_ID_CHARS + 1);
    assert_eq!(Tag::of(&call(NumberOrString::String(long.into()))), None);
    assert_eq!(
        Tag::of(&call(NumberOrString::String("a b\r\nSet-Cookie: x".into()))),
        None
    );
    assert_eq!(Tag::of(&call(NumberOrString::String("".into()))), None);
    let just_at_the_bound = "y".repeat(MAX_ID_CHARS);
    assert!(Tag::of(&call(NumberOrString::String(just_at_the_bound.into()))).is_some());
    let untouched = tagged(ServerSseMessage::retry(Duration::from_secs(3)), Some("tag"));
    assert_eq!(untouched.event_id, None);
    assert_eq!(tagged(event("7"), None).event_id.as_deref(), Some("7"));
}

#[test]
fn malformed_tags_do_not_parse_and_rmcps_own_ids_pass_whole() {
    for id in [
        "3/5",
        "3/5~",
        "3/5~short",
        "3/5~0123456789abcdefx",
        "3/5~0123456789abcdefcn",
        "3/5~0123456789abcdefcnNaN",
        "3/5~0123456789abcdefcq1",
        "3/5~0123456789abcdefcs",
        "3/5~0123456789abcdefcsa b",
    ] {
        let (rmcp, tag) = Tag::split(id);
        assert_eq!(tag, None, "{id}");
        if !id.contains('~') {
            assert_eq!(rmcp, id);
        }
    }
}

#[test]
fn the_drain_limits_answer_is_counted_as_may_have_run() {
    // The count is the process's (other tests may add to it meanwhile): it grows by one at
    // least with each answer.
    for call in [true, false] {
        let before = crate::calls::may_have_run_count();
        let event = Unanswered::new(call, NumberOrString::Number(4)).event();
        assert!(String::from_utf8_lossy(&event).contains("may have run"));
        assert!(crate::calls::may_have_run_count() > before, "call: {call}");
    }
}
