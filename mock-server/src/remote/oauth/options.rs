//! How the OAuth mode is configured, and what it reports.

use std::time::Duration;

use serde::Serialize;

/// The OAuth mode of a remote [`MockServer`](crate::MockServer): set
/// [`MockOptions::oauth`](crate::MockOptions) to require bearer tokens on every MCP route and to
/// serve a small OAuth 2.1 authorization server on the same port (see the crate docs, "OAuth
/// mode").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthOptions {
    /// How long an access token stays valid after it is issued (`expires_in` of `/token`).
    ///
    /// # Default
    /// 3600 s.
    pub access_ttl: Duration,
    /// The scopes the server knows (`scopes_supported`); a request naming any other scope is
    /// refused with `invalid_scope`. The step-up scope, if any, is supported too.
    ///
    /// # Default
    /// `["mcp:read", "mcp:admin"]`.
    pub scopes: Vec<String>,
    /// The scopes granted when `/authorize` or a `client_credentials` request names none; also
    /// the `scope` a 401's `WWW-Authenticate` asks for.
    ///
    /// # Default
    /// `["mcp:read"]`.
    pub default_scopes: Vec<String>,
    /// Pre-registered clients: id and optional secret (with a secret the client is
    /// confidential: it must authenticate at `/token` and may use `client_credentials`). Any
    /// `http://127.0.0.1:*` or `http://localhost:*` redirect URI is allowed for them.
    ///
    /// # Default
    /// None.
    pub clients: Vec<(String, Option<String>)>,
    /// Step-up authorization: a `tools/call` of this tool (first) with a token lacking this
    /// scope (second) answers 403 `insufficient_scope`.
    ///
    /// # Default
    /// `None`.
    pub step_up: Option<(String, String)>,
    /// How long `/token` waits before it answers a `refresh_token` grant (the old refresh token
    /// is already spent when the wait starts), so tests can make two refreshes overlap.
    ///
    /// # Default
    /// 0.
    pub refresh_delay: Duration,
    /// How long `/token` waits before it answers a `client_credentials` grant, so tests can
    /// keep a client busy with the authorization server.
    ///
    /// # Default
    /// 0.
    pub credentials_delay: Duration,
}

impl Default for OAuthOptions {
    fn default() -> Self {
        Self {
            access_ttl: Duration::from_secs(3600),
            scopes: vec!["mcp:read".to_owned(), "mcp:admin".to_owned()],
            default_scopes: vec!["mcp:read".to_owned()],
            clients: Vec::new(),
            step_up: None,
            refresh_delay: Duration::ZERO,
            credentials_delay: Duration::ZERO,
        }
    }
}

impl OAuthOptions {
    /// `scopes`, plus the step-up scope if it is not among them.
    pub(super) fn supported_scopes(&self) -> Vec<String> {
        let mut scopes = self.scopes.clone();
        if let Some((_, scope)) = &self.step_up
            && !scopes.contains(scope)
        {
            scopes.push(scope.clone());
        }
        scopes
    }

    /// The scopes to grant for a request's `scope` parameter: the default scopes when it names
    /// none, otherwise the named ones (each once) if all are supported.
    pub(super) fn grant_scopes(&self, requested: Option<&str>) -> Result<Vec<String>, String> {
        let supported = self.supported_scopes();
        let mut granted: Vec<String> = Vec::new();
        for scope in requested.unwrap_or_default().split_ascii_whitespace() {
            if !supported.iter().any(|s| s == scope) {
                return Err(format!("scope {scope:?} is not supported"));
            }
            if !granted.iter().any(|s| s == scope) {
                granted.push(scope.to_owned());
            }
        }
        match granted.is_empty() {
            true => Ok(self.default_scopes.clone()),
            false => Ok(granted),
        }
    }
}

/// Tokens issued so far by `/token`, by grant type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct IssuedTokens {
    /// Access tokens issued for an authorization code.
    pub authorization_code: u64,
    /// Access tokens issued for a refresh token.
    pub refresh_token: u64,
    /// Access tokens issued to a confidential client for its own credentials.
    pub client_credentials: u64,
}

/// What `GET /_mock/oauth/stats` reports ([`Faults::oauth_stats`](crate::Faults::oauth_stats)).
/// Counters only grow; the two `valid_*` fields are the current numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct OAuthStats {
    /// Access tokens issued, by grant type.
    pub issued: IssuedTokens,
    /// Refresh tokens rotated: successful `refresh_token` grants (equal to
    /// `issued.refresh_token`).
    pub refreshed: u64,
    /// `/token` answers with `invalid_grant` (unknown, spent, revoked or expired code or
    /// refresh token, PKCE mismatch, redirect URI mismatch).
    pub invalid_grant: u64,
    /// `/token` answers 503 on request ([`Faults::fail_token_requests`](crate::Faults::fail_token_requests)):
    /// the authorization server briefly down.
    pub token_unavailable: u64,
    /// MCP requests answered 401 for a missing, unknown or expired access token.
    pub unauthorized: u64,
    /// MCP requests answered 403 `insufficient_scope` (step-up).
    pub forbidden: u64,
    /// Clients registered through `POST /register` (pre-registered ones not included).
    pub registered: u64,
    /// Access tokens that are valid now.
    pub valid_access_tokens: usize,
    /// Refresh tokens that can be used now.
    pub valid_refresh_tokens: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_default_dedupe_and_include_the_step_up_scope() {
        let opts = OAuthOptions {
            step_up: Some(("add".to_owned(), "mcp:write".to_owned())),
            ..OAuthOptions::default()
        };
        assert_eq!(opts.grant_scopes(None), Ok(vec!["mcp:read".to_owned()]));
        assert_eq!(
            opts.grant_scopes(Some(" ")),
            Ok(vec!["mcp:read".to_owned()])
        );
        let both = opts.grant_scopes(Some("mcp:write mcp:read mcp:write"));
        assert_eq!(
            both,
            Ok(vec!["mcp:write".to_owned(), "mcp:read".to_owned()])
        );
        assert!(opts.grant_scopes(Some("mcp:read root")).is_err());
    }
}
