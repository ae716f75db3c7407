//! One registered tool as a rig [`DynamicTool`].

use rig_core::{
    completion::ToolAnnotations,
    message::ToolName,
    tool::{DynamicTool, ToolExecutionError},
};

use super::result::{call_error, tool_output};
use crate::{
    ToolHandle,
    registry::{RegisteredTool, Snapshot, ToolRegistry},
};

/// `tool` as a rig [`DynamicTool`]:
///
/// - its name is the public name (`mcp__<server>__<tool>`), its description and parameter
///   schema are the server's, unchanged, and its MCP annotations become rig's;
/// - its callback calls through a [`ToolHandle`], so it reaches whatever generation of the
///   server is current at call time, and keeps working across reconnects;
/// - its `is_live` probe is true while the server has a ready generation
///   ([`ToolRegistry::is_ready`]), so a sink can leave it out during an outage.
pub fn dynamic_tool(registry: &ToolRegistry, tool: &RegisteredTool) -> DynamicTool {
    let handle = ToolHandle::new(registry.clone(), tool);
    let definition = &tool.definition;
    let description = definition.description.as_deref().unwrap_or_default();
    let parameters = serde_json::Value::Object(definition.input_schema.as_ref().clone());
    let name = ToolName::new(tool.public_name.to_string())
        .expect("a public name starts with `mcp__`, so it is never empty");
    let annotations = definition
        .annotations
        .as_ref()
        .and_then(|a| serde_json::to_value(a).ok())
        .and_then(|a| serde_json::from_value::<ToolAnnotations>(a).ok())
        .unwrap_or_default();
    let probe = (registry.clone(), tool.server.clone());
    DynamicTool::new(name, description, parameters, move |arguments| {
        let handle = handle.clone();
        Box::pin(async move { call(&handle, arguments).await })
    })
    .with_annotations(annotations)
    .with_liveness(move || probe.0.is_ready(&probe.1))
}

/// Every tool of `snapshot` (or of one of its servers) as rig [`DynamicTool`]s, in snapshot order.
pub fn dynamic_tools(
    registry: &ToolRegistry,
    snapshot: &Snapshot,
    server: Option<&str>,
) -> Vec<DynamicTool> {
    snapshot
        .tools()
        .filter(|t| server.is_none_or(|s| *t.server == *s))
        .map(|t| dynamic_tool(registry, t))
        .collect()
}

async fn call(
    handle: &ToolHandle,
    arguments: serde_json::Value,
) -> Result<rig_core::tool::ToolOutput, ToolExecutionError> {
    if !(arguments.is_object() || arguments.is_null()) {
        return Err(ToolExecutionError::invalid_args(format!(
            "the arguments of {} must be a JSON object",
            handle.public_name()
        )));
    }
    match handle.call(arguments).await {
        Ok(result) => tool_output(result),
        Err(error) => Err(call_error(&error)),
    }
}
