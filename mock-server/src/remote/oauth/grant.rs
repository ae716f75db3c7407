//! What `/token` answers: the issued tokens, or an error in the form of RFC 6749 §5.2.

use std::time::Duration;

use axum::Json;
use axum::http::header::{CACHE_CONTROL, WWW_AUTHENTICATE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::json;

/// A successful token response (RFC 6749 §5.1).
#[derive(Debug, Serialize)]
pub(super) struct Issued {
    pub(super) access_token: String,
    token_type: &'static str,
    /// Seconds.
    expires_in: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) refresh_token: Option<String>,
    /// The granted scopes, space-separated.
    pub(super) scope: String,
}

impl Issued {
    pub(super) fn new(
        access_token: String,
        ttl: Duration,
        refresh_token: Option<String>,
        scopes: &[String],
    ) -> Self {
        Self {
            access_token,
            token_type: "Bearer",
            expires_in: ttl.as_secs(),
            refresh_token,
            scope: scopes.join(" "),
        }
    }
}

impl IntoResponse for Issued {
    fn into_response(self) -> Response {
        let no_store = [(CACHE_CONTROL, HeaderValue::from_static("no-store"))];
        (StatusCode::OK, no_store, Json(self)).into_response()
    }
}

/// A refused `/token` request: the RFC 6749 §5.2 `error` code, a description, and the status
/// (400, or 401 for `invalid_client`).
#[derive(Debug)]
pub(super) struct TokenError {
    pub(super) status: StatusCode,
    pub(super) error: &'static str,
    pub(super) description: String,
}

impl TokenError {
    fn new(error: &'static str, description: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            error,
            description: description.into(),
        }
    }

    pub(super) fn invalid_request(description: impl Into<String>) -> Self {
        Self::new("invalid_request", description)
    }

    pub(super) fn invalid_grant(description: impl Into<String>) -> Self {
        Self::new("invalid_grant", description)
    }

    pub(super) fn invalid_scope(description: impl Into<String>) -> Self {
        Self::new("invalid_scope", description)
    }

    pub(super) fn unauthorized_client(description: impl Into<String>) -> Self {
        Self::new("unauthorized_client", description)
    }

    pub(super) fn unsupported_grant_type(description: impl Into<String>) -> Self {
        Self::new("unsupported_grant_type", description)
    }

    /// Unknown client or wrong secret: 401 with a `Basic` challenge (RFC 6749 §5.2).
    pub(super) fn invalid_client() -> Self {
        Self {
            status: StatusCode::UNAUTHORIZED,
            ..Self::new("invalid_client", "client authentication failed")
        }
    }
}

impl IntoResponse for TokenError {
    fn into_response(self) -> Response {
        let body = json!({"error": self.error, "error_description": self.description});
        let mut response = (self.status, Json(body)).into_response();
        let headers = response.headers_mut();
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if self.status == StatusCode::UNAUTHORIZED {
            let challenge = HeaderValue::from_static("Basic realm=\"mcp-mock-server\"");
            headers.insert(WWW_AUTHENTICATE, challenge);
        }
        response
    }
}
