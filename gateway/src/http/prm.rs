//! OAuth 2.0 Protected Resource Metadata (RFC 9728), as the MCP authorization specification
//! asks of a server: the document at `/.well-known/oauth-protected-resource/mcp` (and at the
//! root form, for clients that ask there), and the `resource_metadata` parameter of every 401's
//! `WWW-Authenticate`, so that a host can find the authorization server to get a token from.

use axum::{
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde_json::{Value, json};

/// The well-known prefix (RFC 9728 §3).
pub(in crate::http) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The gateway's metadata and the challenge that points at it.
#[derive(Debug)]
pub(in crate::http) struct Metadata {
    document: Value,
    /// Where the document is, as the challenge names it.
    url: String,
}

impl Metadata {
    /// The metadata of the resource `resource` (the MCP endpoint's URL), whose tokens
    /// `issuer` grants (if any).
    pub(in crate::http) fn new(resource: &str, issuer: Option<&str>) -> Self {
        let mut document = json!({
            "resource": resource,
            "bearer_methods_supported": ["header"],
            "resource_name": "mcp-resilient gateway",
        });
        if let Some(issuer) = issuer {
            document["authorization_servers"] = json!([issuer]);
        }
        Self {
            document,
            url: metadata_url(resource),
        }
    }

    /// The `WWW-Authenticate` value of a 401: `Bearer` with the metadata's address, and the
    /// error, if a token was presented.
    pub(in crate::http) fn challenge(&self, error: Option<&str>) -> HeaderValue {
        let mut value = format!(
            r#"Bearer realm="mcp-resilient", resource_metadata="{}""#,
            self.url
        );
        if let Some(description) = error {
            value.push_str(&format!(
                r#", error="invalid_token", error_description="{description}""#
            ));
        }
        HeaderValue::from_str(&value)
            .unwrap_or_else(|_| HeaderValue::from_static(r#"Bearer realm="mcp-resilient""#))
    }

    /// The document, as `GET` answers it.
    pub(in crate::http) fn answer(&self) -> Response {
        let headers = [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "max-age=3600"),
        ];
        (StatusCode::OK, headers, self.document.to_string()).into_response()
    }
}

/// RFC 9728 §3.1: the well-known prefix between the origin and the resource's path.
fn metadata_url(resource: &str) -> String {
    match url::Url::parse(resource) {
        Ok(url) => {
            let path = url.path().trim_end_matches('/');
            format!("{}{WELL_KNOWN}{path}", url.origin().ascii_serialization())
        }
        Err(_) => WELL_KNOWN.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_names_the_resource_and_its_issuer_and_the_challenge_points_at_it() {
        let metadata = Metadata::new("https://gw.example.com/mcp", Some("https://id.example.com"));
        assert_eq!(metadata.document["resource"], "https://gw.example.com/mcp");
        assert_eq!(
            metadata.document["authorization_servers"],
            json!(["https://id.example.com"])
        );
        let challenge = metadata.challenge(Some("the token has expired"));
        assert_eq!(
            challenge.to_str().expect("text"),
            r#"Bearer realm="mcp-resilient", resource_metadata="https://gw.example.com/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description="the token has expired""#
        );
    }
}
