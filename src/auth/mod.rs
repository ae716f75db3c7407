//! Authorization of remote servers: a bearer token from the environment, or MCP authorization
//! (OAuth 2.1 with PKCE).
//!
//! Most hosted MCP servers want OAuth. The protocol work — protected resource metadata
//! (RFC 9728), authorization server metadata (RFC 8414 / OIDC), dynamic registration (RFC 7591)
//! or a client metadata document, PKCE, the `resource` indicator (RFC 8707), refresh, issuer
//! checks — is rmcp's `auth` feature. This module adds what a supervised connection needs
//! around it:
//!
//! - [`Auth`] / [`OAuthConfig`]: part of a server's configuration; secrets come from
//!   environment variables, never from the configuration itself.
//! - [`login`]: the authorization code flow over a loopback redirect on 127.0.0.1 (the CLI's
//!   `mcp-resilient login NAME`), ahead of the supervisor that will use the stored tokens.
//! - [`TokenStore`]: where tokens live; [`FileTokenStore`] keeps one file per server under the
//!   user's config directory, mode 0600, written atomically and locked across refreshes so that
//!   several processes (a proxy, the CLI, a host) can share it.
//! - While a supervisor runs, every request carries the current token, refreshed shortly before
//!   it expires. A 401 gets one refresh and the request is sent again (the server did not run
//!   it); a 403 `insufficient_scope` gets a step-up. Neither costs a generation. When nothing can
//!   authorize, the server is `failed` with cause `unauthorized` and the detail says what to do
//!   (`run mcp-resilient login NAME`); it is tried again only after `max_delay`.
//!
//! # Invariants
//!
//! 1. Access tokens, refresh tokens, client secrets and `Authorization` values appear in no log
//!    line, `Debug` output, event, error message or child environment.
//! 2. Tokens are only ever sent to the URL they were stored for (see [`StoredAuth::server_url`]).

mod config;
mod flow;
mod prompt;
mod session;
pub(crate) mod store;

use std::{sync::Arc, time::Duration};

pub use config::{Auth, ClientSecret, Grant, OAuthConfig};
pub use prompt::{Browser, Headless, PrintUrl, Prompt, PromptError};
pub use rmcp::transport::auth::AuthError;
pub(crate) use session::{Authorizer, Refusal};
pub use store::{FileTokenStore, MemoryTokenStore, StoreError, StoreLock, StoredAuth, TokenStore};

use crate::config::{ServerConfig, TransportConfig};

/// Why [`login`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoginError {
    /// The server is not reached over HTTP, so there is nothing to authorize.
    #[error("server `{0}` is not a remote server")]
    NotRemote(String),
    /// The token store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Discovery, registration, the browser step or the token exchange failed.
    #[error("authorization failed")]
    Authorization(#[from] AuthError),
}

/// The OAuth settings, URL and store of `server` (OAuth defaults when it has another kind).
fn parts(
    server: &ServerConfig,
) -> Result<(url::Url, OAuthConfig, Arc<dyn TokenStore>), LoginError> {
    let TransportConfig::Remote(remote) = &server.transport else {
        return Err(LoginError::NotRemote(server.name.clone()));
    };
    let config = match &remote.auth {
        Auth::OAuth(config) => config.clone(),
        _ => OAuthConfig::default(),
    };
    let store: Arc<dyn TokenStore> = match &config.store {
        Some(store) => store.clone(),
        None => Arc::new(FileTokenStore::for_server(&server.name)?),
    };
    Ok((remote.url.clone(), config, store))
}

/// Authorizes `server` (authorization code with PKCE, or client credentials when configured)
/// and stores the tokens. `prompt` gets the authorization URL opened; the flow waits at most
/// `wait` for the redirect to arrive at the loopback callback.
///
/// # Cancel safety
///
/// Dropping the future abandons the login and nothing of it runs on: the loopback callback stops
/// listening, so a redirect that arrives afterwards reaches nobody. The store keeps the record it
/// had, or holds the new one whole: the file store writes a temporary file and renames it over,
/// on a blocking task that finishes once begun. Calling `login` again starts over.
pub async fn login(
    server: &ServerConfig,
    prompt: &dyn Prompt,
    wait: Duration,
) -> Result<StoredAuth, LoginError> {
    let (url, config, store) = parts(server)?;
    let bound = flow::Bound::new(store, &url);
    let ask = flow::Ask {
        url: &url,
        config: &config,
        bound: &bound,
        challenge: None,
        scopes: Vec::new(),
    };
    flow::obtain(ask, Some(prompt), wait).await?;
    bound
        .record()
        .await?
        .ok_or(LoginError::Authorization(AuthError::AuthorizationRequired))
}

#[cfg(test)]
mod tests {
    use std::error::Error;

    use super::*;

    /// The cause of a failed authorization is its source, not part of its own text.
    #[test]
    fn an_authorization_failure_leaves_its_cause_to_the_source() {
        let error = LoginError::from(AuthError::InternalError("no token endpoint".into()));
        assert_eq!(error.to_string(), "authorization failed");
        let cause = error.source().expect("the rmcp error is the source");
        assert!(cause.to_string().contains("no token endpoint"), "{cause}");
    }
}
