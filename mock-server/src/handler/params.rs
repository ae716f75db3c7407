//! A tool call's arguments and the plain text answer, shared by the handler and its built-ins.

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The arguments of `echo` and of every tool that behaves like it.
#[derive(Deserialize)]
pub(super) struct Echo {
    pub(super) text: String,
}

/// A tool's arguments as `T`; anything else is invalid params.
pub(super) fn parse<T: DeserializeOwned>(args: JsonObject) -> Result<T, ErrorData> {
    serde_json::from_value(Value::Object(args))
        .map_err(|error| ErrorData::invalid_params(format!("bad arguments: {error}"), None))
}

/// A successful result of one text block.
pub(super) fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}
