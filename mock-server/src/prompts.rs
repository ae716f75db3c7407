//! The prompt catalogue: one prompt, `greet {name}`, whose message greets `name`.
//!
//! # Invariants
//!
//! 1. [`list`] never changes (no `listChanged` capability is declared for prompts).

use rmcp::ErrorData;
use rmcp::model::{GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, Role};

/// The one prompt's name.
pub(crate) const GREET: &str = "greet";
/// Its one argument.
pub(crate) const NAME: &str = "name";

/// `prompts/list`.
pub(crate) fn list() -> Vec<Prompt> {
    let name = PromptArgument::new(NAME)
        .with_description("who to greet (completions: a few fixed names)")
        .with_required(true);
    vec![Prompt::new(GREET, Some("greets `name`"), Some(vec![name]))]
}

/// `prompts/get`: `greet` with a string `name` gives one user message `Hello, <name>!`; any
/// other prompt, or a missing or non-string `name`, is an invalid-params error.
pub(crate) fn get(
    prompt: &str,
    arguments: Option<&JsonObject>,
) -> Result<GetPromptResult, ErrorData> {
    if prompt != GREET {
        let message = format!("no such prompt: {prompt}");
        return Err(ErrorData::invalid_params(message, None));
    }
    let name = arguments
        .and_then(|args| args.get(NAME))
        .and_then(|name| name.as_str())
        .ok_or_else(|| ErrorData::invalid_params("greet needs a string `name`", None))?;
    let message = PromptMessage::new_text(Role::User, format!("Hello, {name}!"));
    Ok(GetPromptResult::new(vec![message]).with_description(format!("a greeting for {name}")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn greet_greets_its_name_and_refuses_anything_else() {
        let args = json!({"name": "Ada"});
        let result = get(GREET, args.as_object()).expect("greet");
        let json = serde_json::to_value(&result.messages).expect("serializes");
        assert_eq!(json[0]["content"]["text"], json!("Hello, Ada!"));
        assert_eq!(json[0]["role"], json!("user"));
        assert!(get(GREET, None).is_err());
        assert!(get(GREET, json!({"name": 3}).as_object()).is_err());
        assert!(get("other", args.as_object()).is_err());
    }
}
