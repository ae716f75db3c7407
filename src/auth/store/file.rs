//! [`FileTokenStore`]: a token file per server under the user's config directory, written
//! whole (invariant 1), kept private (invariant 2), locked across a refresh (invariant 3) and
//! opened without following links (invariant 4); the invariants are the store module's.

use std::{
    fmt,
    io::{Read, Write},
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::SystemTime,
};

use async_trait::async_trait;

use super::{StoreError, StoreLock, StoredAuth, TokenStore, config_dir, private};

/// The largest token file read: a record is a few KiB.
const MAX_FILE: u64 = 1024 * 1024;

/// The most a refresh waits for another process's refresh of the same server.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(30);
/// Between two tries of the lock.
const LOCK_POLL: std::time::Duration = std::time::Duration::from_millis(10);

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
    /// The store of server `name` under `tokens/` in mcp-resilient's directory:
    /// `$MCP_RESILIENT_CONFIG_DIR`, else `$XDG_CONFIG_HOME/mcp-resilient`, else
    /// `$HOME/.config/mcp-resilient`.
    pub fn for_server(name: &str) -> Result<Self, StoreError> {
        let dir = Self::default_dir().ok_or_else(|| {
            StoreError::new(
                "directory",
                "no config directory: set HOME or MCP_RESILIENT_CONFIG_DIR",
            )
        })?;
        Ok(Self::in_dir(dir, name))
    }

    /// The directory [`for_server`](Self::for_server) keeps its token files in (one
    /// `<server name>.json` each): `tokens/` under `$MCP_RESILIENT_CONFIG_DIR`, else under
    /// `$XDG_CONFIG_HOME/mcp-resilient`, else under `$HOME/.config/mcp-resilient`. `None` when
    /// none of these variables is set. For a host that lists or cleans up the stored logins.
    pub fn default_dir() -> Option<PathBuf> {
        config_dir().map(|dir| dir.join("tokens"))
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
