//! [`Bound`]: our token store as rmcp's `CredentialStore`, bound to one server's URL, with the
//! in-process half of the refresh lock.

use std::sync::Arc;

use async_trait::async_trait;
use rmcp::transport::auth::{
    AuthError, AuthorizationMetadata, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use url::Url;

use crate::{
    auth::{StoreError, StoredAuth, TokenStore},
    text::redact,
};

/// Our store seen as rmcp's `CredentialStore`, bound to one server URL: a record saved for
/// another URL reads as nothing (its tokens must not be sent here). Clones share `local`.
#[derive(Clone)]
pub(in crate::auth) struct Bound {
    pub(in crate::auth) store: Arc<dyn TokenStore>,
    pub(in crate::auth) url: String,
    /// In-process half of the refresh lock (the store's lock is the cross-process half): taken
    /// first, so tasks of one process queue here instead of each holding a file lock.
    local: Arc<tokio::sync::Mutex<()>>,
    /// Whether "stored tokens belong to another URL" was said already (once is enough).
    warned: Arc<std::sync::atomic::AtomicBool>,
    /// The authorization server's metadata as the client credentials grant last discovered it.
    pub(super) metadata: Arc<std::sync::Mutex<Option<AuthorizationMetadata>>>,
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

    pub(in crate::auth) async fn record(&self) -> Result<Option<StoredAuth>, AuthError> {
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
    pub(in crate::auth) async fn exclusive(&self) -> Result<impl Send + Sync + 'static, AuthError> {
        let local = self.local.clone().lock_owned().await;
        let shared = self.store.lock().await.map_err(store_error)?;
        Ok((local, shared))
    }

    /// Runs `work` (which may refresh through rmcp) while this task holds [`Self::exclusive`].
    pub(in crate::auth) async fn holding<F: std::future::Future>(work: F) -> F::Output {
        HOLDING.scope((), work).await
    }
}

fn store_error(e: StoreError) -> AuthError {
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
