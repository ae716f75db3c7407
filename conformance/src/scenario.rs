//! What each scenario wants of the client, as a list of [`Step`]s ([`plan`]), and the steps
//! themselves, done through the registry's tool handles ([`perform`]).
//!
//! Connecting already performs `initialize` (or, later, `server/discover`) and `tools/list`;
//! the steps are what comes after. The suite hands over `toolCalls` in the context only for some
//! scenarios; the others name their tools in the scenario's source, mirrored in [`plan`].

use std::time::Duration;

use mcp_resilient::{ToolHandle, ToolRegistry, call::CallOptions};
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use crate::{connect::SERVER, invocation::Invocation};

/// The longest a single tool call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// One thing to do once the server is ready.
#[derive(Debug, PartialEq)]
pub(crate) enum Step {
    /// Call `tool` (its name on the server) with `arguments`.
    Call { tool: String, arguments: Value },
    /// Call every tool the registry holds for the server, each with [`sample_arguments`].
    CallEveryListedTool,
    /// Call `via` with `{"schema": <the inputSchema of tool `of`, as the registry holds it>}`.
    EchoSchema { of: &'static str, via: &'static str },
}

/// The steps of `invocation`'s scenario, followed by the context's `toolCalls`.
pub(crate) fn plan(invocation: &Invocation) -> Result<Vec<Step>, String> {
    let call = |tool: &str, arguments: Value| Step::Call {
        tool: tool.to_owned(),
        arguments,
    };
    let mut steps = match invocation.scenario.as_str() {
        "tools_call" => vec![call("add_numbers", json!({"a": 5, "b": 3}))],
        "sse-retry" => vec![call("test_reconnection", json!({}))],
        "elicitation-sep1034-client-defaults" => {
            vec![call("test_client_elicitation_defaults", json!({}))]
        }
        // The echo-state call comes first so that the unrelated call follows an MRTR exchange.
        "sep-2322-client-request-state" => [
            "test_mrtr_echo_state",
            "test_mrtr_no_state",
            "test_mrtr_unrelated",
            "test_mrtr_no_result_type",
        ]
        .into_iter()
        .map(|tool| call(tool, json!({})))
        .collect(),
        // Headers are checked per request; invalid tools must already be gone from the registry.
        "http-standard-headers" | "http-invalid-tool-headers" => vec![Step::CallEveryListedTool],
        // Authorized, the scenario server lists one tool; calling it is what `auth/scope-step-up`
        // demands more scopes for.
        name if name.starts_with("auth/") => vec![call("test-tool", json!({}))],
        "json-schema-2020-12-preservation" => vec![Step::EchoSchema {
            of: "json_schema_2020_12_tool",
            via: "json_schema_echo",
        }],
        // initialize, request-metadata, json-schema-ref-no-deref: connecting and listing is the
        // whole exchange. http-custom-headers: only its toolCalls. Anything else: the same.
        _ => Vec::new(),
    };
    let calls = invocation.tool_calls()?;
    steps.extend(calls.into_iter().map(|c| call(&c.name, c.arguments)));
    Ok(steps)
}

/// Performs every step, even after one failed (later steps still exercise the server's
/// checks), and returns the first failure.
pub(crate) async fn perform(
    registry: &ToolRegistry,
    steps: &[Step],
    deadline: Instant,
) -> Result<(), String> {
    let mut first_failure = None;
    for step in steps {
        if let Err(reason) = perform_one(registry, step, deadline).await {
            first_failure.get_or_insert(reason);
        }
    }
    first_failure.map_or(Ok(()), Err)
}

async fn perform_one(
    registry: &ToolRegistry,
    step: &Step,
    deadline: Instant,
) -> Result<(), String> {
    match step {
        Step::Call { tool, arguments } => {
            call(&handle(registry, tool)?, arguments.clone(), deadline).await
        }
        Step::CallEveryListedTool => {
            let snapshot = registry.snapshot();
            let tools = snapshot.server(SERVER).ok_or("no tools registered")?;
            let mut first_failure = None;
            for tool in &tools.tools {
                let arguments =
                    sample_arguments(&input_schema(serde_json::to_value(&*tool.definition)));
                let handle = registry
                    .handle(&tool.public_name)
                    .map_err(|e| e.to_string())?;
                if let Err(reason) = call(&handle, arguments, deadline).await {
                    first_failure.get_or_insert(reason);
                }
            }
            first_failure.map_or(Ok(()), Err)
        }
        Step::EchoSchema { of, via } => {
            let definition = handle(registry, of)?
                .definition()
                .ok_or_else(|| format!("tool {of} is no longer registered"))?;
            let schema = input_schema(serde_json::to_value(&*definition));
            call(&handle(registry, via)?, json!({"schema": schema}), deadline).await
        }
    }
}

/// The handle of the server's tool `raw_name`, found by its name on the server (the public
/// name is `mcp__conformance__<tool>`, with a hash suffix when that would be lossy).
fn handle(registry: &ToolRegistry, raw_name: &str) -> Result<ToolHandle, String> {
    let snapshot = registry.snapshot();
    let public_name = snapshot
        .server(SERVER)
        .and_then(|set| set.tools.iter().find(|t| &*t.raw_name == raw_name))
        .map(|t| t.public_name.clone())
        .ok_or_else(|| format!("the server does not list tool {raw_name}"))?;
    registry.handle(&public_name).map_err(|e| e.to_string())
}

/// Calls `handle` within what is left of the deadline; a result flagged `isError` is a failure.
async fn call(handle: &ToolHandle, arguments: Value, deadline: Instant) -> Result<(), String> {
    let tool = handle.raw_name();
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(format!("no time left to call {tool}"));
    }
    let result = handle
        .call_with(
            arguments,
            CallOptions::new().timeout(left.min(CALL_TIMEOUT)),
        )
        .await
        .map_err(|e| format!("calling {tool}: {e}"))?;
    if result.is_error == Some(true) {
        let result = serde_json::to_value(&result).unwrap_or_default();
        let text = result["content"][0]["text"].as_str().unwrap_or("no text");
        return Err(format!("{tool} reported an error: {text}"));
    }
    Ok(())
}

/// The `inputSchema` of a tool definition serialized as the registry holds it (not re-parsed).
fn input_schema(definition: serde_json::Result<Value>) -> Value {
    definition
        .ok()
        .and_then(|d| d.get("inputSchema").cloned())
        .unwrap_or(Value::Null)
}

/// Arguments for a tool nobody told us how to call: each required property with a plain
/// value of its type.
fn sample_arguments(schema: &Value) -> Value {
    let properties = schema.get("properties");
    let required = schema.get("required").and_then(Value::as_array);
    let arguments: Map<String, Value> = required
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|name| {
            let kind = properties.and_then(|p| p[name]["type"].as_str());
            let value = match kind {
                Some("integer") => json!(1),
                Some("number") => json!(1.5),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("object") => json!({}),
                Some("null") => Value::Null,
                _ => json!("sample"),
            };
            (name.to_owned(), value)
        })
        .collect();
    Value::Object(arguments)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invocation(scenario: &str, context: Value) -> Invocation {
        Invocation {
            url: "http://localhost:1/mcp".into(),
            scenario: scenario.into(),
            protocol: None,
            context,
        }
    }

    #[test]
    fn tools_call_adds_two_numbers_and_context_calls_follow_the_scenario_steps() {
        let steps = plan(&invocation("tools_call", Value::Null)).unwrap();
        assert_eq!(
            steps,
            vec![Step::Call {
                tool: "add_numbers".into(),
                arguments: json!({"a": 5, "b": 3})
            }]
        );
        let context = json!({"toolCalls": [{"name": "t", "arguments": {"x": 1}}]});
        let steps = plan(&invocation("http-custom-headers", context)).unwrap();
        assert_eq!(
            steps,
            vec![Step::Call {
                tool: "t".into(),
                arguments: json!({"x": 1})
            }]
        );
    }

    #[test]
    fn an_unknown_scenario_only_connects_and_an_auth_one_calls_its_tool() {
        assert_eq!(plan(&invocation("unknown", json!({}))).unwrap(), vec![]);
        assert_eq!(
            plan(&invocation("auth/metadata-default", json!({}))).unwrap(),
            vec![Step::Call {
                tool: "test-tool".into(),
                arguments: json!({})
            }]
        );
    }

    #[test]
    fn sample_arguments_fill_required_properties_by_type() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string"}, "n": {"type": "integer"}, "nil": {"type": "null"},
            "optional": {"type": "string"}
        }, "required": ["region", "n", "nil"]});
        assert_eq!(
            sample_arguments(&schema),
            json!({"region": "sample", "n": 1, "nil": null})
        );
        assert_eq!(sample_arguments(&json!({"type": "object"})), json!({}));
    }
}
