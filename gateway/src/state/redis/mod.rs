//! [`RedisHostStore`]: host sessions kept in Redis, so that a fleet of gateway replicas can take
//! over each other's host sessions (feature `redis`).
//!
//! Each replica answers from its local copy (the store never waits, invariant 2 of the
//! [`HostStore`]) and one task writes what changed to Redis in the background. A replica asked
//! for a session it does not hold [claims](HostStore::claim) it: it reads the record, swaps its
//! owner to itself (a compare-and-swap, [`scripts`]), and serves it from then on; the replica
//! that held it before finds its writes fenced and lets its copy go.
//!
//! Redis unreachable: every replica keeps serving what it holds and accepts new sessions
//! locally; what could not be written stays pending (one operation per session) and is written
//! when Redis answers again, every held session with it (Redis may have lost them). The status
//! says so ([`RedisHostStore::status`]), the log warns once per outage, and the gateway's
//! metric `mcp.server.resilience.host_store.failures` counts failed operations.
//!
//! # Invariants
//!
//! 1. The local copy's lock is never held across an await or a call out (to Redis, to a
//!    caller's closure of the trait's `view`/`update` aside, which must not call the store).
//! 2. A claim, the only operation on a request's path, takes at most the options' `wait`.

mod claim;
mod options;
mod scripts;
mod table;
mod tokens;
mod writer;

use std::{
    fmt,
    sync::{
        Arc, Mutex, MutexGuard, PoisonError,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
};

use futures::future::BoxFuture;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::{
    sync::{Notify, watch},
    time::Instant,
};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::{HostState, HostStore, StoreUnavailable};
pub use options::{RedisStoreError, RedisStoreOptions, RedisStoreStatus};
use scripts::Scripts;
use table::{Held, Op, Table};
pub use tokens::RedisTokenStore;

/// Host sessions' state in Redis, with a local copy: each replica answers from its copy, one
/// task writes changes behind, and a replica asked for a session it does not hold claims it (a
/// compare-and-swap of the record's owner). Redis unreachable: served from the copy, written
/// when it returns. Its keys and values are described in the README ("Scaling beyond one
/// machine: a fleet") and in `gateway/src/state/redis/scripts.rs`.
pub struct RedisHostStore {
    shared: Arc<Inner>,
    _stop: DropGuard,
}

/// What the store and its writer share.
struct Inner {
    conn: ConnectionManager,
    scripts: Scripts,
    options: RedisStoreOptions,
    /// This process's name in fencing values.
    replica: String,
    next_claim: AtomicU64,
    /// Changed by callers (hold, change, drop) and the writer (take, put back, lost).
    table: Mutex<Table>,
    /// Wakes the writer when something is pending.
    wake: Notify,
    /// Batches the writer has said (counted): wakes a [`share`](HostStore::share) waiting for
    /// its first write.
    said: watch::Sender<u64>,
    /// Set by the writer: the last operation failed.
    degraded: AtomicBool,
    failures: AtomicU64,
    claims: AtomicU64,
    fenced: AtomicU64,
}

impl fmt::Debug for RedisHostStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisHostStore")
            .field("replica", &self.shared.replica)
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

impl RedisHostStore {
    /// A store on the Redis at `url` (`redis://127.0.0.1:6379`), connected lazily: made at
    /// once, whether Redis answers or not. Must be called inside a tokio runtime; its writer
    /// task ends when the store is dropped.
    pub fn open(url: &str, options: RedisStoreOptions) -> Result<Self, RedisStoreError> {
        let runtime =
            tokio::runtime::Handle::try_current().map_err(|_| RedisStoreError::NoRuntime)?;
        let client = redis::Client::open(url).map_err(|e| RedisStoreError::Url(e.into()))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(options.wait))
            .set_response_timeout(Some(options.wait))
            .set_number_of_retries(1);
        let conn = ConnectionManager::new_lazy_with_config(client, config)
            .map_err(|e| RedisStoreError::Url(e.into()))?;
        let shared = Arc::new(Inner {
            conn,
            scripts: Scripts::new(&options.prefix),
            options,
            replica: format!("{:016x}", rand::random::<u64>()),
            next_claim: AtomicU64::new(1),
            table: Mutex::default(),
            wake: Notify::new(),
            said: watch::Sender::new(0),
            degraded: AtomicBool::new(false),
            failures: AtomicU64::new(0),
            claims: AtomicU64::new(0),
            fenced: AtomicU64::new(0),
        });
        let stop = CancellationToken::new();
        runtime.spawn(writer::run(shared.clone(), stop.clone()));
        Ok(Self {
            shared,
            _stop: stop.drop_guard(),
        })
    }

    /// What the store is doing now.
    pub fn status(&self) -> RedisStoreStatus {
        let inner = &self.shared;
        RedisStoreStatus {
            degraded: inner.degraded.load(Ordering::Acquire),
            failures: inner.failures.load(Ordering::Relaxed),
            pending: inner.lock().unsaid_count(),
            claims: inner.claims.load(Ordering::Relaxed),
            fenced: inner.fenced.load(Ordering::Relaxed),
        }
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn next_owner(&self) -> String {
        let n = self.next_claim.fetch_add(1, Ordering::Relaxed);
        format!("{}/{n}", self.replica)
    }

    fn ttl_ms(&self) -> u64 {
        u64::try_from(self.options.ttl.as_millis())
            .unwrap_or(u64::MAX)
            .max(1)
    }

    /// Activity on a shared session: its TTL is refreshed, at most every quarter TTL.
    fn active(&self, table: &mut Table, key: &str) -> bool {
        let Some(held) = table.held.get_mut(key) else {
            return false;
        };
        if !held.shared || held.lost || held.touched.elapsed() < self.options.ttl / 4 {
            return false;
        }
        held.touched = Instant::now();
        table.ask(key, Op::Touch);
        true
    }
}

impl HostStore for RedisHostStore {
    fn shared(&self) -> bool {
        true
    }

    fn view(&self, key: &str, look: &mut dyn FnMut(Option<&HostState>)) {
        let inner = &self.shared;
        let mut table = inner.lock();
        let woke = inner.active(&mut table, key);
        look(table.held.get(key).map(|held| &held.state));
        drop(table);
        if woke {
            inner.wake.notify_one();
        }
    }

    fn update(&self, key: &str, change: &mut dyn FnMut(&mut HostState)) {
        let inner = &self.shared;
        let mut table = inner.lock();
        let held = table.held.entry(key.to_owned()).or_insert_with(|| Held {
            state: HostState::default(),
            owner: inner.next_owner(),
            shared: false,
            lost: false,
            touched: Instant::now(),
        });
        change(&mut held.state);
        let write = held.shared && !held.lost;
        if write {
            held.touched = Instant::now();
            table.ask(key, Op::Write);
        }
        drop(table);
        if write {
            inner.wake.notify_one();
        }
    }

    fn remove(&self, key: &str) -> Option<HostState> {
        // The record stays: this process let the session go (idle, or its own end), and another
        // replica may still be asked for it until its TTL runs out.
        self.shared.lock().drop_key(key).map(|held| held.state)
    }

    fn len(&self) -> usize {
        self.shared.lock().held.len()
    }

    /// Ends once the record is in Redis, or Redis failed, or the options' `wait` passed:
    /// the host's next request may reach another replica, which claims the session from there.
    fn share<'a>(&'a self, key: &'a str) -> BoxFuture<'a, ()> {
        let inner = &self.shared;
        let mut table = inner.lock();
        let Some(held) = table.held.get_mut(key) else {
            return Box::pin(std::future::ready(()));
        };
        held.shared = true;
        table.ask(key, Op::Write);
        drop(table);
        let said = inner.said.subscribe();
        inner.wake.notify_one();
        Box::pin(inner.written(key, said))
    }

    fn claim<'a>(
        &'a self,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<HostState>, StoreUnavailable>> {
        let inner = &self.shared;
        Box::pin(async move {
            match tokio::time::timeout(inner.options.wait, inner.take_over(key)).await {
                Ok(found) => found,
                Err(_) => {
                    // The swap may still land in Redis: then this process owns a session it
                    // does not hold, and its next claim swaps from that value like any other.
                    inner.failed("claim");
                    Err(StoreUnavailable::new(format!(
                        "Redis did not answer within {:?}",
                        inner.options.wait
                    )))
                }
            }
        })
    }

    fn holds(&self, key: &str) -> bool {
        self.shared
            .lock()
            .held
            .get(key)
            .is_none_or(|held| !held.lost)
    }

    fn settle(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.shared.all_written())
    }

    fn forget(&self, key: &str) {
        let inner = &self.shared;
        // The record is deleted whoever owns it; the copy here stays until the core removes it
        // (the session's end gives back what it held). Nothing is written for it after this.
        let mut table = inner.lock();
        table.ask(key, Op::Forget);
        drop(table);
        inner.wake.notify_one();
    }
}
