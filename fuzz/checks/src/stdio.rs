//! What a stdio child's stdout reaches: our stdio transport's reader (the real
//! [`StdioTransport`], over the bytes in memory, with requests 0 to 9 handed so that their
//! answers are read typed) inside our [`Observed`] wrapper, then the code of ours each kind of
//! message meets: a tool list is published to a registry and written as model-API definitions,
//! an `initialize` answer sets the era memory, a JSON-RPC error is judged (as a call's answer
//! and as the answer to a handshake).

use std::{sync::Arc, time::Duration};

use mcp_resilient::rmcp::{
    ServiceError,
    model::{ErrorData, JsonRpcMessage, ServerResult, Tool},
    service::ClientInitializeError,
    transport::Transport,
};

use mcp_resilient::{
    ToolRegistry,
    fuzzing::{
        Activity, EraMemory, Handshake, Observed, PublishError, StdioTransport, Verdict,
        generation, hand_typed_requests, is_modern, judge,
    },
    state::{Cause, Generation},
};

/// Feeds `data` to the stdio transport as a child's whole stdout, then handles every message
/// it yields. Never panics; every message is stamped as activity; a tool list is refused only
/// for a duplicate raw name, and otherwise gets one valid public name per tool; an error is
/// `Alive` for a call and `rejected` for a handshake, with a plain detail.
pub fn stdio_output(data: &[u8]) {
    let stdout = std::io::Cursor::new(data.to_vec());
    let activity = Activity::new(true);
    hand_typed_requests(&activity);
    let transport = StdioTransport::new(stdout, tokio::io::sink(), 1 << 20, activity.clone());
    let first = generation(1).expect("generation 1 exists");
    let mut io = Observed::new(transport, activity.clone(), "fuzz".into(), first);
    let registry = ToolRegistry::new();
    let era = EraMemory::default();
    let mut listed = None;
    futures::executor::block_on(async {
        while let Some(message) = io.receive().await {
            match message {
                JsonRpcMessage::Response(response) => match response.result {
                    ServerResult::ListToolsResult(page) => {
                        // Each list is a new generation's, as after a reconnect.
                        let next = listed.map_or(1, |n| n + 1);
                        listed = Some(next);
                        let next = generation(next).expect("a generation from 1");
                        publish(&registry, next, page.tools);
                    }
                    ServerResult::InitializeResult(init) => {
                        era.remember(&init.protocol_version);
                        let _ = is_modern(&init.protocol_version);
                    }
                    _ => {}
                },
                JsonRpcMessage::Error(error) => judge_error(error.error),
                JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => {}
            }
        }
        let _ = io.close().await;
    });
    let _ = activity.idle();
}

fn publish(registry: &ToolRegistry, generation: Generation, tools: Vec<Tool>) {
    let server: Arc<str> = Arc::from("fuzz");
    let count = tools.len();
    let mut raw: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    raw.sort_unstable();
    let duplicate = raw.windows(2).any(|w| w[0] == w[1]);
    match mcp_resilient::fuzzing::publish(registry, &server, generation, tools.clone()) {
        Ok(_) => {
            assert!(!duplicate, "a list with a duplicate raw name was published");
            let snapshot = registry.snapshot();
            // Within one server, distinct raw names never share a public name.
            assert_eq!(snapshot.len(), count, "two tools got one public name");
            assert_eq!(
                snapshot.openai_tools().as_array().map(Vec::len),
                Some(count)
            );
            assert_eq!(
                snapshot.anthropic_tools().as_array().map(Vec::len),
                Some(count)
            );
        }
        Err(PublishError::DuplicateTool(name)) => {
            assert!(duplicate, "{name:?} refused as a duplicate but is not one");
        }
        Err(other) => panic!("one server's list was refused: {other}"),
    }
}

fn judge_error(error: ErrorData) {
    assert_eq!(
        judge(&ServiceError::McpError(error.clone())),
        Verdict::Alive,
        "a JSON-RPC error answering a call is not alive"
    );
    let answered = |error: ClientInitializeError| Handshake::Failed {
        error: Box::new(error),
        step: "initialize",
    };
    let direct = answered(ClientInitializeError::JsonRpcError(error.clone()));
    let fallback = answered(ClientInitializeError::LegacyFallbackFailed {
        discover: Box::new(ClientInitializeError::ConnectionClosed("closed".to_owned())),
        fallback: Box::new(ClientInitializeError::JsonRpcError(error.clone())),
    });
    for failed in [direct, fallback] {
        assert_eq!(failed.verdict(), (Cause::Rejected, None));
        if failed.refused_version() {
            assert_eq!(
                error.code,
                mcp_resilient::rmcp::model::ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
            );
        }
        crate::assert_plain(&failed.detail(Duration::from_secs(30)));
    }
}
