//! `POST /token`: the `authorization_code`, `refresh_token` and `client_credentials` grants,
//! with client authentication by `client_secret_basic`, `client_secret_post` or none (public
//! clients).

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;
use tokio::time::Instant;

use super::authority::Authority;
use super::clients::ClientAuth;
use super::grant::{Issued, TokenError};
use super::ledger::Ledger;

/// The form of `/token`; parameters not listed are ignored (a `scope` on a refresh too: the
/// new access token keeps the grant's scopes).
#[derive(Debug, Deserialize)]
pub(super) struct TokenForm {
    grant_type: Option<String>,
    code: Option<String>,
    redirect_uri: Option<String>,
    code_verifier: Option<String>,
    refresh_token: Option<String>,
    scope: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
}

/// Answers one `/token` request.
///
/// # Cancel safety
/// A refresh token is spent when the request arrives, before the `refresh_delay` wait: if this
/// future is dropped during the wait, the old refresh token is gone and the new one is never
/// delivered (as with a client that loses a real server's answer).
pub(super) async fn token(authority: &Authority, headers: &HeaderMap, form: TokenForm) -> Response {
    let grant_type = form.grant_type.clone().unwrap_or_default();
    let result = grant(authority, headers, form).await;
    match result {
        Ok(issued) => {
            tracing::debug!(%grant_type, "oauth: tokens issued");
            issued.into_response()
        }
        Err(error) => {
            tracing::debug!(%grant_type, error = error.error, "oauth: token request refused");
            error.into_response()
        }
    }
}

async fn grant(
    authority: &Authority,
    headers: &HeaderMap,
    form: TokenForm,
) -> Result<Issued, TokenError> {
    let auth = client_auth(headers, &form)?;
    let missing = |name: &str| TokenError::invalid_request(format!("{name} is missing"));
    match form.grant_type.as_deref() {
        Some("authorization_code") => {
            let code = form.code.ok_or_else(|| missing("code"))?;
            let verifier = form.code_verifier.ok_or_else(|| missing("code_verifier"))?;
            let redirect_uri = form.redirect_uri.ok_or_else(|| missing("redirect_uri"))?;
            settle(authority, &auth, |ledger, now| {
                ledger.exchange_code(&auth.id, &code, &verifier, &redirect_uri, now)
            })
        }
        Some("refresh_token") => {
            let token = form.refresh_token.ok_or_else(|| missing("refresh_token"))?;
            let result = settle(authority, &auth, |ledger, now| {
                ledger.refresh(&auth.id, &token, now)
            });
            tokio::time::sleep(authority.opts.refresh_delay).await;
            result
        }
        Some("client_credentials") => {
            let scopes = authority
                .opts
                .grant_scopes(form.scope.as_deref())
                .map_err(TokenError::invalid_scope)?;
            tokio::time::sleep(authority.opts.credentials_delay).await;
            settle(authority, &auth, |ledger, now| {
                match ledger.client(&auth.id).is_some_and(|c| c.is_confidential()) {
                    true => Ok(ledger.client_credentials(&auth.id, scopes, now)),
                    false => Err(TokenError::unauthorized_client(
                        "client_credentials needs a confidential client",
                    )),
                }
            })
        }
        Some(other) => Err(TokenError::unsupported_grant_type(format!(
            "grant_type {other:?} is not supported"
        ))),
        None => Err(missing("grant_type")),
    }
}

/// Authenticates the client and runs `grant` under the ledger's lock, counting
/// `invalid_grant` answers.
fn settle(
    authority: &Authority,
    auth: &ClientAuth,
    grant: impl FnOnce(&mut Ledger, Instant) -> Result<Issued, TokenError>,
) -> Result<Issued, TokenError> {
    let mut ledger = authority.ledger();
    ledger.authenticate(auth)?;
    let result = grant(&mut ledger, Instant::now());
    if matches!(&result, Err(error) if error.error == "invalid_grant") {
        ledger.counters.invalid_grant += 1;
    }
    result
}

/// The client's claimed identity: `Authorization: Basic` or the form's fields, not both.
fn client_auth(headers: &HeaderMap, form: &TokenForm) -> Result<ClientAuth, TokenError> {
    let basic = match headers.get(AUTHORIZATION) {
        None => None,
        Some(value) => Some(basic(value.to_str().ok()).ok_or_else(TokenError::invalid_client)?),
    };
    match (basic, &form.client_id) {
        (Some(_), _) if form.client_secret.is_some() => Err(TokenError::invalid_request(
            "more than one client authentication method",
        )),
        (Some(basic), Some(id)) if *id != basic.id => Err(TokenError::invalid_request(
            "client_id differs from the Basic credentials",
        )),
        (Some(basic), _) => Ok(basic),
        (None, Some(id)) => Ok(ClientAuth {
            id: id.clone(),
            secret: form.client_secret.clone(),
        }),
        (None, None) => Err(TokenError::invalid_client()),
    }
}

/// `Basic base64(urlencode(id) ":" urlencode(secret))` (RFC 6749 §2.3.1).
fn basic(value: Option<&str>) -> Option<ClientAuth> {
    let (scheme, encoded) = value?.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = String::from_utf8(STANDARD.decode(encoded.trim()).ok()?).ok()?;
    let (id, secret) = decoded.split_once(':')?;
    Some(ClientAuth {
        id: form_decode(id),
        secret: Some(form_decode(secret)),
    })
}

/// Decodes one form-encoded component (an encoded component has no raw `&` or `=`, so it is
/// the key of the only pair `parse` finds).
fn form_decode(component: &str) -> String {
    form_urlencoded::parse(component.as_bytes())
        .next()
        .map(|(key, _)| key.into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_are_form_decoded() {
        let header = format!("Basic {}", STANDARD.encode("my%20app:s%3Acret+x"));
        let auth = basic(Some(&header)).expect("valid");
        assert_eq!(auth.id, "my app");
        assert_eq!(auth.secret.as_deref(), Some("s:cret x"));
        assert!(basic(Some("Bearer abc")).is_none());
        assert!(basic(Some("Basic !!!")).is_none());
    }
}
