//! What a call's outcome becomes in rig: a [`ToolOutput`] the model reads, or a
//! [`ToolExecutionError`] whose model-visible text says what happened.

use rig_core::{
    message::ToolResultContent,
    tool::{ToolErrorKind, ToolExecutionError, ToolOutput},
};
use rmcp::model::{CallToolResult, ContentBlock};

use crate::{CallError, call::CallPhase};

/// A tool result as rig output.
///
/// - Text blocks stay text blocks, in the server's order; an image becomes an image block.
/// - Audio, embedded resources and resource links become JSON blocks of their MCP form.
/// - `structuredContent` becomes a JSON block after the content, unless a text block already
///   carries the same value (servers are asked to send it both ways; the model reads it once).
/// - `isError: true` becomes an error whose message is the server's text and whose model output
///   is the server's content, so the model sees the tool's own words.
pub fn tool_output(result: CallToolResult) -> Result<ToolOutput, ToolExecutionError> {
    let text = joined_text(&result.content);
    let mut blocks: Vec<ToolResultContent> = result.content.iter().map(block).collect();
    if let Some(value) = result.structured_content
        && !repeated_in_text(&result.content, &value)
    {
        blocks.push(ToolResultContent::json(value));
    }
    let output = ToolOutput::content(blocks).unwrap_or_else(|_| ToolOutput::text(""));
    if result.is_error == Some(true) {
        let message = if text.is_empty() {
            "the tool reported an error without a message".to_owned()
        } else {
            text
        };
        return Err(ToolExecutionError::new(ToolErrorKind::Other, message)
            .with_model_output(output)
            .with_code("tool_error"));
    }
    Ok(output)
}

/// A [`CallError`] as a rig tool error, in words the model can act on: what happened, then
/// whether the call ran and may be sent again. That second part, and rig's `retryable` flag,
/// come from the [`CallError`] table: `retryable` is
/// [`may_send_again`](CallError::may_send_again), not [`is_transient`](CallError::is_transient),
/// because a model that retries a `Timeout` or a call lost in flight may run it twice. The
/// `CallError` stays the source.
pub fn call_error(error: &CallError) -> ToolExecutionError {
    let (kind, what) = what_happened(error);
    let message = format!("{what} {}", error.advice());
    let mut rig = ToolExecutionError::new(kind, message)
        .with_retryable(error.may_send_again())
        .with_source(error.clone());
    if let CallError::Overloaded { status, .. }
    | CallError::Http {
        status: Some(status),
        ..
    } = error
    {
        rig = rig.with_http_status(*status);
    }
    rig
}

/// `(kind, sentence)` for each way a call can fail: what happened, nothing about running or
/// sending again (see `call_error`).
fn what_happened(error: &CallError) -> (ToolErrorKind, String) {
    use ToolErrorKind as K;
    match error {
        CallError::Unavailable { server, state } => (
            K::Network,
            format!(
                "The MCP server '{server}' is not connected right now (it is {state}), so the \
                 call was not sent."
            ),
        ),
        CallError::ConnectionLost {
            server,
            may_have_run: true,
            ..
        } => (
            K::Network,
            format!(
                "The connection to the MCP server '{server}' was lost while the call was in \
                 flight."
            ),
        ),
        CallError::ConnectionLost { server, .. } => (
            K::Network,
            format!("The connection to the MCP server '{server}' was lost before the call ran."),
        ),
        CallError::Timeout {
            server,
            phase: CallPhase::Answer,
            after,
        } => (
            K::Timeout,
            format!(
                "The MCP server '{server}' did not answer within {after:?}; the call was \
                 cancelled."
            ),
        ),
        CallError::Timeout { server, after, .. } => (
            K::Timeout,
            format!(
                "The host did not answer the MCP server '{server}''s request for input within \
                 {after:?}; the call was cancelled."
            ),
        ),
        CallError::ToolNotFound { name } => (
            K::NotFound,
            format!("There is no tool named '{name}' right now."),
        ),
        CallError::Server(data) => {
            let kind = if data.code == rmcp::model::ErrorCode::INVALID_PARAMS {
                K::InvalidArgs
            } else {
                K::Provider
            };
            (
                kind,
                format!("The server refused the call: {}", data.message),
            )
        }
        CallError::Protocol { detail } => (
            K::Provider,
            format!("The server's answer could not be read: {detail}"),
        ),
        CallError::Overloaded { server, .. } => (
            K::RateLimited,
            format!("The MCP server '{server}' is overloaded and refused the call."),
        ),
        CallError::Http { server, .. } => (
            K::Network,
            format!("The MCP server '{server}' answered with an HTTP error ({error})."),
        ),
        CallError::AuthUnavailable { server, detail } => (
            K::Network,
            format!(
                "No token could be had for the MCP server '{server}': its authorization server \
                 did not answer ({detail}), so the call was not sent."
            ),
        ),
        CallError::InputRequired { server, asked } => (
            K::Other,
            format!(
                "The MCP server '{server}' asked for {asked}, which this host does not answer; \
                 the call did not complete."
            ),
        ),
        CallError::Rejected { server, detail, .. } => (
            K::PermissionDenied,
            format!("The MCP server '{server}' refused the call ({detail})."),
        ),
    }
}

fn block(content: &ContentBlock) -> ToolResultContent {
    match content {
        ContentBlock::Text(text) => ToolResultContent::text(text.text.clone()),
        ContentBlock::Image(image) => {
            use rig_core::message::MimeType;
            let media = rig_core::message::ImageMediaType::from_mime_type(&image.mime_type);
            ToolResultContent::image_base64(image.data.clone(), media, None)
        }
        other => ToolResultContent::json(serde_json::to_value(other).unwrap_or_default()),
    }
}

fn joined_text(content: &[ContentBlock]) -> String {
    let texts: Vec<&str> = content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect();
    texts.join("\n")
}

fn repeated_in_text(content: &[ContentBlock], value: &serde_json::Value) -> bool {
    content.iter().filter_map(ContentBlock::as_text).any(|t| {
        serde_json::from_str::<serde_json::Value>(&t.text).is_ok_and(|parsed| parsed == *value)
    })
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolResult, ContentBlock};
    use serde_json::json;

    use super::*;
    use crate::ConnectionState;

    #[test]
    fn text_stays_text() {
        let output = tool_output(CallToolResult::success(vec![ContentBlock::text("hi")])).unwrap();
        assert_eq!(output.as_text(), Some("hi"));
    }

    #[test]
    fn structured_content_is_kept_once() {
        let value = json!({"sum": 3});
        let mut result = CallToolResult::success(vec![ContentBlock::text("three")]);
        result.structured_content = Some(value.clone());
        let output = tool_output(result).unwrap();
        assert_eq!(output.as_content().len(), 2);
        assert_eq!(output.as_content()[1].as_json(), Some(&value));

        let mut echoed = CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
        echoed.structured_content = Some(value);
        assert_eq!(tool_output(echoed).unwrap().as_content().len(), 1);
    }

    #[test]
    fn is_error_becomes_a_tool_error_with_the_servers_text() {
        let result = CallToolResult::error(vec![ContentBlock::text("disk full")]);
        let error = tool_output(result).unwrap_err();
        assert_eq!(error.message(), "disk full");
        assert_eq!(error.model_feedback(), Some("disk full"));
    }

    #[test]
    fn an_unanswered_authorization_says_the_call_was_not_sent() {
        let error = call_error(&CallError::AuthUnavailable {
            server: "linear".into(),
            detail: "the authorization server did not answer a refresh: 503".into(),
        });
        let text = error.model_feedback().unwrap();
        assert!(
            text.contains("was not sent") && text.contains("503"),
            "{text}"
        );
        assert_eq!(error.kind(), ToolErrorKind::Network);
    }

    /// rig's `retryable` is the table's `may_send_again`: a timeout is transient, but the call
    /// may have run, so a model is not told to send it again.
    #[test]
    fn retryable_means_safe_to_send_again_not_transient() {
        let timeout = CallError::Timeout {
            server: "files".into(),
            phase: CallPhase::Answer,
            after: std::time::Duration::from_secs(5),
        };
        assert!(timeout.is_transient());
        let error = call_error(&timeout);
        assert_eq!(error.retryable(), Some(false));
        assert!(
            error
                .model_feedback()
                .unwrap()
                .contains("did not answer within 5s"),
            "{error:?}"
        );
        let overloaded = call_error(&CallError::Overloaded {
            server: "files".into(),
            status: 429,
            retry_after: None,
        });
        assert_eq!(overloaded.retryable(), Some(true));
        let stopped = call_error(&CallError::Unavailable {
            server: "files".into(),
            state: ConnectionState::Stopped,
        });
        assert_eq!(stopped.retryable(), Some(false));
    }

    #[test]
    fn an_outage_says_whether_the_call_was_sent() {
        let lost = call_error(&CallError::ConnectionLost {
            server: "files".into(),
            generation: crate::state::Generation::of(2),
            detail: "stream closed".into(),
            may_have_run: true,
        });
        let text = lost.model_feedback().unwrap();
        assert!(text.contains("was sent and may have run"), "{text}");
        assert_eq!(lost.kind(), ToolErrorKind::Network);

        let unsent = call_error(&CallError::ConnectionLost {
            server: "files".into(),
            generation: crate::state::Generation::of(2),
            detail: "connect refused".into(),
            may_have_run: false,
        });
        assert!(unsent.model_feedback().unwrap().contains("had no effect"));

        let down = call_error(&CallError::Unavailable {
            server: "files".into(),
            state: ConnectionState::Connecting { attempt: 2 },
        });
        let text = down.model_feedback().unwrap();
        assert!(text.contains("was not sent"), "{text}");
        assert!(down.is::<CallError>());
    }
}
