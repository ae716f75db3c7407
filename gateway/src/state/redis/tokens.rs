//! [`RedisTokenStore`]: one server's OAuth tokens in Redis, shared by every replica of a fleet
//! (feature `redis`), with the refresh lock fleet-wide.
//!
//! The record is the JSON of [`StoredAuth`] under `{prefix}token:{name}`, in clear text as in a
//! token file (the Redis must be as private as the file would be): the tokens, and the server's
//! URL as configured, a query in it included. The
//! lock is `{prefix}token:{name}:lock`, taken with `SET NX PX` and a fencing value of this
//! taker's; it is let go by a script that deletes it only while it still holds that value, and
//! it lapses on its own after its lease (a holder that died lets the next one in).
//!
//! # Invariants
//!
//! 1. Two replicas never refresh at once while the lease lasts: a refresh runs under the lock
//!    (invariant 3 of the token stores, `mcp_resilient::auth::TokenStore`), and the second one waits, then loads what
//!    the first one saved. The lease outlasts a refresh by far (30 s against the token
//!    request's own bound).
//! 2. Every operation on Redis ends within the store's wait; the lock within `LOCK_WAIT`.

use std::time::Duration;

use async_trait::async_trait;
use redis::{
    Script,
    aio::{ConnectionManager, ConnectionManagerConfig},
};

use mcp_resilient::auth::{StoreError, StoreLock, StoredAuth, TokenStore};

/// How long a refresh may wait for another replica's.
const LOCK_WAIT: Duration = Duration::from_secs(30);
/// Between two tries of a taken lock.
const LOCK_POLL: Duration = Duration::from_millis(10);
/// How long a lock lasts if its holder never lets it go.
const LEASE: Duration = Duration::from_secs(30);
/// The bound on one operation.
const WAIT: Duration = Duration::from_secs(2);

/// Deletes the lock only while it holds this taker's fencing value.
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
";

/// One server's tokens in Redis. Cheap to clone (one connection, shared).
#[derive(Clone)]
pub struct RedisTokenStore {
    conn: ConnectionManager,
    key: String,
    location: String,
}

impl std::fmt::Debug for RedisTokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTokenStore")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl RedisTokenStore {
    /// The tokens of server `name` in the Redis at `url` (`redis://127.0.0.1:6379`), under
    /// `mcp-resilient:token:{name}`. Connects lazily; must be called inside a tokio runtime.
    pub fn open(url: &str, name: &str) -> Result<Self, StoreError> {
        let what = || format!("redis {name}");
        let client = redis::Client::open(url).map_err(|e| StoreError::new(what(), e))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(WAIT))
            .set_response_timeout(Some(WAIT));
        let conn = ConnectionManager::new_lazy_with_config(client, config)
            .map_err(|e| StoreError::new(what(), e))?;
        let key = format!("mcp-resilient:token:{name}");
        Ok(Self {
            conn,
            location: format!("Redis key {key}"),
            key,
        })
    }

    fn error(&self, detail: impl std::fmt::Display) -> StoreError {
        StoreError::new(self.location.clone(), detail)
    }

    /// Runs `command`, bounded by the wait.
    async fn run<T: redis::FromRedisValue>(&self, command: redis::Cmd) -> Result<T, StoreError> {
        let mut conn = self.conn.clone();
        match tokio::time::timeout(WAIT, command.query_async(&mut conn)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(self.error(e)),
            Err(_) => Err(self.error(format!("no answer within {WAIT:?}"))),
        }
    }
}

#[async_trait]
impl TokenStore for RedisTokenStore {
    async fn load(&self) -> Result<Option<StoredAuth>, StoreError> {
        let mut get = redis::cmd("GET");
        get.arg(&self.key);
        let Some(text) = self.run::<Option<String>>(get).await? else {
            return Ok(None);
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| self.error(format!("not a token record: {e}")))
    }

    async fn save(&self, auth: &StoredAuth) -> Result<(), StoreError> {
        let text = serde_json::to_string(auth).map_err(|e| self.error(e))?;
        let mut set = redis::cmd("SET");
        set.arg(&self.key).arg(text);
        self.run::<()>(set).await
    }

    async fn clear(&self) -> Result<(), StoreError> {
        let mut del = redis::cmd("DEL");
        del.arg(&self.key);
        self.run::<()>(del).await
    }

    async fn lock(&self) -> Result<Option<StoreLock>, StoreError> {
        let lock_key = format!("{}:lock", self.key);
        let fence = format!("{:016x}", rand::random::<u64>());
        let lease = u64::try_from(LEASE.as_millis()).unwrap_or(u64::MAX);
        let deadline = tokio::time::Instant::now() + LOCK_WAIT;
        loop {
            let mut set = redis::cmd("SET");
            set.arg(&lock_key)
                .arg(&fence)
                .arg("NX")
                .arg("PX")
                .arg(lease);
            if self.run::<Option<String>>(set).await?.is_some() {
                return Ok(Some(StoreLock::new(Held {
                    conn: self.conn.clone(),
                    key: lock_key,
                    fence,
                })));
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(self.error(format!(
                    "lock: another replica has held it for over {LOCK_WAIT:?}"
                )));
            }
            tokio::time::sleep(LOCK_POLL).await;
        }
    }

    fn location(&self) -> String {
        self.location.clone()
    }
}

/// The lock, held until dropped; then let go in a task of its own (bounded by the wait).
struct Held {
    conn: ConnectionManager,
    key: String,
    fence: String,
}

impl Drop for Held {
    fn drop(&mut self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return; // Outside a runtime: the lease lets it go.
        };
        let (mut conn, key, fence) = (
            self.conn.clone(),
            std::mem::take(&mut self.key),
            std::mem::take(&mut self.fence),
        );
        runtime.spawn(async move {
            let release = Script::new(RELEASE);
            let mut invocation = release.key(key);
            invocation.arg(fence);
            let _ = tokio::time::timeout(WAIT, invocation.invoke_async::<i64>(&mut conn)).await;
        });
    }
}
