//! The conformance mode's resources, prompts and media: fixed values the official suite's server
//! scenarios ask for by name.

use rmcp::{
    ErrorData,
    model::{
        GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, ReadResourceResult,
        Resource, ResourceContents, ResourceTemplate, Role,
    },
};
use serde_json::json;

/// A 1×1 PNG (one red pixel), base64.
pub(super) const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A WAV file with no samples (a 44-byte header, 8 kHz mono 8-bit), base64.
pub(super) const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

pub(super) const STATIC_TEXT: &str = "test://static-text";
pub(super) const STATIC_BINARY: &str = "test://static-binary";
pub(super) const WATCHED: &str = "test://watched-resource";
const TEMPLATE: &str = "test://template/{id}/data";
const TEMPLATE_HEAD: &str = "test://template/";
const TEMPLATE_TAIL: &str = "/data";

fn resource(uri: &str, name: &str, description: &str, mime: &str) -> Resource {
    Resource::new(uri, name)
        .with_description(description)
        .with_mime_type(mime)
}

/// `resources/list`: the direct resources.
pub(super) fn resources() -> Vec<Resource> {
    vec![
        resource(
            STATIC_TEXT,
            "static-text",
            "A fixed text resource",
            "text/plain",
        ),
        resource(
            STATIC_BINARY,
            "static-binary",
            "A fixed PNG image",
            "image/png",
        ),
        resource(
            WATCHED,
            "watched-resource",
            "A resource to subscribe to",
            "text/plain",
        ),
    ]
}

/// `resources/templates/list`.
pub(super) fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(TEMPLATE, "template-data")
            .with_description("Data for an id")
            .with_mime_type("application/json"),
    ]
}

/// `resources/read`.
pub(super) fn read(uri: &str) -> Result<ReadResourceResult, ErrorData> {
    let contents = match uri {
        STATIC_TEXT => {
            ResourceContents::text("This is the content of the static text resource.", uri)
                .with_mime_type("text/plain")
        }
        STATIC_BINARY => ResourceContents::blob(PNG, uri).with_mime_type("image/png"),
        WATCHED => ResourceContents::text("watched", uri).with_mime_type("text/plain"),
        _ => match uri
            .strip_prefix(TEMPLATE_HEAD)
            .and_then(|rest| rest.strip_suffix(TEMPLATE_TAIL))
            .filter(|id| !id.is_empty() && !id.contains('/'))
        {
            Some(id) => {
                let data =
                    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                ResourceContents::text(data.to_string(), uri).with_mime_type("application/json")
            }
            None => {
                let message = format!("no such resource: {uri}");
                return Err(ErrorData::resource_not_found(message, None));
            }
        },
    };
    Ok(ReadResourceResult::new(vec![contents]))
}

fn argument(name: &str, description: &str) -> PromptArgument {
    PromptArgument::new(name)
        .with_description(description)
        .with_required(true)
}

/// `prompts/list`.
pub(super) fn prompts() -> Vec<Prompt> {
    vec![
        Prompt::new(
            "test_simple_prompt",
            Some("A prompt without arguments"),
            None,
        ),
        Prompt::new(
            "test_prompt_with_arguments",
            Some("A prompt with two arguments"),
            Some(vec![
                argument("arg1", "First test argument"),
                argument("arg2", "Second test argument"),
            ]),
        ),
        Prompt::new(
            "test_prompt_with_embedded_resource",
            Some("A prompt that embeds a resource"),
            Some(vec![argument(
                "resourceUri",
                "URI of the resource to embed",
            )]),
        ),
        Prompt::new(
            "test_prompt_with_image",
            Some("A prompt with an image"),
            None,
        ),
    ]
}

fn text_argument<'a>(arguments: Option<&'a JsonObject>, name: &str) -> Result<&'a str, ErrorData> {
    arguments
        .and_then(|args| args.get(name))
        .and_then(|value| value.as_str())
        .ok_or_else(|| ErrorData::invalid_params(format!("missing string argument `{name}`"), None))
}

/// `prompts/get`.
pub(super) fn prompt(
    name: &str,
    arguments: Option<&JsonObject>,
) -> Result<GetPromptResult, ErrorData> {
    let messages: Vec<PromptMessage> = match name {
        "test_simple_prompt" => vec![PromptMessage::new_text(
            Role::User,
            "This is a simple prompt for testing.",
        )],
        "test_prompt_with_arguments" => {
            let (arg1, arg2) = (
                text_argument(arguments, "arg1")?,
                text_argument(arguments, "arg2")?,
            );
            vec![PromptMessage::new_text(
                Role::User,
                format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"),
            )]
        }
        "test_prompt_with_embedded_resource" => {
            let uri = text_argument(arguments, "resourceUri")?;
            let embedded = json!({"role": "user", "content": {"type": "resource", "resource": {
                "uri": uri, "mimeType": "text/plain", "text": "Embedded resource content for testing."
            }}});
            vec![
                from_json(embedded)?,
                PromptMessage::new_text(Role::User, "Please process the embedded resource above."),
            ]
        }
        "test_prompt_with_image" => {
            let image = json!({"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}});
            vec![
                from_json(image)?,
                PromptMessage::new_text(Role::User, "Please analyze the image above."),
            ]
        }
        _ => {
            return Err(ErrorData::invalid_params(
                format!("no such prompt: {name}"),
                None,
            ));
        }
    };
    Ok(GetPromptResult::new(messages))
}

fn from_json<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<T, ErrorData> {
    serde_json::from_value(value)
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suites_resources_and_prompts_answer_as_it_expects() {
        let read_text = |uri: &str| serde_json::to_value(read(uri).expect(uri)).expect("json");
        assert_eq!(
            read_text(STATIC_TEXT)["contents"][0]["text"],
            json!("This is the content of the static text resource.")
        );
        let data = read_text("test://template/123/data");
        let text = data["contents"][0]["text"].as_str().expect("text");
        let inner: serde_json::Value = serde_json::from_str(text).expect("json text");
        assert_eq!(
            inner,
            json!({"id": "123", "templateTest": true, "data": "Data for ID: 123"})
        );
        assert!(read("test://template//data").is_err());
        let args = json!({"arg1": "hello", "arg2": "world"});
        let got = serde_json::to_value(
            prompt("test_prompt_with_arguments", args.as_object()).expect("prompt"),
        )
        .expect("json");
        assert_eq!(
            got["messages"][0]["content"]["text"],
            json!("Prompt with arguments: arg1='hello', arg2='world'")
        );
        let args = json!({"resourceUri": "test://x"});
        let got = serde_json::to_value(
            prompt("test_prompt_with_embedded_resource", args.as_object()).expect("prompt"),
        )
        .expect("json");
        assert_eq!(
            got["messages"][0]["content"]["resource"]["uri"],
            json!("test://x")
        );
        assert!(prompt("test_prompt_with_image", None).is_ok());
    }
}
