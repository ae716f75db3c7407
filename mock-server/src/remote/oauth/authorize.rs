//! `GET /authorize`: headless auto-approval. A valid request is answered at once with a
//! redirect carrying a fresh code; an invalid one gets 400 and a plain-text reason (never a
//! redirect, so a bad `redirect_uri` receives nothing).

use axum::http::header::{CONTENT_TYPE, LOCATION};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use tokio::time::Instant;

use super::authority::Authority;
use super::ledger::Code;
use super::secret::well_formed;

/// How long a code may wait for its exchange.
const CODE_TTL: std::time::Duration = std::time::Duration::from_secs(60);

/// The query of `/authorize`. Other parameters, `resource` (RFC 8707) among them, are accepted
/// and ignored: a token is good for every resource of this server.
#[derive(Debug, Deserialize)]
pub(super) struct AuthorizeParams {
    response_type: Option<String>,
    client_id: Option<String>,
    redirect_uri: Option<String>,
    code_challenge: Option<String>,
    code_challenge_method: Option<String>,
    state: Option<String>,
    scope: Option<String>,
}

/// Answers one `/authorize` request.
pub(super) fn authorize(authority: &Authority, params: AuthorizeParams) -> Response {
    match approve(authority, params) {
        Ok(location) => {
            tracing::debug!("oauth: authorization code issued");
            (StatusCode::FOUND, [(LOCATION, location)]).into_response()
        }
        Err(reason) => {
            tracing::debug!(%reason, "oauth: authorization request refused");
            let text = [(CONTENT_TYPE, "text/plain; charset=utf-8")];
            (StatusCode::BAD_REQUEST, text, format!("{reason}\n")).into_response()
        }
    }
}

/// Checks the request, stores a code and returns the redirect carrying it.
fn approve(authority: &Authority, params: AuthorizeParams) -> Result<HeaderValue, String> {
    let client_id = params.client_id.ok_or("client_id is missing")?;
    let redirect_uri = params.redirect_uri.ok_or("redirect_uri is missing")?;
    let mut ledger = authority.ledger();
    let client = ledger.client(&client_id).ok_or("unknown client_id")?;
    if !client.allows_redirect(&redirect_uri) || HeaderValue::from_str(&redirect_uri).is_err() {
        return Err("redirect_uri is not an http loopback URI registered for this client".into());
    }
    if params.response_type.as_deref() != Some("code") {
        return Err("response_type must be code".into());
    }
    if params.code_challenge_method.as_deref() != Some("S256") {
        return Err("PKCE is required: code_challenge_method must be S256".into());
    }
    let challenge = params
        .code_challenge
        .filter(|c| well_formed(c))
        .ok_or("code_challenge is missing or malformed")?;
    let scopes = authority.opts.grant_scopes(params.scope.as_deref())?;
    let now = Instant::now();
    let code = Code {
        client_id,
        redirect_uri: redirect_uri.clone(),
        challenge,
        scopes,
        expires: now + CODE_TTL,
    };
    let code = ledger.add_code(code, now);
    drop(ledger);
    let mut query = form_urlencoded::Serializer::new(String::new());
    query.append_pair("code", &code);
    if let Some(state) = &params.state {
        query.append_pair("state", state);
    }
    query.append_pair("iss", &authority.base);
    let separator = if redirect_uri.contains('?') { '&' } else { '?' };
    let location = format!("{redirect_uri}{separator}{}", query.finish());
    // The URI was a header value and the query is percent-encoded, so this holds.
    HeaderValue::from_str(&location).map_err(|_| "redirect_uri is not usable".to_owned())
}
