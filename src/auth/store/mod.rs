//! Where OAuth tokens live between runs: the [`TokenStore`] trait, a file per server under the
//! user's config directory ([`FileTokenStore`]), and an in-memory store ([`MemoryTokenStore`]).
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

mod private;

use std::{
    fmt,
    io::{Read, Write},
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::{SystemTime, UNIX_EPOCH},
};

use async_trait::async_trait;
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
#[derive(Debug, thiserror::Error)]
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

/// The largest token file read: a record is a few KiB.
const MAX_FILE: u64 = 1024 * 1024;

/// The most a refresh waits for another process's refresh of the same server.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(30);
/// Between two tries of the lock.
const LOCK_POLL: std::time::Duration = std::time::Duration::from_millis(10);

/// Seconds since the Unix epoch.
pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The directory mcp-resilient keeps its files in: `$MCP_RESILIENT_CONFIG_DIR`, else
/// `$XDG_CONFIG_HOME/mcp-resilient`, else `$HOME/.config/mcp-resilient`.
pub fn config_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("MCP_RESILIENT_CONFIG_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = var("XDG_CONFIG_HOME") {
        return Some(PathBuf::from(dir).join("mcp-resilient"));
    }
    var("HOME").map(|home| PathBuf::from(home).join(".config").join("mcp-resilient"))
}

/// Tokens in `<dir>/<server name>.json`, mode 0600 (see the module invariants).
///
/// Every request asks the store for the current token (another process may have refreshed
/// it), so a load that finds the file unchanged (same inode, size and modification time) answers
/// from memory instead of reading and parsing it again.
#[derive(Debug, Clone)]
pub struct FileTokenStore {
    path: PathBuf,
    /// The last record read, with the identity of the file it came from.
    cache: Arc<Mutex<Option<(FileStamp, StoredAuth)>>>,
    /// Set once the directory was found (or made) private; checked again only by a new store.
    dir_private: Arc<AtomicBool>,
}

/// What tells one version of the token file from another: a rename gives a new inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    inode: u64,
    len: u64,
    modified: Option<SystemTime>,
}

impl FileStamp {
    fn of(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        FileStamp {
            inode: meta.ino(),
            len: meta.len(),
            modified: meta.modified().ok(),
        }
    }
}

impl FileTokenStore {
    /// The store of server `name` under [`config_dir`]`/tokens`.
    pub fn for_server(name: &str) -> Result<Self, StoreError> {
        let dir = config_dir().ok_or_else(|| {
            StoreError::new(
                "directory",
                "no config directory: set HOME or MCP_RESILIENT_CONFIG_DIR",
            )
        })?;
        Ok(Self::in_dir(dir.join("tokens"), name))
    }

    /// The store of server `name` in `dir`.
    pub fn in_dir(dir: impl Into<PathBuf>, name: &str) -> Self {
        FileTokenStore {
            path: dir.into().join(format!("{name}.json")),
            cache: Arc::default(),
            dir_private: Arc::default(),
        }
    }

    /// The token file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock_path(&self) -> PathBuf {
        self.path.with_extension("lock")
    }

    fn error(&self, detail: impl fmt::Display) -> StoreError {
        StoreError::new(self.path.display().to_string(), detail)
    }

    fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    /// Creates the directory (mode 0700) if needed and makes sure it is private.
    fn create_dir(&self) -> Result<(), StoreError> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(private::DIR_MODE)
            .create(self.dir())
            .map_err(|e| self.dir_error(e))?;
        self.check_dir()
    }

    /// Makes sure the existing directory is private, once per store.
    fn check_dir(&self) -> Result<(), StoreError> {
        if self.dir_private.load(Ordering::Relaxed) {
            return Ok(());
        }
        private::make_dir_private(self.dir()).map_err(|e| self.dir_error(e))?;
        self.dir_private.store(true, Ordering::Relaxed);
        Ok(())
    }

    fn dir_error(&self, detail: impl fmt::Display) -> StoreError {
        StoreError::new(format!("directory {}", self.dir().display()), detail)
    }

    /// The record of the current file stamped `stamp`, if that is the one read last.
    fn cached(&self, stamp: FileStamp) -> Option<StoredAuth> {
        let cache = self.cache.lock().ok()?;
        let (cached, record) = cache.as_ref()?;
        (*cached == stamp).then(|| record.clone())
    }

    /// Opens the token file without following a link, makes it private if it is not, reads and
    /// parses it, and remembers the record with the file's stamp.
    fn read(&self) -> Result<Option<StoredAuth>, StoreError> {
        let mut options = std::fs::OpenOptions::new();
        let file = match private::no_follow(options.read(true)).open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.error(private::open_error(&e))),
        };
        let meta = private::make_file_private(&file, &self.path).map_err(|e| self.error(e))?;
        let mut bytes = Vec::new();
        file.take(MAX_FILE + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| self.error(e))?;
        if bytes.len() as u64 > MAX_FILE {
            return Err(self.error(format!("larger than {MAX_FILE} bytes; not a token file")));
        }
        let record: StoredAuth = serde_json::from_slice(&bytes).map_err(|e| {
            self.error(format!(
                "unreadable ({e}); `mcp-resilient logout` removes it"
            ))
        })?;
        if let Ok(mut cache) = self.cache.lock() {
            *cache = Some((FileStamp::of(&meta), record.clone()));
        }
        Ok(Some(record))
    }

    /// Writes `bytes` to a fresh 0600 temporary file beside the token file and renames it over.
    fn write_atomically(&self, bytes: &[u8]) -> Result<(), StoreError> {
        self.create_dir()?;
        self.write_new(bytes).map_err(|e| self.error(e))
    }

    fn write_new(&self, bytes: &[u8]) -> std::io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        let tmp = self.dir().join(format!(
            ".{}.{}.{:08x}.tmp",
            self.path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            std::process::id(),
            rand::random::<u32>()
        ));
        let written = (|| {
            let mut options = std::fs::OpenOptions::new();
            options
                .write(true)
                .create_new(true)
                .mode(private::FILE_MODE);
            let mut file = private::no_follow(&mut options).open(&tmp)?;
            file.write_all(bytes)?;
            file.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }
}

#[async_trait]
impl TokenStore for FileTokenStore {
    async fn load(&self) -> Result<Option<StoredAuth>, StoreError> {
        // A stat and a read of a small local file: done in place, not on the blocking pool,
        // which would cost more than the calls themselves. The stat does not follow a link, so
        // a link is never answered from the cache: `read` refuses it.
        let meta = match std::fs::symlink_metadata(&self.path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.error(e)),
        };
        self.check_dir()?;
        if private::is_private_file(&meta)
            && let Some(record) = self.cached(FileStamp::of(&meta))
        {
            return Ok(Some(record));
        }
        self.read()
    }

    async fn save(&self, auth: &StoredAuth) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec_pretty(auth).map_err(|e| self.error(e))?;
        let store = self.clone();
        tokio::task::spawn_blocking(move || store.write_atomically(&bytes))
            .await
            .map_err(|e| self.error(e))?
    }

    async fn clear(&self) -> Result<(), StoreError> {
        if let Ok(mut cache) = self.cache.lock() {
            *cache = None;
        }
        match tokio::fs::remove_file(&self.path).await {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(self.error(e)),
        }
    }

    async fn lock(&self) -> Result<Option<StoreLock>, StoreError> {
        use nix::{
            errno::Errno,
            fcntl::{Flock, FlockArg},
        };
        use std::os::unix::fs::OpenOptionsExt;
        self.create_dir()?;
        let lock_path = self.lock_path();
        let lock_error = |detail: String| StoreError::new(lock_path.display().to_string(), detail);
        let mut options = std::fs::OpenOptions::new();
        options
            .write(true)
            .create(true)
            .truncate(false)
            .mode(private::FILE_MODE);
        let mut file = private::no_follow(&mut options)
            .open(&lock_path)
            .map_err(|e| lock_error(private::open_error(&e)))?;
        private::make_file_private(&file, &lock_path).map_err(lock_error)?;
        // flock has no async form: try without blocking, and wait a little between tries, up
        // to LOCK_WAIT (a holder that died released it; one that hangs must not hang us).
        let deadline = tokio::time::Instant::now() + LOCK_WAIT;
        loop {
            match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
                Ok(locked) => return Ok(Some(StoreLock::new(locked))),
                Err((again, Errno::EWOULDBLOCK)) if tokio::time::Instant::now() < deadline => {
                    file = again;
                    tokio::time::sleep(LOCK_POLL).await;
                }
                Err((_, Errno::EWOULDBLOCK)) => {
                    return Err(self.error(format!(
                        "lock: another process has held it for over {LOCK_WAIT:?}"
                    )));
                }
                Err((_, errno)) => return Err(self.error(format!("lock: {errno}"))),
            }
        }
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }
}

/// Tokens kept in memory only, lost with the process; a clone shares the same record.
#[derive(Debug, Clone, Default)]
pub struct MemoryTokenStore {
    record: Arc<Mutex<Option<StoredAuth>>>,
    refresh: Arc<tokio::sync::Mutex<()>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl TokenStore for MemoryTokenStore {
    async fn load(&self) -> Result<Option<StoredAuth>, StoreError> {
        Ok(self.record.lock().map_err(|_| poisoned())?.clone())
    }

    async fn save(&self, auth: &StoredAuth) -> Result<(), StoreError> {
        *self.record.lock().map_err(|_| poisoned())? = Some(auth.clone());
        Ok(())
    }

    async fn clear(&self) -> Result<(), StoreError> {
        *self.record.lock().map_err(|_| poisoned())? = None;
        Ok(())
    }

    async fn lock(&self) -> Result<Option<StoreLock>, StoreError> {
        Ok(Some(StoreLock::new(
            self.refresh.clone().lock_owned().await,
        )))
    }

    fn location(&self) -> String {
        "memory".to_owned()
    }
}

fn poisoned() -> StoreError {
    StoreError::new("memory", "poisoned by a panic")
}

#[cfg(test)]
mod tests;
