//! Obtaining tokens: the authorization code flow over a loopback redirect, and client
//! credentials. Discovery, registration, PKCE, the code exchange and the `resource` indicator
//! are rmcp's (`AuthorizationManager`, `AuthorizationSession`); written here are the pieces rmcp
//! leaves to its caller: the loopback callback server, getting the URL opened, binding the
//! store to the server's URL, and which grant to run when.

use std::{sync::Arc, time::Duration};

use async_trait::async_trait;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, CredentialRefreshGuard, CredentialStore,
    OAuthClientConfig, StoredCredentials,
};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpListener,
};
use url::Url;

use super::{Grant, OAuthConfig, Prompt, StoredAuth, TokenStore};
use crate::text::redact;

/// Our store seen as rmcp's `CredentialStore`, bound to one server URL: a record saved for
/// another URL reads as nothing (its tokens must not be sent here). Clones share `local`.
#[derive(Clone)]
pub(crate) struct Bound {
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) url: String,
    /// In-process half of the refresh lock (the store's lock is the cross-process half): taken
    /// first, so tasks of one process queue here instead of each holding a file lock.
    local: Arc<tokio::sync::Mutex<()>>,
    /// Whether "stored tokens belong to another URL" was said already (once is enough).
    warned: Arc<std::sync::atomic::AtomicBool>,
    /// The authorization server's metadata as the client credentials grant last discovered it.
    metadata: Arc<std::sync::Mutex<Option<AuthorizationMetadata>>>,
}

tokio::task_local! {
    /// Set while a task already holds the refresh lock (see [`Bound::exclusive`]): rmcp's
    /// refresh, run inside it, must not take it again.
    static HOLDING: ();
}

impl Bound {
    pub(crate) fn new(store: Arc<dyn TokenStore>, url: &Url) -> Self {
        Bound {
            store,
            url: url.to_string(),
            local: Arc::default(),
            warned: Arc::default(),
            metadata: Arc::default(),
        }
    }

    pub(crate) async fn record(&self) -> Result<Option<StoredAuth>, AuthError> {
        let record = self.store.load().await.map_err(store_error)?;
        Ok(record.filter(|r| {
            let same = r.server_url == self.url;
            if !same && !self.warned.swap(true, std::sync::atomic::Ordering::Relaxed) {
                tracing::warn!(stored = %redact(&r.server_url), configured = %redact(&self.url), "stored tokens belong to another URL; ignoring them");
            }
            same
        }))
    }

    /// The refresh lock of this server: every task of this process, then every process.
    pub(crate) async fn exclusive(&self) -> Result<impl Send + Sync + 'static, AuthError> {
        let local = self.local.clone().lock_owned().await;
        let shared = self.store.lock().await.map_err(store_error)?;
        Ok((local, shared))
    }

    /// Runs `work` (which may refresh through rmcp) while this task holds [`Self::exclusive`].
    pub(crate) async fn holding<F: std::future::Future>(work: F) -> F::Output {
        HOLDING.scope((), work).await
    }
}

fn store_error(e: super::StoreError) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

#[async_trait]
impl CredentialStore for Bound {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.record().await?.map(|r| r.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let record = StoredAuth::new(self.url.clone(), credentials);
        self.store.save(&record).await.map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.store.clear().await.map_err(store_error)
    }

    /// The authorization server answered `invalid_grant`: the refresh token is spent. It is
    /// dropped from the record (the client and the access token stay, for `auth status` and a
    /// new login), so no other request, task or process presents it again. Called under the
    /// refresh lock; a record replaced since (a new login) is left alone.
    async fn on_refresh_token_rejected(
        &self,
        rejected: &StoredCredentials,
    ) -> Result<(), AuthError> {
        use oauth2::TokenResponse;
        let refresh = |c: &StoredCredentials| {
            c.token_response
                .as_ref()
                .and_then(|t| t.refresh_token().map(|r| r.secret().clone()))
        };
        let Some(spent) = refresh(rejected) else {
            return Ok(());
        };
        let Some(mut record) = self.record().await? else {
            return Ok(());
        };
        if refresh(&record.credentials).as_ref() != Some(&spent) {
            return Ok(());
        }
        if let Some(token) = record.credentials.token_response.as_mut() {
            token.set_refresh_token(None);
        }
        self.store.save(&record).await.map_err(store_error)
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        if HOLDING.try_with(|_| ()).is_ok() {
            return Ok(None);
        }
        Ok(Some(CredentialRefreshGuard::new(self.exclusive().await?)))
    }
}

/// A manager for `url` whose credentials live in `bound`. No request is made yet.
pub(crate) async fn manager(url: &Url, bound: &Bound) -> Result<AuthorizationManager, AuthError> {
    let mut manager = AuthorizationManager::new(url.as_str()).await?;
    manager.set_credential_store(bound.clone());
    Ok(manager)
}

/// The client secret: the one the host handed over, else the one `client_secret_env` names.
pub(crate) fn client_secret(config: &OAuthConfig) -> Result<Option<String>, AuthError> {
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
pub(crate) struct Ask<'a> {
    pub(crate) url: &'a Url,
    pub(crate) config: &'a OAuthConfig,
    pub(crate) bound: &'a Bound,
    /// The `WWW-Authenticate` of the answer that asked for it (scope and metadata hints).
    pub(crate) challenge: Option<&'a str>,
    /// Scopes needed beyond the configured ones (a step-up).
    pub(crate) scopes: Vec<String>,
}

/// Runs the configured grant and saves the tokens; returns the manager that holds them.
pub(crate) async fn obtain(
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
        opened.map_err(AuthError::AuthorizationFailed)?;
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

/// Serves the loopback redirect until one request to `/callback` arrives; returns its full URL.
/// Other requests (a browser's favicon) get 404. The error of an authorization server that
/// refused (`error=access_denied`) is returned as such.
async fn callback(listener: &TcpListener, port: u16) -> Result<String, AuthError> {
    loop {
        let (mut socket, _) = listener
            .accept()
            .await
            .map_err(|e| AuthError::InternalError(format!("loopback callback: {e}")))?;
        let mut head = Vec::with_capacity(1024);
        let mut buf = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
            match tokio::time::timeout(Duration::from_secs(10), socket.read(&mut buf)).await {
                Ok(Ok(n)) if n > 0 => head.extend_from_slice(&buf[..n]),
                _ => break,
            }
        }
        let line = String::from_utf8_lossy(&head);
        let target = line
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("GET "))
            .and_then(|l| l.split(' ').next())
            .unwrap_or("");
        let url = format!("http://127.0.0.1:{port}{target}");
        let parsed = Url::parse(&url).ok().filter(|u| u.path() == "/callback");
        let Some(parsed) = parsed else {
            let _ = socket
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await;
            continue;
        };
        let error = parsed
            .query_pairs()
            .find(|(k, _)| k == "error")
            .map(|(_, v)| v.into_owned());
        let body = match &error {
            None => "Authorized. You can close this window and return to mcp-resilient.",
            Some(_) => "The authorization was refused. You can close this window.",
        };
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = socket.write_all(answer.as_bytes()).await;
        let _ = socket.shutdown().await;
        return match error {
            None => Ok(url),
            Some(error) => Err(AuthError::AuthorizationFailed(format!(
                "the authorization server answered `{error}`"
            ))),
        };
    }
}

/// Restores a manager from stored credentials (discovery runs once, here). `Ok(None)`: nothing
/// usable is stored.
pub(crate) async fn restore(
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
