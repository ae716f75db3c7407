//! The bearer check in front of every MCP route (RFC 6750 §3, RFC 9728 §5.1): the gate asks
//! [`check`] before the MCP handler sees a request.
//!
//! Only the arrival of a request is checked: a legacy SSE stream or a Streamable HTTP session
//! outlives the token it was opened with, and the next request on it only needs a valid token.

use axum::extract::Request;
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use tokio::time::Instant;

use super::authority::Authority;

/// What the request's `Authorization` header holds.
enum Presented<'a> {
    /// No header, or another scheme: no `error` in the challenge (RFC 6750 §3.1).
    Nothing,
    Bearer(&'a str),
}

fn presented(headers: &HeaderMap) -> Presented<'_> {
    let value = headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok());
    match value.and_then(|v| v.split_once(' ')) {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => {
            Presented::Bearer(token.trim())
        }
        _ => Presented::Nothing,
    }
}

/// The answer for a request that may not reach the MCP handler, or `None` to hand it on.
/// `tools_called` names the tool of each `tools/call` request in its body.
///
/// - no valid, unexpired access token: 401 with `resource_metadata` and the default `scope`
///   (and `error="invalid_token"` when a token was sent);
/// - a call of the step-up tool with a token lacking its scope: 403 `insufficient_scope`,
///   asking for the token's scopes plus the missing one.
pub(crate) fn check(
    authority: &Authority,
    request: &Request,
    tools_called: &[String],
) -> Option<Response> {
    let resource = authority.resource_of(request.uri().path());
    let metadata = authority.metadata_url(resource);
    let presented = presented(request.headers());
    let mut ledger = authority.ledger();
    let scopes = match presented {
        Presented::Nothing => None,
        Presented::Bearer(token) => ledger.access_scopes(token, Instant::now()),
    };
    let Some(scopes) = scopes.map(<[String]>::to_vec) else {
        ledger.counters.unauthorized += 1;
        drop(ledger);
        let error = match presented {
            Presented::Nothing => "",
            Presented::Bearer(_) => "error=\"invalid_token\", ",
        };
        let scope = authority.opts.default_scopes.join(" ");
        let challenge =
            format!("Bearer {error}scope=\"{scope}\", resource_metadata=\"{metadata}\"");
        tracing::debug!(
            ?resource,
            "oauth: 401 for a request without a valid access token"
        );
        return Some(refusal(StatusCode::UNAUTHORIZED, &challenge));
    };
    let (tool, needed) = authority.opts.step_up.as_ref()?;
    if scopes.contains(needed) || !tools_called.contains(tool) {
        return None;
    }
    ledger.counters.forbidden += 1;
    drop(ledger);
    let mut wanted = scopes;
    wanted.push(needed.clone());
    let scope = wanted.join(" ");
    let challenge = format!(
        "Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{metadata}\""
    );
    tracing::debug!(?resource, "oauth: 403 for a step-up call without its scope");
    Some(refusal(StatusCode::FORBIDDEN, &challenge))
}

fn refusal(status: StatusCode, challenge: &str) -> Response {
    let mut response = (
        status,
        [(CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("mock: {}\n", status.canonical_reason().unwrap_or("refused")),
    )
        .into_response();
    match HeaderValue::from_str(challenge) {
        Ok(value) => {
            response.headers_mut().insert(WWW_AUTHENTICATE, value);
        }
        // Only a configured scope with control characters can get here.
        Err(_) => tracing::warn!("oauth: the WWW-Authenticate challenge is not a header value"),
    }
    response
}
