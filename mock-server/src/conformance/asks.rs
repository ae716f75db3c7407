//! What the conformance tools ask of the client: a model's answer (`sampling/createMessage`)
//! and the user's input (`elicitation/create`), each refused up front when the client did not
//! declare it answers them.

// Sampling is deprecated by SEP-2577; the 2025 scenarios test it.
#![allow(deprecated)]

use rmcp::{
    ErrorData, RoleServer,
    model::{CallToolResult, ClientResult, ElicitRequest, ElicitRequestParams, ServerRequest},
    service::RequestContext,
};
use serde_json::{Value, json};

/// A tool result of one text block.
pub(super) fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![rmcp::model::ContentBlock::text(text)])
}

pub(super) async fn sampling(
    prompt: &str,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResult, ErrorData> {
    if context
        .peer
        .peer_info()
        .is_none_or(|info| info.capabilities.sampling.is_none())
    {
        return Err(ErrorData::invalid_request(
            "the client does not offer sampling",
            None,
        ));
    }
    let params = serde_json::from_value(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": 100
    }))
    .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
    let answer =
        context.peer.create_message(params).await.map_err(|error| {
            ErrorData::internal_error(format!("sampling failed: {error}"), None)
        })?;
    let answer = serde_json::to_value(&answer).unwrap_or_default();
    let said = match &answer["content"] {
        Value::Array(blocks) => blocks.first().map(|b| b["text"].clone()),
        block => Some(block["text"].clone()),
    };
    let said = said
        .and_then(|t| t.as_str().map(str::to_owned))
        .unwrap_or_default();
    Ok(text(format!("LLM response: {said}")))
}

pub(super) async fn elicit(
    message: &str,
    schema: Value,
    prefix: &str,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResult, ErrorData> {
    if context
        .peer
        .peer_info()
        .is_none_or(|info| info.capabilities.elicitation.is_none())
    {
        return Err(ErrorData::invalid_request(
            "the client does not offer elicitation",
            None,
        ));
    }
    let params: ElicitRequestParams = serde_json::from_value(
        json!({"mode": "form", "message": message, "requestedSchema": schema}),
    )
    .map_err(|error| ErrorData::internal_error(format!("elicitation form: {error}"), None))?;
    let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
    match context.peer.send_request(request).await {
        Ok(ClientResult::ElicitResult(answer)) => {
            let action = serde_json::to_value(&answer.action).unwrap_or_default();
            let action = action.as_str().unwrap_or("unknown").to_owned();
            let content = answer.content.unwrap_or_else(|| json!({}));
            Ok(text(format!(
                "{prefix}: action={action}, content={content}"
            )))
        }
        Ok(_) => Err(ErrorData::internal_error(
            "the client answered with another result",
            None,
        )),
        Err(error) => Err(ErrorData::internal_error(
            format!("elicitation failed: {error}"),
            None,
        )),
    }
}
