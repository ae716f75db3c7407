//! The conformance mode's tools: what each of the official suite's `tools-call-*`,
//! `elicitation-*`, `json-schema-2020-12` and `server-sse-polling` scenarios calls.

// Logging and sampling are deprecated by SEP-2577; the 2025 scenarios test them.
#![allow(deprecated)]

use std::{sync::Arc, time::Duration};

use rmcp::{
    ErrorData, RoleServer,
    model::{
        CallToolRequestParams, CallToolResult, ContentBlock, JsonObject, LoggingLevel,
        LoggingMessageNotificationParam, ProgressNotificationParam, Tool,
    },
    service::RequestContext,
};
use serde_json::{Value, json};

use super::{
    asks::{self, text},
    catalogue::{PNG, WAV},
};

/// The pause between a tool's notifications (the suite asks for about 50 ms).
const STEP: Duration = Duration::from_millis(50);

fn tool(name: &str, description: &str, schema: Value) -> Tool {
    let schema: JsonObject = match schema {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    };
    Tool::new(name.to_owned(), description.to_owned(), Arc::new(schema))
}

fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}})
}

fn one_string(name: &str, description: &str) -> Value {
    json!({"type": "object", "properties": {name: {"type": "string", "description": description}},
           "required": [name]})
}

/// `tools/list`.
pub(super) fn list() -> Vec<Tool> {
    let plain = [
        ("test_simple_text", "Returns one text block"),
        ("test_image_content", "Returns a PNG image"),
        ("test_audio_content", "Returns a WAV clip"),
        ("test_embedded_resource", "Returns an embedded resource"),
        (
            "test_multiple_content_types",
            "Returns text, an image and a resource",
        ),
        (
            "test_tool_with_logging",
            "Sends three log messages while it runs",
        ),
        ("test_error_handling", "Always answers with a tool error"),
        (
            "test_tool_with_progress",
            "Reports progress 0, 50 and 100 of 100",
        ),
        (
            "test_elicitation_sep1034_defaults",
            "Asks the client for values that all have defaults",
        ),
        (
            "test_elicitation_sep1330_enums",
            "Asks the client to choose from five kinds of enum",
        ),
        (
            "test_reconnection",
            "Answers after a short pause (SSE polling)",
        ),
    ];
    let mut tools: Vec<Tool> = plain
        .iter()
        .map(|(name, description)| tool(name, description, no_arguments()))
        .collect();
    tools.push(tool(
        "test_sampling",
        "Asks the client's model to answer a prompt",
        one_string("prompt", "The prompt to send to the LLM"),
    ));
    tools.push(tool(
        "test_elicitation",
        "Asks the user for a username and an email",
        one_string("message", "The message to show the user"),
    ));
    tools.push(tool(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features",
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": {"type": "object", "properties": {
                "street": {"type": "string"}, "city": {"type": "string"}}}},
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
            "additionalProperties": false
        }),
    ));
    tools
}

fn content(value: Value) -> Result<ContentBlock, ErrorData> {
    serde_json::from_value(value)
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))
}

fn argument<'a>(request: &'a CallToolRequestParams, name: &str) -> Result<&'a str, ErrorData> {
    request
        .arguments
        .as_ref()
        .and_then(|args| args.get(name))
        .and_then(Value::as_str)
        .ok_or_else(|| ErrorData::invalid_params(format!("missing string argument `{name}`"), None))
}

/// `tools/call`.
pub(super) async fn call(
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResult, ErrorData> {
    match request.name.as_ref() {
        "test_simple_text" => Ok(text("This is a simple text response for testing.")),
        "test_image_content" => Ok(CallToolResult::success(vec![ContentBlock::image(
            PNG,
            "image/png",
        )])),
        "test_audio_content" => Ok(CallToolResult::success(vec![ContentBlock::audio(
            WAV,
            "audio/wav",
        )])),
        "test_embedded_resource" => Ok(CallToolResult::success(vec![content(json!({
            "type": "resource", "resource": {"uri": "test://embedded-resource",
            "mimeType": "text/plain", "text": "This is an embedded resource content."}}))?])),
        "test_multiple_content_types" => Ok(CallToolResult::success(vec![
            ContentBlock::text("Multiple content types test:"),
            ContentBlock::image(PNG, "image/png"),
            content(
                json!({"type": "resource", "resource": {"uri": "test://mixed-content-resource",
                "mimeType": "application/json", "text": json!({"test": "data", "value": 123}).to_string()}}),
            )?,
        ])),
        "test_tool_with_logging" => logging(&context).await,
        "test_error_handling" => Ok(CallToolResult::error(vec![ContentBlock::text(
            "This tool intentionally returns an error for testing",
        )])),
        "test_tool_with_progress" => progress(&context).await,
        "test_sampling" => asks::sampling(argument(&request, "prompt")?, &context).await,
        "test_elicitation" => {
            let message = argument(&request, "message")?;
            let schema = json!({"type": "object", "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"}},
                "required": ["username", "email"]});
            asks::elicit(message, schema, "User response", &context).await
        }
        "test_elicitation_sep1034_defaults" => {
            let schema = json!({"type": "object", "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "default": true}}});
            asks::elicit(
                "Please review the defaults",
                schema,
                "Elicitation completed",
                &context,
            )
            .await
        }
        "test_elicitation_sep1330_enums" => {
            let schema = json!({"type": "object", "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}]},
                "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"}]}}}});
            asks::elicit("Please choose", schema, "Elicitation completed", &context).await
        }
        "test_reconnection" => {
            tokio::time::sleep(STEP).await;
            Ok(text("Reconnection test completed"))
        }
        other => Err(ErrorData::invalid_params(
            format!("no such tool: {other}"),
            None,
        )),
    }
}

async fn logging(context: &RequestContext<RoleServer>) -> Result<CallToolResult, ErrorData> {
    let lines = [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ];
    for (i, line) in lines.into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(STEP).await;
        }
        let param = LoggingMessageNotificationParam::new(LoggingLevel::Info, json!(line));
        if context.peer.notify_logging_message(param).await.is_err() {
            tracing::debug!("conformance: a log message was not sent");
        }
    }
    Ok(text("Tool with logging executed"))
}

async fn progress(context: &RequestContext<RoleServer>) -> Result<CallToolResult, ErrorData> {
    let token = context.meta.get_progress_token();
    for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(STEP).await;
        }
        if let Some(token) = token.clone() {
            let param = ProgressNotificationParam::new(token, step).with_total(100.0);
            if context.peer.notify_progress(param).await.is_err() {
                tracing::debug!("conformance: a progress notification was not sent");
            }
        }
    }
    Ok(text("Tool with progress executed"))
}
