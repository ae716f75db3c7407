//! `completion/complete`: suggestions for the `greet` prompt's `name` and the
//! `mock://echo/{text}` template's `text`, from fixed lists ([`NAMES`], [`WORDS`]): every
//! entry that starts with the typed value, in list order, all on one page.
//!
//! An unknown prompt or template is an invalid-params error; an unknown argument of a known
//! one gets no suggestions.

use rmcp::ErrorData;
use rmcp::model::{CompleteRequestParams, CompleteResult, CompletionInfo, Reference};

use crate::prompts;
use crate::resources::ECHO_TEMPLATE;

/// What `greet`'s `name` completes to.
pub(crate) const NAMES: [&str; 5] = ["alice", "albert", "bob", "carol", "dave"];
/// What the echo template's `text` completes to.
pub(crate) const WORDS: [&str; 5] = ["hello", "help", "helium", "world", "wonder"];

/// Answers one `completion/complete`.
pub(crate) fn complete(request: &CompleteRequestParams) -> Result<CompleteResult, ErrorData> {
    let argument = request.argument.name.as_str();
    let candidates: &[&str] = match &request.r#ref {
        Reference::Prompt(prompt) if prompt.name == prompts::GREET => match argument {
            prompts::NAME => &NAMES,
            _ => &[],
        },
        Reference::Resource(template) if template.uri == ECHO_TEMPLATE => match argument {
            "text" => &WORDS,
            _ => &[],
        },
        Reference::Prompt(prompt) => {
            let message = format!("no such prompt: {}", prompt.name);
            return Err(ErrorData::invalid_params(message, None));
        }
        Reference::Resource(template) => {
            let message = format!("no such resource template: {}", template.uri);
            return Err(ErrorData::invalid_params(message, None));
        }
        _ => return Err(ErrorData::invalid_params("unknown reference type", None)),
    };
    let typed = request.argument.value.as_str();
    let values = candidates
        .iter()
        .filter(|candidate| candidate.starts_with(typed))
        .map(|candidate| (*candidate).to_owned())
        .collect();
    let info = CompletionInfo::with_all_values(values)
        .map_err(|error| ErrorData::internal_error(error, None))?;
    Ok(CompleteResult::new(info))
}

#[cfg(test)]
mod tests {
    use rmcp::model::ArgumentInfo;

    use super::*;

    fn values(reference: Reference, argument: &str, typed: &str) -> Vec<String> {
        let request = CompleteRequestParams::new(reference, ArgumentInfo::new(argument, typed));
        complete(&request).expect("completes").completion.values
    }

    #[test]
    fn suggests_the_entries_starting_with_the_typed_prefix() {
        let greet = || Reference::for_prompt("greet");
        assert_eq!(values(greet(), "name", "al"), ["alice", "albert"]);
        assert_eq!(values(greet(), "name", ""), NAMES);
        assert!(values(greet(), "other", "a").is_empty());
        let echo = || Reference::for_resource(ECHO_TEMPLATE);
        assert_eq!(values(echo(), "text", "hel"), ["hello", "help", "helium"]);
        assert!(values(echo(), "text", "x").is_empty());
    }

    #[test]
    fn unknown_references_are_invalid_params() {
        for reference in [
            Reference::for_prompt("nope"),
            Reference::for_resource("mock://other/{x}"),
        ] {
            let request = CompleteRequestParams::new(reference, ArgumentInfo::new("x", ""));
            let error = complete(&request).expect_err("unknown");
            assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        }
    }
}
