//! Where OAuth tokens live between runs: the [`TokenStore`] trait, a file per server under the
//! user's config directory ([`FileTokenStore`]) and an in-memory store ([`MemoryTokenStore`]).
//! The trait is the extension point for others: the gateway crate keeps tokens in Redis.
//!
//! # Invariants
//!
//! 1. A token file is written whole or not at all: the new content goes to a temporary file in
//!    the same directory (mode 0600 from its creation), is synced, and is renamed over the old
//!    one. A reader sees the old file or the new one, never a mix.
//! 2. The directory holding token files is created with mode 0700; a token file is never
//!    readable by other users, not even for the instant between create and rename. A directory
//!    or file found open to group or others is made private again, with a warning, or refused
//!    when that fails ([`private`]).
//! 3. A refresh is a read-modify-write of one file shared by every process using that server
//!    (the CLI, a proxy, a host). It runs under [`TokenStore::lock`], an exclusive `flock` on a
//!    lock file next to the token file, so two processes never spend the same rotating refresh
//!    token: the second one waits, then refreshes from what the first one saved.
//! 4. A token file and the lock file are opened with `O_NOFOLLOW | O_CLOEXEC`: a symbolic link
//!    planted in their place is refused, never followed (a refresh never creates, truncates or
//!    reads a file elsewhere).

mod file;
mod memory;
mod private;

use std::{
    fmt,
    path::PathBuf,
    time::{SystemTime, UNIX_EPOCH},
};

use async_trait::async_trait;

pub use file::FileTokenStore;
pub use memory::MemoryTokenStore;
use rmcp::transport::auth::StoredCredentials;
use serde::{Deserialize, Serialize};

/// What a [`TokenStore`] keeps for one server.
#[derive(Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StoredAuth {
    /// The MCP endpoint the tokens were issued for. A store whose URL differs from the
    /// configured one is ignored: its tokens must never be sent to another server.
    pub server_url: String,
    /// The OAuth client and its tokens (rmcp's record: client id, token response, granted
    /// scopes, when the token was received, the issuer).
    pub credentials: StoredCredentials,
    /// When this record was written (seconds since the Unix epoch).
    #[serde(default)]
    pub saved_at: u64,
}

impl StoredAuth {
    /// A record of `credentials` for `server_url`, stamped now.
    pub fn new(server_url: impl Into<String>, credentials: StoredCredentials) -> Self {
        StoredAuth {
            server_url: server_url.into(),
            credentials,
            saved_at: now_secs(),
        }
    }

    /// When the access token expires (seconds since the Unix epoch), if the server said.
    pub fn expires_at(&self) -> Option<u64> {
        use oauth2::TokenResponse;
        let token = self.credentials.token_response.as_ref()?;
        let received = self.credentials.token_received_at?;
        // `expires_in` is the authorization server's number: saturate rather than overflow.
        Some(received.saturating_add(token.expires_in()?.as_secs()))
    }

    /// How long the access token has left, if the server said when it expires (zero once
    /// expired).
    pub fn expires_in(&self) -> Option<std::time::Duration> {
        let at = self.expires_at()?;
        Some(std::time::Duration::from_secs(
            at.saturating_sub(now_secs()),
        ))
    }

    /// True when a refresh token is stored.
    pub fn can_refresh(&self) -> bool {
        use oauth2::TokenResponse;
        self.credentials
            .token_response
            .as_ref()
            .is_some_and(|t| t.refresh_token().is_some())
    }
}

impl fmt::Debug for StoredAuth {
    /// Tokens are never printed (rmcp's `StoredCredentials` redacts them too).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredAuth")
            .field("server_url", &self.server_url)
            .field("client_id", &self.credentials.client_id)
            .field("granted_scopes", &self.credentials.granted_scopes)
            .field("expires_at", &self.expires_at())
            .field("saved_at", &self.saved_at)
            .finish_non_exhaustive()
    }
}

/// Why a store could not be read or written. Always about the store, never about the server.
#[derive(Debug, Clone, thiserror::Error)]
#[error("token store {what}: {detail}")]
pub struct StoreError {
    what: String,
    detail: String,
}

impl StoreError {
    /// An error about `what` (a path, a keychain entry), with `detail`.
    pub fn new(what: impl Into<String>, detail: impl fmt::Display) -> Self {
        StoreError {
            what: what.into(),
            detail: detail.to_string(),
        }
    }
}

/// Held while a refresh runs (see [`TokenStore::lock`]); dropping it lets the next one in.
pub struct StoreLock(#[allow(dead_code)] Box<dyn Send + Sync>);

impl StoreLock {
    /// Wraps whatever keeps the lock held (a file lock, a mutex guard) until dropped.
    pub fn new(held: impl Send + Sync + 'static) -> Self {
        StoreLock(Box::new(held))
    }
}

impl fmt::Debug for StoreLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StoreLock")
    }
}

/// Where the tokens of one server are kept. Implement it to keep them elsewhere (an OS
/// keychain, a host's own secret store) and set it with
/// [`OAuthConfig::store`](super::OAuthConfig::store).
///
/// `load`, `save` and `clear` must not take the lock returned by [`TokenStore::lock`]: a refresh
/// calls them while holding it.
///
/// # Cancel safety
///
/// The supervisor may drop any of these futures (a call's deadline passes, a server is shut
/// down). An implementation must leave the record whole when that happens: the old record or
/// the new one, never a part. The file store does: `save` writes a temporary file and renames it
/// over, on a blocking task that finishes once begun, and `clear` removes the file in one step.
/// A dropped `lock` future holds no lock.
#[async_trait]
pub trait TokenStore: Send + Sync {
    /// The stored record, if any.
    async fn load(&self) -> Result<Option<StoredAuth>, StoreError>;
    /// Replaces the stored record.
    async fn save(&self, auth: &StoredAuth) -> Result<(), StoreError>;
    /// Forgets the stored record. Not an error when there is none.
    async fn clear(&self) -> Result<(), StoreError>;
    /// An exclusive lock held across one refresh (load, token request, save), so that processes
    /// sharing this store never refresh at the same time. The default does not lock.
    async fn lock(&self) -> Result<Option<StoreLock>, StoreError> {
        Ok(None)
    }
    /// Where the record lives, as a user would look for it (a path).
    fn location(&self) -> String;
}

/// Seconds since the Unix epoch.
pub(in crate::auth) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The directory mcp-resilient keeps its files in: `$MCP_RESILIENT_CONFIG_DIR`, else
/// `$XDG_CONFIG_HOME/mcp-resilient`, else `$HOME/.config/mcp-resilient`.
pub(in crate::auth) fn config_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("MCP_RESILIENT_CONFIG_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = var("XDG_CONFIG_HOME") {
        return Some(PathBuf::from(dir).join("mcp-resilient"));
    }
    var("HOME").map(|home| PathBuf::from(home).join(".config").join("mcp-resilient"))
}

#[cfg(test)]
mod tests;
