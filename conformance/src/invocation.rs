//! The suite's invocation: the server URL (last argument) and the `MCP_CONFORMANCE_*` environment.

use serde_json::Value;

/// What the suite asked for.
#[derive(Debug)]
pub(crate) struct Invocation {
    /// The scenario server's MCP endpoint.
    pub(crate) url: String,
    /// `MCP_CONFORMANCE_SCENARIO`.
    pub(crate) scenario: String,
    /// `MCP_CONFORMANCE_PROTOCOL_VERSION`, when set and not empty.
    pub(crate) protocol: Option<String>,
    /// `MCP_CONFORMANCE_CONTEXT` parsed, or `null` when unset.
    pub(crate) context: Value,
}

/// One entry of the context's `toolCalls`.
#[derive(Debug, PartialEq)]
pub(crate) struct ToolCall {
    pub(crate) name: String,
    pub(crate) arguments: Value,
}

impl Invocation {
    /// Reads the process's arguments and environment.
    pub(crate) fn from_env() -> Result<Self, String> {
        Self::parse(std::env::args().skip(1), |key| std::env::var(key).ok())
    }

    fn parse(
        args: impl Iterator<Item = String>,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, String> {
        let url = args
            .last()
            .ok_or("usage: mcp-conformance-client <server-url> (the suite appends the URL)")?;
        let scenario = var("MCP_CONFORMANCE_SCENARIO")
            .filter(|s| !s.is_empty())
            .ok_or("MCP_CONFORMANCE_SCENARIO is not set")?;
        let protocol = var("MCP_CONFORMANCE_PROTOCOL_VERSION").filter(|s| !s.is_empty());
        let context = match var("MCP_CONFORMANCE_CONTEXT") {
            Some(text) => serde_json::from_str(&text)
                .map_err(|e| format!("MCP_CONFORMANCE_CONTEXT is not JSON: {e}"))?,
            None => Value::Null,
        };
        Ok(Invocation {
            url,
            scenario,
            protocol,
            context,
        })
    }

    /// The context's `toolCalls` (`[{"name": …, "arguments": {…}}]`), in order; none if absent.
    pub(crate) fn tool_calls(&self) -> Result<Vec<ToolCall>, String> {
        let Some(calls) = self.context.get("toolCalls") else {
            return Ok(Vec::new());
        };
        let calls = calls
            .as_array()
            .ok_or("context toolCalls is not an array")?;
        calls
            .iter()
            .map(|call| {
                let name = call.get("name").and_then(Value::as_str);
                let name =
                    name.ok_or_else(|| format!("context tool call without a name: {call}"))?;
                Ok(ToolCall {
                    name: name.to_owned(),
                    arguments: call.get("arguments").cloned().unwrap_or(Value::Null),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(args: &[&str], env: &[(&str, &str)]) -> Result<Invocation, String> {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Invocation::parse(args.iter().map(|a| a.to_string()), |key| {
            env.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn the_url_is_the_last_argument_and_the_context_is_optional() {
        let inv = parse(
            &["--verbose", "http://localhost:1234/mcp"],
            &[("MCP_CONFORMANCE_SCENARIO", "initialize")],
        )
        .unwrap();
        assert_eq!(inv.url, "http://localhost:1234/mcp");
        assert_eq!(inv.scenario, "initialize");
        assert_eq!(inv.protocol, None);
        assert_eq!(inv.tool_calls().unwrap(), vec![]);
    }

    #[test]
    fn tool_calls_come_from_the_context_in_order() {
        let context = json!({"name": "x", "toolCalls": [
            {"name": "a", "arguments": {"region": "us"}},
            {"name": "b"}
        ]});
        let inv = parse(
            &["http://h/mcp"],
            &[
                ("MCP_CONFORMANCE_SCENARIO", "x"),
                ("MCP_CONFORMANCE_PROTOCOL_VERSION", "2026-07-28"),
                ("MCP_CONFORMANCE_CONTEXT", &context.to_string()),
            ],
        )
        .unwrap();
        assert_eq!(inv.protocol.as_deref(), Some("2026-07-28"));
        let calls = inv.tool_calls().unwrap();
        assert_eq!(calls[0].name, "a");
        assert_eq!(calls[0].arguments, json!({"region": "us"}));
        assert_eq!(calls[1].arguments, Value::Null);
    }

    #[test]
    fn a_missing_scenario_or_url_or_bad_context_is_refused() {
        assert!(parse(&[], &[("MCP_CONFORMANCE_SCENARIO", "x")]).is_err());
        assert!(parse(&["http://h"], &[]).is_err());
        let bad = [
            ("MCP_CONFORMANCE_SCENARIO", "x"),
            ("MCP_CONFORMANCE_CONTEXT", "{"),
        ];
        assert!(parse(&["http://h"], &bad).is_err());
    }
}
