//! The registry's tools as function-calling definitions for model APIs.
//!
//! A host that talks to a model API itself (no agent framework in between) needs the tool list in
//! that API's own shape. [`Snapshot::openai_tools`] and [`Snapshot::anthropic_tools`] write it
//! for every tool in one call, [`RegisteredTool::openai_tool`] and
//! [`RegisteredTool::anthropic_tool`] for one:
//!
//! | API | shape of one tool |
//! |---|---|
//! | OpenAI (Chat Completions `tools`) | `{"type": "function", "function": {"name", "description", "parameters"}}` |
//! | Anthropic (Messages `tools`) | `{"name", "description", "input_schema"}` |
//!
//! # Invariants
//!
//! 1. The name is the tool's public name (`mcp__<server>__<tool>`), the one
//!    [`ToolRegistry::handle`](super::ToolRegistry::handle) resolves, so a call the model makes
//!    can be routed back without a lookup table.
//! 2. The schema is the server's `inputSchema`, unchanged: nothing is added, removed or
//!    reordered, so an unchanged server keeps an identical prompt prefix.
//! 3. A tool without a description has no `description` key (both APIs treat it as optional).
//! 4. Tools come in snapshot order: servers by name, then each server's own order.

use serde_json::{Map, Value, json};

use super::{RegisteredTool, Snapshot};

impl RegisteredTool {
    /// This tool in the OpenAI shape:
    /// `{"type": "function", "function": {"name", "description", "parameters"}}`.
    pub fn openai_tool(&self) -> Value {
        let function = named(self, "parameters");
        json!({ "type": "function", "function": function })
    }

    /// This tool in the Anthropic shape: `{"name", "description", "input_schema"}`.
    pub fn anthropic_tool(&self) -> Value {
        Value::Object(named(self, "input_schema"))
    }
}

/// `{"name", "description"?, <schema_key>}` for one tool.
fn named(tool: &RegisteredTool, schema_key: &str) -> Map<String, Value> {
    let mut object = Map::with_capacity(3);
    object.insert("name".into(), Value::String(tool.public_name.to_string()));
    if let Some(description) = &tool.definition.description {
        object.insert("description".into(), Value::String(description.to_string()));
    }
    let schema = Value::Object(tool.definition.input_schema.as_ref().clone());
    object.insert(schema_key.into(), schema);
    object
}

impl Snapshot {
    /// This snapshot's tools, in snapshot order, as an OpenAI `tools` array:
    /// `[{"type": "function", "function": {"name", "description", "parameters"}}]`.
    pub fn openai_tools(&self) -> Value {
        Value::Array(self.tools().map(RegisteredTool::openai_tool).collect())
    }

    /// This snapshot's tools, in snapshot order, as an Anthropic `tools` array:
    /// `[{"name", "description", "input_schema"}]`.
    pub fn anthropic_tools(&self) -> Value {
        Value::Array(self.tools().map(RegisteredTool::anthropic_tool).collect())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rmcp::model::Tool;
    use serde_json::json;

    use crate::{ToolRegistry, state::Generation};

    /// Two servers, published out of name order; one tool has no description.
    fn registry() -> ToolRegistry {
        let registry = ToolRegistry::new();
        let schema = json!({
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
            "required": ["city"],
            "additionalProperties": false
        });
        let weather = Tool::new(
            "get_weather",
            "Current weather in a city",
            Arc::new(schema.as_object().unwrap().clone()),
        );
        let mut bare = Tool::new("ping", "", Arc::new(serde_json::Map::new()));
        bare.description = None;
        registry
            .publish(&Arc::from("wx"), Generation::of(1), vec![weather])
            .unwrap();
        registry
            .publish(&Arc::from("a-b"), Generation::of(1), vec![bare])
            .unwrap();
        registry
    }

    #[test]
    fn openai_tools_have_the_function_shape_with_public_names_and_schemas_unchanged() {
        let expected = json!([
            {"type": "function", "function": {
                "name": "mcp__a-b__ping",
                "parameters": {}
            }},
            {"type": "function", "function": {
                "name": "mcp__wx__get_weather",
                "description": "Current weather in a city",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string", "description": "City name"}},
                    "required": ["city"],
                    "additionalProperties": false
                }
            }}
        ]);
        assert_eq!(registry().snapshot().openai_tools(), expected);
    }

    #[test]
    fn anthropic_tools_have_the_input_schema_shape_with_public_names_and_schemas_unchanged() {
        let expected = json!([
            {"name": "mcp__a-b__ping", "input_schema": {}},
            {
                "name": "mcp__wx__get_weather",
                "description": "Current weather in a city",
                "input_schema": {
                    "type": "object",
                    "properties": {"city": {"type": "string", "description": "City name"}},
                    "required": ["city"],
                    "additionalProperties": false
                }
            }
        ]);
        assert_eq!(registry().snapshot().anthropic_tools(), expected);
    }

    #[test]
    fn an_empty_registry_gives_empty_arrays() {
        let snapshot = ToolRegistry::new().snapshot();
        assert_eq!(snapshot.openai_tools(), json!([]));
        assert_eq!(snapshot.anthropic_tools(), json!([]));
    }

    #[test]
    fn the_schema_is_written_exactly_as_the_server_listed_it() {
        let snapshot = registry().snapshot();
        let listed = snapshot.get("mcp__wx__get_weather").unwrap();
        let listed = serde_json::to_string(listed.definition.input_schema.as_ref()).unwrap();
        let openai = snapshot.openai_tools();
        let anthropic = snapshot.anthropic_tools();
        let written = [
            &openai[1]["function"]["parameters"],
            &anthropic[1]["input_schema"],
        ];
        for schema in written {
            assert_eq!(serde_json::to_string(schema).unwrap(), listed);
        }
    }
}
