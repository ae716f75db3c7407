//! The resource catalogue: two fixed resources and one template, and what reading each returns.
//!
//! - `mock://static/hello`: the text `hello`.
//! - `mock://counter`: the server's counter in decimal (0 at start). The `bump` tool,
//!   [`Faults::bump_counter`](crate::Faults::bump_counter) and `POST /_mock/bump-counter` add
//!   one and send `notifications/resources/updated` for it to every subscriber.
//! - `mock://echo/{text}` (a template): the percent-decoded `text`.
//!
//! Reading (or, initialize era, subscribing to) any other URI is a resource-not-found error
//! (`-32002`); rmcp sends it to 2026-07-28 peers as invalid-params (`-32602`).
//!
//! # Invariants
//!
//! 1. [`list`] and [`templates`] never change: the `listChanged` capability is declared (so a
//!    client may ask for it), but no `notifications/resources/list_changed` is ever sent.
//! 2. A URI can be subscribed to (either era) exactly when it can be read ([`exists`]).

use rmcp::ErrorData;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};

/// A fixed resource whose text is `hello`.
pub(crate) const HELLO: &str = "mock://static/hello";
/// The counter resource; the only one that changes.
pub(crate) const COUNTER: &str = "mock://counter";
/// The URI template of the echo resources.
pub(crate) const ECHO_TEMPLATE: &str = "mock://echo/{text}";
/// What every echo resource's URI starts with.
const ECHO_PREFIX: &str = "mock://echo/";
const TEXT: &str = "text/plain";

/// `resources/list`: the fixed resources, in this order.
pub(crate) fn list() -> Vec<Resource> {
    vec![
        Resource::new(HELLO, "hello")
            .with_description("always the text `hello`")
            .with_mime_type(TEXT),
        Resource::new(COUNTER, "counter")
            .with_description("a counter that `bump` increments (and announces to subscribers)")
            .with_mime_type(TEXT),
    ]
}

/// `resources/templates/list`.
pub(crate) fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(ECHO_TEMPLATE, "echo")
            .with_description("reads back `text` (percent-decoded)")
            .with_mime_type(TEXT),
    ]
}

/// `resources/read` of `uri`, given the counter's current value.
pub(crate) fn read(uri: &str, counter: u64) -> Result<ReadResourceResult, ErrorData> {
    let text = text_of(uri, counter)
        .ok_or_else(|| ErrorData::resource_not_found(format!("no such resource: {uri}"), None))?;
    let contents = ResourceContents::text(text, uri).with_mime_type(TEXT);
    Ok(ReadResourceResult::new(vec![contents]))
}

/// Whether `uri` names a resource that can be read (and so subscribed to).
pub(crate) fn exists(uri: &str) -> bool {
    text_of(uri, 0).is_some()
}

fn text_of(uri: &str, counter: u64) -> Option<String> {
    match uri {
        HELLO => Some("hello".to_owned()),
        COUNTER => Some(counter.to_string()),
        _ => {
            let text = uri.strip_prefix(ECHO_PREFIX)?;
            percent_decode(text).filter(|text| !text.is_empty())
        }
    }
}

/// Decodes `%XX` escapes; `None` for a malformed escape or bytes that are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        if byte != b'%' {
            out.push(byte);
            at += 1;
            continue;
        }
        let hex = bytes.get(at + 1..at + 3)?;
        if !hex.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        out.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
        at += 3;
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_text(uri: &str, counter: u64) -> Option<String> {
        let result = read(uri, counter).ok()?;
        let json = serde_json::to_value(&result.contents).ok()?;
        json[0]["text"].as_str().map(str::to_owned)
    }

    #[test]
    fn reads_the_fixed_resources_and_the_template() {
        assert_eq!(read_text(HELLO, 7).as_deref(), Some("hello"));
        assert_eq!(read_text(COUNTER, 7).as_deref(), Some("7"));
        let echo = read_text("mock://echo/hi%20there%2F%C3%A9", 0);
        assert_eq!(echo.as_deref(), Some("hi there/é"));
    }

    #[test]
    fn unknown_or_malformed_uris_are_not_found() {
        for uri in [
            "mock://nope",
            "mock://echo/",
            "mock://echo/%zz",
            "mock://echo/%4",
            "mock://echo/%FF",
        ] {
            assert!(!exists(uri), "{uri}");
            let error = read(uri, 0).expect_err(uri);
            assert_eq!(error.code, rmcp::model::ErrorCode::RESOURCE_NOT_FOUND);
        }
        assert!(exists(COUNTER) && exists("mock://echo/x"));
    }
}
