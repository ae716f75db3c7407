//! `Mcp-Param-*` headers (SEP-2243, 2026-07-28): a tool's input schema may annotate a property
//! with `x-mcp-header: <Name>`, and a `tools/call` then carries that argument's value in the
//! header `Mcp-Param-<Name>` too. [`ToolHeaders`] keeps the annotations of the tools a
//! 2026-07-28 server listed; a tool whose annotations break the rules is refused (left out of
//! the listing), as the specification asks of a client: a non-empty HTTP token, unique without
//! regard to case, on a `string`, `integer` or `boolean` property reached from the root through
//! `properties` only.
//!
//! Values that cannot travel as a plain header value (leading or trailing blanks, control or
//! non-ASCII characters, or text that already looks wrapped) are sent as `=?base64?…?=`.

use std::{
    collections::HashMap,
    sync::{Mutex, PoisonError},
};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::model::{JsonObject, Tool};
use serde_json::Value;

const PREFIX: &str = "Mcp-Param-";
const WRAP_START: &str = "=?base64?";
const WRAP_END: &str = "?=";

/// The `x-mcp-header` annotations of one generation's listed tools: tool name → (path of
/// property names, header name). Only annotated tools are kept: most servers have none.
#[derive(Debug, Default)]
pub(super) struct ToolHeaders(Mutex<HashMap<String, Annotations>>);

/// One tool's annotated properties: the path of property names to each, and its header name.
type Annotations = Vec<(Vec<String>, String)>;

impl ToolHeaders {
    /// Learns the annotations of `tools`, and leaves out those whose annotations are invalid.
    pub(super) fn learn(&self, tools: &mut Vec<Tool>) {
        let mut known = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        tools.retain(|tool| match annotations(&tool.input_schema) {
            Ok(found) => {
                known.remove(tool.name.as_ref());
                if !found.is_empty() {
                    known.insert(tool.name.to_string(), found);
                }
                true
            }
            Err(why) => {
                tracing::warn!(tool = %tool.name, "refused a tool with invalid x-mcp-header annotations: {why}");
                false
            }
        });
    }

    /// Adds the `Mcp-Param-*` headers of a call of `tool` with `arguments`.
    pub(super) fn add_param_headers(
        &self,
        tool: &str,
        arguments: Option<&JsonObject>,
        headers: &mut HeaderMap,
    ) {
        let known = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (Some(annotated), Some(arguments)) = (known.get(tool), arguments) else {
            return;
        };
        for (path, header) in annotated {
            let mut steps = path.iter();
            let first = steps.next().and_then(|key| arguments.get(key));
            let value = steps.try_fold(first, |value, key| Some(value?.get(key)));
            let text = match value.flatten() {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Bool(b)) => b.to_string(),
                Some(Value::Number(n)) => n.to_string(),
                _ => continue,
            };
            if let (Ok(name), Some(value)) = (
                HeaderName::from_bytes(format!("{PREFIX}{header}").as_bytes()),
                header_value(&text, true),
            ) {
                headers.insert(name, value);
            }
        }
    }
}

/// `text` as a header value: as it is when it can be one; else wrapped as `=?base64?…?=` when
/// `wrap` (2026-07-28), or `None`.
pub(super) fn header_value(text: &str, wrap: bool) -> Option<HeaderValue> {
    if !needs_wrapping(text) {
        return HeaderValue::from_str(text).ok();
    }
    if !wrap {
        return None;
    }
    HeaderValue::from_str(&format!(
        "{WRAP_START}{}{WRAP_END}",
        base64(text.as_bytes())
    ))
    .ok()
}

fn needs_wrapping(text: &str) -> bool {
    let blank = |c: Option<char>| matches!(c, Some(' ' | '\t'));
    blank(text.chars().next())
        || blank(text.chars().last())
        || text.chars().any(|c| !(' '..='~').contains(&c))
        || (text.starts_with(WRAP_START) && text.ends_with(WRAP_END))
}

/// The valid annotations of a schema, or why they are not valid.
fn annotations(schema: &JsonObject) -> Result<Vec<(Vec<String>, String)>, String> {
    if schema.contains_key("x-mcp-header") {
        return Err("x-mcp-header must annotate a property, not the schema root".to_owned());
    }
    if off_chain(schema, true) {
        return Err("x-mcp-header must sit on a `properties`-only path from the root".to_owned());
    }
    let mut found = Vec::new();
    collect(schema.get("properties"), &mut Vec::new(), &mut found)?;
    let mut seen = std::collections::HashSet::new();
    for (path, header) in &found {
        if !seen.insert(header.to_ascii_lowercase()) {
            let path = path.join(".");
            return Err(format!(
                "property `{path}`: duplicate x-mcp-header `{header}`"
            ));
        }
    }
    Ok(found)
}

/// Every annotation along `properties` chains, checked one by one.
fn collect(
    properties: Option<&Value>,
    path: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, String)>,
) -> Result<(), String> {
    let Some(Value::Object(properties)) = properties else {
        return Ok(());
    };
    for (name, schema) in properties {
        path.push(name.clone());
        if let Some(header) = schema.get("x-mcp-header") {
            let at = path.join(".");
            let Value::String(header) = header else {
                return Err(format!("property `{at}`: x-mcp-header must be a string"));
            };
            if header.is_empty() || !header.chars().all(is_token_char) {
                return Err(format!(
                    "property `{at}`: x-mcp-header `{header}` is not an HTTP token"
                ));
            }
            match schema.get("type").and_then(Value::as_str) {
                Some("string" | "integer" | "boolean") => {}
                other => {
                    return Err(format!(
                        "property `{at}`: x-mcp-header needs a string, integer or boolean, not {other:?}"
                    ));
                }
            }
            out.push((path.clone(), header.clone()));
        }
        collect(schema.get("properties"), path, out)?;
        path.pop();
    }
    Ok(())
}

/// True when `schema` holds an `x-mcp-header` off the `properties` chain; `on_chain` when
/// `schema` is the root or reached from it through `properties` alone.
fn off_chain(schema: &JsonObject, on_chain: bool) -> bool {
    schema.iter().any(|(key, value)| match key.as_str() {
        "x-mcp-header" => !on_chain,
        "properties" => map_off_chain(value, on_chain),
        "$defs" | "definitions" | "dependencies" | "dependentSchemas" | "patternProperties" => {
            map_off_chain(value, false)
        }
        // Instance data or property names, not schemas.
        "default" | "const" | "enum" | "examples" | "dependentRequired" => false,
        _ => sub_off_chain(value),
    })
}

fn map_off_chain(map: &Value, on_chain: bool) -> bool {
    map.as_object().is_some_and(|map| {
        map.values().any(|schema| match schema {
            Value::Object(schema) => off_chain(schema, on_chain),
            other => sub_off_chain(other),
        })
    })
}

fn sub_off_chain(value: &Value) -> bool {
    match value {
        Value::Object(schema) => off_chain(schema, false),
        Value::Array(items) => items.iter().any(sub_off_chain),
        _ => false,
    }
}

/// RFC 9110 `tchar`.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Standard Base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().fold(0u32, |n, b| n << 8 | u32::from(*b)) << (8 * (3 - chunk.len()));
        for i in 0..4 {
            let c = match i <= chunk.len() {
                true => TABLE[(n >> (18 - 6 * i) & 63) as usize] as char,
                false => '=',
            };
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(name: &'static str, schema: Value) -> Tool {
        let Value::Object(schema) = schema else {
            unreachable!()
        };
        Tool::new(name, "t", std::sync::Arc::new(schema))
    }

    #[test]
    fn base64_is_the_standard_alphabet_with_padding() {
        for (text, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            (" padded", "IHBhZGRlZA=="),
        ] {
            assert_eq!(base64(text.as_bytes()), encoded);
        }
    }

    #[test]
    fn annotated_arguments_are_mirrored_and_invalid_annotations_refuse_the_tool() {
        let known = ToolHeaders::default();
        let good = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "deep": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}
        }});
        let bad =
            json!({"type": "object", "properties": {"a": {"type": "object", "x-mcp-header": "A"}}});
        let duplicate = json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "string", "x-mcp-header": "x"}
        }});
        let mut tools = vec![tool("good", good), tool("bad", bad), tool("dup", duplicate)];
        known.learn(&mut tools);
        let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
        assert_eq!(names, ["good"]);
        let Value::Object(arguments) = json!({"region": "eu 1 ", "deep": {"n": 7}}) else {
            unreachable!()
        };
        let mut headers = HeaderMap::new();
        known.add_param_headers("good", Some(&arguments), &mut headers);
        assert_eq!(headers["mcp-param-region"], "=?base64?ZXUgMSA=?=");
        assert_eq!(headers["mcp-param-n"], "7");
    }
}
