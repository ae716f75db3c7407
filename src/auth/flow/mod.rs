//! Obtaining tokens: the authorization code flow over a loopback redirect, and client
//! credentials. Discovery, registration, PKCE, the code exchange and the `resource` indicator
//! are rmcp's (`AuthorizationManager`, `AuthorizationSession`); written here are the pieces rmcp
//! leaves to its caller: the loopback callback server, getting the URL opened, binding the
//! store to the server's URL ([`Bound`], in `bound`), and which grant to run when. The loopback
//! callback server is `callback`.

use std::time::Duration;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession,
    ClientCredentialsConfig, OAuthClientConfig,
};
use tokio::net::TcpListener;
use url::Url;

mod bound;
mod callback;

pub(in crate::auth) use bound::Bound;

use super::{Grant, OAuthConfig, Prompt};
use callback::callback;

/// A manager for `url` whose credentials live in `bound`. No request is made yet.
pub(in crate::auth) async fn manager(
    url: &Url,
    bound: &Bound,
) -> Result<AuthorizationManager, AuthError> {
    let mut manager = AuthorizationManager::new(url.as_str()).await?;
    manager.set_credential_store(bound.clone());
    Ok(manager)
}

/// The client secret: the one the host handed over, else the one `client_secret_env` names.
pub(in crate::auth) fn client_secret(config: &OAuthConfig) -> Result<Option<String>, AuthError> {
    if let Some(secret) = &config.client_secret {
        return Ok(Some(secret.expose().to_owned()));
    }
    let Some(env) = &config.client_secret_env else {
        return Ok(None);
    };
    match std::env::var(env) {
        Ok(secret) if !secret.is_empty() => Ok(Some(secret)),
        _ => Err(AuthError::AuthorizationFailed(format!(
            "the client secret variable `{env}` is not set"
        ))),
    }
}

/// What an authorization is asked for.
pub(in crate::auth) struct Ask<'a> {
    pub(in crate::auth) url: &'a Url,
    pub(in crate::auth) config: &'a OAuthConfig,
    pub(in crate::auth) bound: &'a Bound,
    /// The `WWW-Authenticate` of the answer that asked for it (scope and metadata hints).
    pub(in crate::auth) challenge: Option<&'a str>,
    /// Scopes needed beyond the configured ones (a step-up).
    pub(crate) scopes: Vec<String>,
}

/// Runs the configured grant and saves the tokens; returns the manager that holds them.
pub(in crate::auth) async fn obtain(
    ask: Ask<'_>,
    prompt: Option<&dyn Prompt>,
    wait: Duration,
) -> Result<AuthorizationManager, AuthError> {
    match ask.config.grant {
        Grant::ClientCredentials => client_credentials(ask).await,
        Grant::AuthorizationCode => match prompt {
            Some(prompt) => authorization_code(ask, prompt, wait).await,
            None => Err(AuthError::AuthorizationRequired),
        },
    }
}

/// The scopes to ask for: configured ∪ extra, in order, without repeats.
fn scopes(config: &OAuthConfig, extra: &[String]) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for scope in config.scopes.iter().chain(extra) {
        if !all.contains(scope) {
            all.push(scope.clone());
        }
    }
    all
}

async fn client_credentials(ask: Ask<'_>) -> Result<AuthorizationManager, AuthError> {
    let (Some(client_id), Some(secret)) = (&ask.config.client_id, client_secret(ask.config)?)
    else {
        return Err(AuthError::AuthorizationFailed(
            "client credentials need `clientId` and `clientSecretEnv`".to_owned(),
        ));
    };
    let mut manager = manager(ask.url, ask.bound).await?;
    // Discovery (which also probes the server unauthenticated for its challenge) runs once: a
    // token that merely expired is obtained again from the same token endpoint. A request the
    // server refused (a challenge) discovers again: the server may have moved.
    let known = match ask.challenge {
        None => ask.bound.metadata.lock().ok().and_then(|m| m.clone()),
        Some(_) => None,
    };
    let metadata = match known {
        Some(metadata) => metadata,
        None => {
            let resolved = manager
                .resolve_metadata_from_challenge(ask.challenge)
                .await?;
            if let Ok(mut slot) = ask.bound.metadata.lock() {
                *slot = Some(resolved.metadata.clone());
            }
            resolved.metadata
        }
    };
    manager.set_metadata(metadata);
    let credentials = ClientCredentialsConfig::ClientSecret {
        client_id: client_id.clone(),
        client_secret: secret,
        scopes: scopes(ask.config, &ask.scopes),
        resource: Some(ask.url.to_string()),
    };
    manager.configure_client_credentials(&credentials)?;
    manager.exchange_client_credentials(&credentials).await?;
    Ok(manager)
}

async fn authorization_code(
    ask: Ask<'_>,
    prompt: &dyn Prompt,
    wait: Duration,
) -> Result<AuthorizationManager, AuthError> {
    let mut manager = manager(ask.url, ask.bound).await?;
    let resolution = manager
        .resolve_metadata_from_challenge(ask.challenge)
        .await?;
    manager.set_metadata(resolution.metadata);
    let listener = TcpListener::bind(("127.0.0.1", ask.config.callback_port))
        .await
        .map_err(|e| AuthError::InternalError(format!("loopback callback: {e}")))?;
    let port = listener
        .local_addr()
        .map_err(|e| AuthError::InternalError(format!("loopback callback: {e}")))?
        .port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let mut request = AuthorizationRequest::new(redirect.clone()).with_client_name("mcp-resilient");
    let wanted = scopes(ask.config, &ask.scopes);
    request = match wanted.is_empty() {
        true => request.with_initial_scope_selection(),
        false => request.with_scopes(wanted),
    };
    if let Some(challenge) = ask.challenge {
        request = request.with_challenge(challenge);
    }
    if let Some(client_id) = &ask.config.client_id {
        request = request.with_preregistered_client(client_id.clone());
        if let Some(secret) = client_secret(ask.config)? {
            request = request.with_client_secret(secret);
        }
    } else if let Some(cimd) = &ask.config.client_metadata_url {
        request = request.with_client_metadata_url(cimd.clone());
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| e)?;
    let callback = async {
        let (opened, called) = tokio::join!(
            prompt.open(session.get_authorization_url()),
            callback(&listener, port)
        );
        opened.map_err(|e| AuthError::AuthorizationFailed(crate::text::innermost(&e)))?;
        called
    };
    let called = tokio::time::timeout(wait, callback).await.map_err(|_| {
        AuthError::AuthorizationFailed(format!(
            "no authorization arrived at {redirect} within {wait:?}"
        ))
    })??;
    session.handle_callback_url(&called).await?;
    Ok(session.auth_manager)
}

/// Restores a manager from stored credentials (discovery runs once, here). `Ok(None)`: nothing
/// usable is stored.
pub(in crate::auth) async fn restore(
    url: &Url,
    config: &OAuthConfig,
    bound: &Bound,
) -> Result<Option<AuthorizationManager>, AuthError> {
    let mut manager = manager(url, bound).await?;
    if !manager.initialize_from_store().await? {
        return Ok(None);
    }
    // `initialize_from_store` configures a public client; a confidential one needs its secret
    // on every refresh.
    if let Some(secret) = client_secret(config)?
        && let Some(record) = bound.record().await?
    {
        manager.configure_client(
            OAuthClientConfig::new(record.credentials.client_id, url.to_string())
                .with_client_secret(secret),
        )?;
    }
    Ok(Some(manager))
}
