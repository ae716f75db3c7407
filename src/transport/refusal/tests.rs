//! Each way an older server refuses `server/discover`, and what it becomes.

use std::collections::VecDeque;

use super::*;
use rmcp::model::{
    CustomResult, DiscoverRequest, DiscoverRequestParams, EmptyResult, ListToolsRequest,
};
use serde_json::json;

/// A transport that answers from a script.
struct Scripted(VecDeque<ServerJsonRpcMessage>);

impl Transport<RoleClient> for Scripted {
    type Error = std::io::Error;

    fn send(
        &mut self,
        _: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        std::future::ready(Ok(()))
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        self.0.pop_front()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

fn discover(id: i64) -> TxJsonRpcMessage<RoleClient> {
    let request = DiscoverRequest::new(DiscoverRequestParams {});
    TxJsonRpcMessage::<RoleClient>::request(
        ClientRequest::DiscoverRequest(request),
        RequestId::Number(id),
    )
}

#[tokio::test]
async fn only_the_handshakes_discover_is_read_and_a_later_probe_is_answered_as_is() {
    let empty = |id| ServerJsonRpcMessage::response(ServerResult::empty(()), RequestId::Number(id));
    let script = VecDeque::from([empty(1), empty(3)]);
    let mut io = DiscoverRefusals::new(Scripted(script), true);
    io.send(discover(1)).await.expect("sent");
    let answer = io.receive().await.expect("an answer");
    assert!(
        matches!(&answer, JsonRpcMessage::Error(e) if e.error.code == ErrorCode::METHOD_NOT_FOUND)
    );
    let list = ClientRequest::ListToolsRequest(ListToolsRequest::default());
    io.send(TxJsonRpcMessage::<RoleClient>::request(
        list,
        RequestId::Number(2),
    ))
    .await
    .expect("sent");
    io.send(discover(3)).await.expect("sent");
    let probe = io.receive().await.expect("an answer");
    assert!(matches!(probe, JsonRpcMessage::Response(_)), "{probe:?}");
}

fn initialize(id: i64) -> TxJsonRpcMessage<RoleClient> {
    let request = rmcp::model::InitializeRequest::new(Default::default());
    TxJsonRpcMessage::<RoleClient>::request(
        ClientRequest::InitializeRequest(request),
        RequestId::Number(id),
    )
}

#[tokio::test]
async fn a_late_answer_to_an_abandoned_discover_is_dropped_and_initialize_gets_its_own() {
    // rmcp's `Auto` sent `server/discover` (0), waited out its timeout and sent `initialize` (1);
    // the server's answer to 0 comes first. Either shape of it is dropped, once.
    let late_result = ServerJsonRpcMessage::response(ServerResult::empty(()), RequestId::Number(0));
    let late_error = ServerJsonRpcMessage::error(
        ErrorData::new(ErrorCode::METHOD_NOT_FOUND, "unknown", None),
        Some(RequestId::String("0".into())),
    );
    for late in [late_result, late_error] {
        let initialized =
            ServerJsonRpcMessage::response(ServerResult::empty(()), RequestId::Number(1));
        let again = ServerJsonRpcMessage::response(ServerResult::empty(()), RequestId::Number(0));
        let script = VecDeque::from([late, initialized, again]);
        let mut io = DiscoverRefusals::new(Scripted(script), true);
        let fell_back = io.fell_back();
        io.send(discover(0)).await.expect("sent");
        assert!(!fell_back.load(std::sync::atomic::Ordering::Relaxed));
        io.send(initialize(1)).await.expect("sent");
        assert!(fell_back.load(std::sync::atomic::Ordering::Relaxed));
        let answer = io.receive().await.expect("an answer");
        assert!(
            matches!(&answer, JsonRpcMessage::Response(r) if r.id == RequestId::Number(1)),
            "initialize's answer, not the late one: {answer:?}"
        );
        let next = io.receive().await.expect("passed on");
        assert!(
            matches!(&next, JsonRpcMessage::Response(r) if r.id == RequestId::Number(0)),
            "only one answer is dropped: {next:?}"
        );
    }
}

#[tokio::test]
async fn an_answered_discover_abandons_nothing() {
    // The usual fallback: the refusal came, then `initialize`; a later response with the
    // discover's id (a sloppy server's duplicate) is passed on for the session to judge.
    let refusal = ServerJsonRpcMessage::error(
        ErrorData::new(ErrorCode::METHOD_NOT_FOUND, "unknown", None),
        Some(RequestId::Number(0)),
    );
    let duplicate = ServerJsonRpcMessage::response(ServerResult::empty(()), RequestId::Number(0));
    let mut io = DiscoverRefusals::new(Scripted(VecDeque::from([refusal, duplicate])), true);
    io.send(discover(0)).await.expect("sent");
    assert!(matches!(io.receive().await, Some(JsonRpcMessage::Error(_))));
    io.send(initialize(1)).await.expect("sent");
    assert!(matches!(
        io.receive().await,
        Some(JsonRpcMessage::Response(_))
    ));
}

fn probe() -> RequestId {
    RequestId::Number(1)
}

fn refused(judged: Judged) -> Option<String> {
    match judged {
        Judged::Answer(JsonRpcMessage::Error(e)) if e.error.code == ErrorCode::METHOD_NOT_FOUND => {
            assert_eq!(e.id, Some(probe()));
            Some(e.error.message.to_string())
        }
        _ => None,
    }
}

#[test]
fn a_result_that_is_not_a_discover_result_is_a_refusal() {
    for result in [
        ServerResult::EmptyResult(EmptyResult {}),
        ServerResult::CustomResult(CustomResult::new(json!({"ok": true}))),
    ] {
        let message = ServerJsonRpcMessage::response(result, probe());
        let said = refused(judge(&probe(), message)).expect("a refusal");
        assert!(said.contains("not a discover result"), "{said}");
    }
}

#[test]
fn a_version_refusal_is_a_refusal_only_when_it_names_initialize_era_versions_alone() {
    let refusal = |supported: &[ProtocolVersion]| {
        let error =
            ErrorData::unsupported_protocol_version(ProtocolVersion::V_2026_07_28, supported);
        judge(&probe(), ServerJsonRpcMessage::error(error, Some(probe())))
    };
    let said = refused(refusal(&[ProtocolVersion::V_2025_11_25])).expect("a refusal");
    assert!(said.contains("2025-11-25"), "{said}");
    let modern = refusal(&[ProtocolVersion::V_2026_07_28, ProtocolVersion::V_2025_11_25]);
    assert!(matches!(modern, Judged::Answer(JsonRpcMessage::Error(e))
        if e.error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION));
    assert!(refused(refusal(&[])).is_none());
}

#[test]
fn an_error_for_an_id_never_sent_answers_the_probe_and_others_pass() {
    let stray = ErrorData::invalid_request("bad", None);
    let stray = ServerJsonRpcMessage::error(stray, Some(RequestId::String("server-error".into())));
    assert!(refused(judge(&probe(), stray)).is_some());
    let plain = ServerJsonRpcMessage::error(ErrorData::invalid_params("x", None), None);
    assert!(
        matches!(judge(&probe(), plain), Judged::Answer(JsonRpcMessage::Error(e))
        if e.error.code == ErrorCode::INVALID_PARAMS)
    );
    let late = ServerJsonRpcMessage::response(ServerResult::empty(()), RequestId::Number(9));
    assert!(matches!(judge(&probe(), late), Judged::Other(_)));
}
