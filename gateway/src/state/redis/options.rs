//! A Redis store's options, its error, and its status.

use std::time::Duration;

/// How a [`RedisHostStore`](super::RedisHostStore) talks to Redis.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RedisStoreOptions {
    /// What every key starts with.
    ///
    /// # Default
    /// `mcp-resilient:`
    pub prefix: String,
    /// How long a session's record outlives its owner's last write or activity.
    ///
    /// # Default
    /// 30 min (the gateway's idle time for a host session)
    pub ttl: Duration,
    /// The longest one operation on Redis may take (a claim, a write, a connect).
    ///
    /// # Default
    /// 500 ms
    pub wait: Duration,
    /// How long the writer waits before trying again while Redis cannot be reached, and how
    /// often it asks Redis who it is when there is nothing to write (a Redis that restarted
    /// empty gets every held session again).
    ///
    /// # Default
    /// 1 s
    pub retry: Duration,
}

impl Default for RedisStoreOptions {
    fn default() -> Self {
        Self {
            prefix: "mcp-resilient:".into(),
            ttl: Duration::from_secs(30 * 60),
            wait: Duration::from_millis(500),
            retry: Duration::from_secs(1),
        }
    }
}

/// Why a [`RedisHostStore`](super::RedisHostStore) could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedisStoreError {
    /// The URL is not a Redis URL (`redis://host:port[/db]`).
    #[error("not a Redis URL")]
    Url(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The store was made outside a tokio runtime (its writer is a task).
    #[error("a Redis store needs a tokio runtime")]
    NoRuntime,
}

/// What a [`RedisHostStore`](super::RedisHostStore) is doing, at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct RedisStoreStatus {
    /// The last operation on Redis failed (unreachable, or too slow): serving from the local
    /// copy, writing when it answers again.
    pub degraded: bool,
    /// Operations on Redis that failed or ran past the wait, since the start.
    pub failures: u64,
    /// Sessions with something not yet written (or being written now).
    pub pending: usize,
    /// Sessions taken over from Redis by this process, since the start.
    pub claims: u64,
    /// Sessions this process held until another replica claimed them, since the start.
    pub fenced: u64,
}
