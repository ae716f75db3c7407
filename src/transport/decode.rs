//! Server messages read straight from their bytes.
//!
//! rmcp's `ServerJsonRpcMessage` is an untagged enum of untagged enums: serde buffers the whole
//! message into its `Content` tree, then tries each kind of message and, for a response, each of
//! twenty kinds of result, making and dropping an error for each miss (23 of them for a `ping`'s
//! `{}`; a third of the instructions of a probe, BENCHMARKS.md § 13). An answer on a request's
//! own stream is known to answer that request, so its result is read as the one type that
//! request's method returns, from a borrowed view of the bytes: one pass, no buffering. Anything
//! else, or a result that does not read as that type, takes rmcp's own path, so what a message
//! means never differs from what rmcp would make of it, only what it costs.

use rmcp::model::{
    ErrorData, JsonRpcResponse, JsonRpcVersion2_0, RequestId, ServerJsonRpcMessage, ServerResult,
};
use serde::Deserialize;
use serde_json::value::RawValue;

/// The parts of a message that say what it is, borrowed from its bytes (also how legacy SSE's
/// reader knows a direct probe's answer).
#[derive(Deserialize)]
pub(in crate::transport) struct Head<'a> {
    #[serde(rename = "jsonrpc")]
    _jsonrpc: JsonRpcVersion2_0,
    #[serde(default)]
    pub(in crate::transport) id: Option<RequestId>,
    #[serde(borrow, default)]
    pub(in crate::transport) method: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(in crate::transport) result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(in crate::transport) error: Option<&'a RawValue>,
}

/// The message in `bytes`; `method` is the method of the request on whose answer it arrived,
/// if any (see the module docs).
pub(in crate::transport) fn message(
    bytes: &[u8],
    method: Option<&str>,
) -> Result<ServerJsonRpcMessage, serde_json::Error> {
    message_for(bytes, |_| method.and_then(Typed::of))
}

/// The message in `bytes`, where `method` says what the request with a given id returns (for
/// answers that do not arrive on their request's own stream: legacy SSE's and stdio's).
pub(in crate::transport) fn message_for(
    bytes: &[u8],
    method: impl FnOnce(&RequestId) -> Option<Typed>,
) -> Result<ServerJsonRpcMessage, serde_json::Error> {
    if let Ok(head) = serde_json::from_slice::<Head>(bytes)
        && head.method.is_none()
    {
        match (head.id, head.result, head.error) {
            (Some(id), Some(result), None) => {
                if let Some(result) = typed(method(&id), result.get()) {
                    let response = JsonRpcResponse {
                        jsonrpc: JsonRpcVersion2_0,
                        id,
                        result,
                    };
                    return Ok(ServerJsonRpcMessage::Response(response));
                }
            }
            (id, None, Some(error)) => {
                if let Ok(error) = serde_json::from_str::<ErrorData>(error.get()) {
                    return Ok(ServerJsonRpcMessage::error(error, id));
                }
            }
            _ => {}
        }
    }
    serde_json::from_slice(bytes)
}

/// A message on a probe's own answer (a JSON body or its event stream; see [`super::probe`]).
/// The probe needs only whether its answer is a result or an error, so its result is checked
/// to be JSON and never typed: it reads as an empty result, which goes no further than the
/// probe. Anything else takes [`message`]'s path, typed by no method (it answers no request
/// whose method this stream knows).
pub(in crate::transport) fn probe_answer(
    bytes: &[u8],
    probe: &RequestId,
) -> Result<ServerJsonRpcMessage, serde_json::Error> {
    if let Ok(head) = serde_json::from_slice::<Head>(bytes)
        && head.method.is_none()
        && head.error.is_none()
        && head.result.is_some()
        && head.id.as_ref() == Some(probe)
    {
        let response = JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: probe.clone(),
            result: ServerResult::EmptyResult(rmcp::model::EmptyResult {}),
        };
        return Ok(ServerJsonRpcMessage::Response(response));
    }
    message(bytes, None)
}

/// A method whose result is read as the one type it returns (see [`typed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::transport) enum Typed {
    Ping,
    CallTool,
    ListTools,
    Discover,
    Initialize,
}

impl Typed {
    /// `method`, if its result is read typed.
    pub(in crate::transport) fn of(method: &str) -> Option<Typed> {
        Some(match method {
            "ping" => Typed::Ping,
            "tools/call" => Typed::CallTool,
            "tools/list" => Typed::ListTools,
            "server/discover" => Typed::Discover,
            "initialize" => Typed::Initialize,
            _ => return None,
        })
    }
}

/// The result of a `method` request, read as the type that method returns; `None` for no
/// method, or when it does not read as that type.
fn typed(method: Option<Typed>, raw: &str) -> Option<ServerResult> {
    let result = match method? {
        Typed::Ping => ServerResult::EmptyResult(serde_json::from_str(raw).ok()?),
        Typed::CallTool => ServerResult::CallToolResult(serde_json::from_str(raw).ok()?),
        Typed::ListTools => ServerResult::ListToolsResult(serde_json::from_str(raw).ok()?),
        Typed::Discover => ServerResult::DiscoverResult(serde_json::from_str(raw).ok()?),
        Typed::Initialize => ServerResult::InitializeResult(serde_json::from_str(raw).ok()?),
    };
    Some(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What rmcp's own path makes of `text`.
    fn rmcp(text: &str) -> ServerJsonRpcMessage {
        serde_json::from_str(text).expect("a message")
    }

    #[test]
    fn every_answer_reads_as_rmcp_reads_it() {
        let cases = [
            ("ping", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            (
                "ping",
                r#"{"jsonrpc":"2.0","id":"p","result":{"_meta":{"a":1}}}"#,
            ),
            (
                "tools/call",
                r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}]}}"#,
            ),
            ("tools/call", r#"{"jsonrpc":"2.0","id":2,"result":{}}"#),
            (
                "tools/list",
                r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}"#,
            ),
            (
                "tools/call",
                r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no"}}"#,
            ),
            (
                "tools/call",
                r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse"}}"#,
            ),
            (
                "tools/call",
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#,
            ),
            ("tools/call", r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#),
        ];
        for (method, text) in cases {
            let ours = message(text.as_bytes(), Some(method)).expect(text);
            let theirs = rmcp(text);
            assert_eq!(
                serde_json::to_value(&ours).unwrap(),
                serde_json::to_value(&theirs).unwrap(),
                "{text}"
            );
            assert_eq!(
                std::mem::discriminant(&ours),
                std::mem::discriminant(&theirs),
                "{text}"
            );
        }
    }

    #[test]
    fn a_probe_answer_is_a_result_or_an_error_and_anything_else_reads_as_rmcp_reads_it() {
        let probe = RequestId::String("mcp-resilient-probe-7".into());
        let discover = r#"{"jsonrpc":"2.0","id":"mcp-resilient-probe-7","result":{"supportedVersions":["2026-07-28"],"capabilities":{},"serverInfo":{"name":"s","version":"1"},"x":[1,2,{"y":null}]}}"#;
        match probe_answer(discover.as_bytes(), &probe).unwrap() {
            ServerJsonRpcMessage::Response(r) => {
                assert_eq!(r.id, probe);
                assert!(matches!(r.result, ServerResult::EmptyResult(_)));
            }
            other => panic!("{other:?}"),
        }
        // Errors, other requests' answers, requests and notifications: as rmcp reads them.
        for text in [
            r#"{"jsonrpc":"2.0","id":"mcp-resilient-probe-7","error":{"code":-32601,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}"#,
            r#"{"jsonrpc":"2.0","id":"mcp-resilient-probe-8","result":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}"#,
            r#"{"jsonrpc":"2.0","id":"mcp-resilient-probe-7","method":"ping"}"#,
        ] {
            let ours = probe_answer(text.as_bytes(), &probe).expect(text);
            assert_eq!(
                serde_json::to_value(&ours).unwrap(),
                serde_json::to_value(rmcp(text)).unwrap(),
                "{text}"
            );
        }
        // A result that is no JSON is no answer.
        let broken = r#"{"jsonrpc":"2.0","id":"mcp-resilient-probe-7","result":{"a":}}"#;
        assert!(probe_answer(broken.as_bytes(), &probe).is_err());
    }

    #[test]
    fn every_method_read_typed_has_its_type() {
        let discover = serde_json::to_string(&rmcp::model::DiscoverResult::new(
            vec![rmcp::model::ProtocolVersion::V_2026_07_28],
            Default::default(),
        ))
        .unwrap();
        let results = [
            ("ping", "{}"),
            ("tools/call", r#"{"content":[]}"#),
            ("tools/list", r#"{"tools":[]}"#),
            ("server/discover", discover.as_str()),
            (
                "initialize",
                r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}"#,
            ),
        ];
        for (method, result) in results {
            assert!(Typed::of(method).is_some(), "{method}");
            assert!(typed(Typed::of(method), result).is_some(), "{method}");
        }
        assert_eq!(Typed::of("resources/read"), None);
    }

    #[test]
    fn an_answer_is_read_as_the_method_its_id_had() {
        let text = r#"{"jsonrpc":"2.0","id":5,"result":{"tools":[]}}"#;
        let mut asked = None;
        let ours = message_for(text.as_bytes(), |id| {
            asked = Some(id.clone());
            Some(Typed::ListTools)
        })
        .unwrap();
        assert_eq!(asked, Some(RequestId::Number(5)));
        match ours {
            ServerJsonRpcMessage::Response(r) => {
                assert!(matches!(r.result, ServerResult::ListToolsResult(_)));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn what_is_no_message_fails_as_rmcp_fails() {
        for text in [
            "{}",
            "[1]",
            r#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
            "nope",
        ] {
            assert!(message(text.as_bytes(), Some("ping")).is_err(), "{text}");
        }
    }
}
