//! How the conformance client answers elicitation: accept, with every field that the requested
//! schema gives a default for set to that default (SEP-1034), and nothing else. The same answer
//! serves a 2025-11-25 `elicitation/create` request and a 2026-07-28 `input_required` result's
//! elicitation input request.
//!
//! Waiting on the library: it has no host-side elicitation handler yet (see
//! [`crate::connect`]), so nothing calls [`accept_with_defaults`] outside its tests. When the
//! handler lands, registering it is one line in `connect::config`.
#![cfg_attr(not(test), allow(dead_code))]

use serde_json::{Map, Value, json};

/// The elicitation result for `requested_schema`: `{"action": "accept", "content": {…}}`.
pub(crate) fn accept_with_defaults(requested_schema: &Value) -> Value {
    let content: Map<String, Value> = requested_schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(field, schema)| Some((field.clone(), schema.get("default")?.clone())))
        .collect();
    json!({"action": "accept", "content": content})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_is_filled_and_fields_without_one_are_left_out() {
        // The schema of the suite's elicitation-sep1034-client-defaults scenario, plus a field
        // without a default.
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
            "verified": {"type": "boolean", "default": true},
            "confirmed": {"type": "boolean"}
        }});
        assert_eq!(
            accept_with_defaults(&schema),
            json!({"action": "accept", "content": {
                "name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true
            }})
        );
    }

    #[test]
    fn a_schema_without_properties_is_accepted_empty() {
        assert_eq!(
            accept_with_defaults(&json!({"type": "object"})),
            json!({"action": "accept", "content": {}})
        );
    }
}
