//! Every answer a host receives is valid in the revision the host speaks, whatever revision the
//! upstream behind it spoke: the one place where an answer is shaped for its host.
//!
//! The proxy passes answers on from upstreams of either era to hosts of either era, and the two
//! revisions disagree on the shape of a result:
//!
//! | | 2025-11-25 and earlier | 2026-07-28 |
//! |---|---|---|
//! | `resultType` | unknown | required on every result (`"complete"` for an ordinary one) |
//! | `ttlMs`, `cacheScope` on lists and reads | unknown | required |
//! | a tool's `outputSchema`, `structuredContent` | objects only | any JSON value |
//! | resource not found | `-32002` | `-32602` |
//!
//! rmcp's server dispatch already does what it can tell from the result and the negotiated
//! revision alone: for an older host it drops `resultType: "complete"` and non-object tool
//! output; for a 2026-07-28 host it fills the missing cache hints and renumbers the error. It
//! never adds a missing `resultType`, since a handler that builds its results with rmcp's
//! constructors has one. The proxy's results are not built, they are passed on: one read from a
//! 2025-11-25 upstream has none, and a strict 2026-07-28 host (the Python SDK 2.3, the
//! TypeScript SDK v2) refuses it. So every answer leaves the handler through [`ForHost`], which
//! marks it complete where it says nothing, and rmcp's dispatch, which runs after the handler
//! and knows the request's revision, drops the mark again for an older host. The handler's two
//! exits, `traced` (every request but the tool call) and `call_tool`, are where it is applied.
//!
//! # Invariants
//!
//! 1. Every complete result a 2026-07-28 host receives says `resultType: "complete"`; a result
//!    of another type (`input_required`, a task) keeps its own.
//! 2. A host of an earlier revision receives no `resultType: "complete"` (rmcp's dispatch drops
//!    it for every result type marked here; `cli/tests/it/revisions.rs` checks every message).

use rmcp::model::{
    CallToolResponse, CallToolResult, CompleteResult, ErrorCode, ErrorData, GetPromptResponse,
    GetPromptResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, ReadResourceResponse, ReadResourceResult, ResultType,
};

/// An answer the handler gives a host, shaped for whichever revision the host speaks (see the
/// [module documentation](self)).
pub(super) trait ForHost {
    /// The answer with every revision's required fields that the upstream may have left out.
    fn for_host(self) -> Self;
}

/// Results with an optional `resultType`: absent means complete in every revision that has one.
macro_rules! complete_when_unsaid {
    ($($result:ty),* $(,)?) => {$(
        impl ForHost for $result {
            fn for_host(mut self) -> Self {
                self.result_type.get_or_insert(ResultType::COMPLETE);
                self
            }
        }
    )*};
}

complete_when_unsaid!(
    CallToolResult,
    CompleteResult,
    GetPromptResult,
    ListPromptsResult,
    ListResourceTemplatesResult,
    ListResourcesResult,
    ListToolsResult,
    ReadResourceResult,
);

impl ForHost for CallToolResponse {
    fn for_host(self) -> Self {
        match self {
            CallToolResponse::Complete(result) => CallToolResponse::Complete(result.for_host()),
            other => other,
        }
    }
}

impl ForHost for GetPromptResponse {
    fn for_host(self) -> Self {
        match self {
            GetPromptResponse::Complete(result) => GetPromptResponse::Complete(result.for_host()),
            other => other,
        }
    }
}

impl ForHost for ReadResourceResponse {
    fn for_host(self) -> Self {
        match self {
            ReadResourceResponse::Complete(result) => {
                ReadResourceResponse::Complete(result.for_host())
            }
            other => other,
        }
    }
}

/// An empty answer (`resources/subscribe`, `logging/setLevel`): requests of the session era
/// only, whose empty result rmcp writes.
impl ForHost for () {
    fn for_host(self) -> Self {}
}

/// A `resources/read` refused as not found (`-32002` from a 2025-11-25 upstream, `-32602`
/// from a 2026-07-28 one) names the URI (`data.uri`, which 2026-07-28 asks for, SEP-2164, and
/// an older host may read), when the upstream's error did not. rmcp's dispatch renumbers
/// `-32002` for a 2026-07-28 host.
pub(super) fn names_the_resource(mut error: ErrorData, uri: &str) -> ErrorData {
    let not_found = [ErrorCode::RESOURCE_NOT_FOUND, ErrorCode::INVALID_PARAMS];
    if not_found.contains(&error.code) && error.data.is_none() {
        error.data = Some(serde_json::json!({ "uri": uri }));
    }
    error
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ProtocolVersion, ServerResult};
    use serde_json::{Value, json};

    use super::*;

    /// `json` read as a 2025-11-25 upstream's answer is: no `resultType`.
    fn from_an_older_upstream<T: serde::de::DeserializeOwned>(json: Value) -> T {
        serde_json::from_value(json).expect("a result")
    }

    fn wire(result: &ServerResult) -> Value {
        serde_json::to_value(result).expect("serializable")
    }

    #[test]
    fn a_result_an_older_upstream_sent_without_result_type_is_marked_complete() {
        let call: CallToolResult =
            from_an_older_upstream(json!({"content": [{"type": "text", "text": "hi"}]}));
        assert_eq!(call.result_type, None, "the upstream's answer, as read");
        let result = ServerResult::CallToolResult(call.for_host());
        assert_eq!(wire(&result)["resultType"], json!("complete"));
        let read: ReadResourceResult = from_an_older_upstream(json!({"contents": []}));
        let read = ReadResourceResponse::Complete(read).for_host();
        let ReadResourceResponse::Complete(read) = read else {
            panic!("still complete")
        };
        assert_eq!(read.result_type, Some(ResultType::COMPLETE));
    }

    #[test]
    fn rmcps_dispatch_takes_the_mark_off_again_for_an_older_host() {
        let prompts: ListPromptsResult = from_an_older_upstream(json!({"prompts": []}));
        let mut result = ServerResult::ListPromptsResult(prompts.for_host());
        assert_eq!(wire(&result)["resultType"], json!("complete"));
        // What rmcp's server dispatch does for a host that negotiated an earlier revision.
        assert!(ProtocolVersion::V_2025_11_25.has_initialize());
        result.strip_result_type_for_legacy_peer();
        assert!(wire(&result).get("resultType").is_none());
    }
}
