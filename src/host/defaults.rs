//! An unattended host's answer to an elicitation: accept a form with each field at its schema
//! default, decline a URL elicitation.

use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};

/// Accepts a form elicitation with each property's `default`.
pub(super) fn accept_defaults(request: &ElicitRequestParams) -> ElicitResult {
    let ElicitRequestParams::FormElicitationParams {
        requested_schema, ..
    } = request
    else {
        return ElicitResult::new(ElicitationAction::Decline);
    };
    let schema = serde_json::to_value(requested_schema).unwrap_or_default();
    let content: serde_json::Map<String, serde_json::Value> = schema
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|properties| {
            properties
                .iter()
                .filter_map(|(name, property)| {
                    Some((name.clone(), property.get("default")?.clone()))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut result = ElicitResult::new(ElicitationAction::Accept);
    result.content = Some(serde_json::Value::Object(content));
    result
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn params(value: serde_json::Value) -> ElicitRequestParams {
        serde_json::from_value(value).expect("elicitation params")
    }

    #[test]
    fn accepting_defaults_fills_every_default_and_nothing_else() {
        // The shape the conformance suite's SEP-1034 scenario sends, plus a field without a
        // default; it must pass through rmcp's typed schema with each default intact.
        let request = params(json!({
            "mode": "form",
            "message": "Fill in",
            "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                "verified": {"type": "boolean", "default": true},
                "confirmed": {"type": "boolean"}
            }}
        }));
        let result = serde_json::to_value(accept_defaults(&request)).unwrap();
        assert_eq!(
            result,
            json!({"action": "accept", "content": {
                "name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true
            }})
        );
    }

    #[test]
    fn a_form_without_properties_is_accepted_empty_and_a_url_is_declined() {
        let form = params(json!({
            "message": "Go on?",
            "requestedSchema": {"type": "object", "properties": {}}
        }));
        assert_eq!(
            serde_json::to_value(accept_defaults(&form)).unwrap(),
            json!({"action": "accept", "content": {}})
        );
        let url = params(json!({
            "mode": "url", "message": "Sign in", "url": "https://example.invalid/", "elicitationId": "e1"
        }));
        assert_eq!(
            serde_json::to_value(accept_defaults(&url)).unwrap()["action"],
            "decline"
        );
    }
}
