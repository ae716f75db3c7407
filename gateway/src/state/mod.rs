//! What the gateway remembers of each host session, behind one interface ([`HostStore`]), so
//! that a store shared by several gateway replicas can replace the in-memory one
//! ([`MemoryHostStore`], the default) without touching the core.
//!
//! A host session's state is what it negotiated and what it asked for since: the revision, its
//! capabilities and client info (from `initialize`), the log level it set and the resources it
//! subscribed to ([`HostState`]). The live parts of a session (its streams, its outbox, the
//! calls in flight, its `per_host` upstreams) are not state: they belong to the process that
//! holds the connection.
//!
//! # Invariants
//!
//! 1. The core reads and writes a host's state only through the store, under the host's key
//!    (the `Mcp-Session-Id` over HTTP; a key of the process's own for stdio and for hosts
//!    without a session), from its first write until the host is gone, when the state is
//!    removed.
//! 2. A store never waits: the core calls it on the paths of requests and of notifications. A
//!    networked store keeps a local copy, answers from it and writes through in the background.
//!    The one exception is [`HostStore::claim`], on the path of a request for a session this
//!    process does not hold, and it is bounded by the store.
//! 3. Only a host session the front [shared](HostStore::share) (one with a session id that
//!    another replica may be asked for) leaves the process; keys of the process's own never do.

// The log level is deprecated by SEP-2577, but hosts of the session era set it, and the proxy
// keeps it for them.
#![allow(deprecated)]

mod memory;
#[cfg(feature = "redis")]
mod redis;

use std::{collections::BTreeMap, fmt};

use futures::future::BoxFuture;

use rmcp::model::{ClientCapabilities, Implementation, LoggingLevel};
use serde::{Deserialize, Serialize};

pub use memory::MemoryHostStore;
#[cfg(feature = "redis")]
pub use redis::{
    RedisHostStore, RedisStoreError, RedisStoreOptions, RedisStoreStatus, RedisTokenStore,
};

/// One host session's state. Serializable, so a shared store can keep it as one record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HostState {
    /// The revision the host negotiated (`2025-11-25`, …); none before `initialize` and for
    /// hosts that never initialize (2026-07-28).
    pub protocol: Option<String>,
    /// What the host declared it answers (elicitation, sampling, roots).
    pub capabilities: ClientCapabilities,
    /// The host's name and version, as it sent them.
    pub client: Option<Implementation>,
    /// The log level the host set last.
    pub level: Option<LoggingLevel>,
    /// The resources the host subscribed to, each with the server that has it.
    pub subscriptions: BTreeMap<String, String>,
}

/// A [claim](HostStore::claim) that could not tell whether its session exists: the shared
/// store did not answer within its bound, failed, or kept changing under the claim.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the host-session store could not tell: {detail}")]
#[non_exhaustive]
pub struct StoreUnavailable {
    /// What went wrong, in words.
    pub detail: String,
}

impl StoreUnavailable {
    /// `detail` says what went wrong.
    pub fn new(detail: impl Into<String>) -> Self {
        Self {
            detail: detail.into(),
        }
    }
}

/// Where host sessions' state is kept. See the [module documentation](self).
pub trait HostStore: Send + Sync + fmt::Debug + 'static {
    /// Calls `look` with the state kept under `key`, if any. Must not wait.
    fn view(&self, key: &str, look: &mut dyn FnMut(Option<&HostState>));

    /// Applies `change` to the state kept under `key` (a default state if there is none yet).
    /// Must not wait.
    fn update(&self, key: &str, change: &mut dyn FnMut(&mut HostState));

    /// Removes the state kept under `key`, and returns it.
    fn remove(&self, key: &str) -> Option<HostState>;

    /// How many host sessions have state here.
    fn len(&self) -> usize;

    /// Whether no host session has state here.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The host session `key` has a session id that other replicas may be asked for: keep its
    /// state where they can take it over, from now until it is [removed](Self::remove).
    ///
    /// The gateway answers the host's `initialize` only once the future ends, so that the
    /// host's next request finds the session on whichever replica it reaches. A store that
    /// shares through another process ends it once the session can be found there, or once its
    /// own bound has passed (the session is then served from this process, and shared late).
    ///
    /// # Default
    /// Nothing to wait for: a store of one process has no one to share with.
    fn share<'a>(&'a self, key: &'a str) -> BoxFuture<'a, ()> {
        let _ = key;
        Box::pin(std::future::ready(()))
    }

    /// A host asked this process for session `key`, which it does not hold: take the session
    /// over from wherever it was kept (this process is its only owner from now on) and keep its
    /// state here; `Ok(None)` when no such session is known, and [`StoreUnavailable`] when the
    /// store cannot tell within its bound. The front answers the first with `404` (the host
    /// starts a new session) and the second with `500` (the host keeps its session and its
    /// next request claims again), so a slow store never costs a host its session.
    ///
    /// # Cancel safety
    /// Dropping the future before it ends leaves the session unclaimed or claimed but not
    /// held here; either way the next claim starts again.
    ///
    /// # Default
    /// `Ok(None)`: a store of one process knows only the sessions it holds.
    fn claim<'a>(
        &'a self,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<HostState>, StoreUnavailable>> {
        let _ = key;
        Box::pin(std::future::ready(Ok(None)))
    }

    /// Whether this process still owns session `key`: false once another replica has claimed
    /// it (the front then lets the session go and claims it back on its next request).
    ///
    /// # Default
    /// `true`.
    fn holds(&self, key: &str) -> bool {
        let _ = key;
        true
    }

    /// The gateway is about to end: wait until what was changed so far is written where other
    /// replicas read it (or the store's bound passed), so that they take every session over
    /// as it is now.
    ///
    /// # Default
    /// Nothing to wait for: a store of one process has no one to write for.
    fn settle(&self) -> BoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }

    /// Whether other processes serve this store's sessions too (a fleet behind a balancer):
    /// a host's request may then reach any of them, and a balancer may send a request whose
    /// process died before its response head to another one. The own front opens a tool
    /// call's response before the call runs when it is (`gateway/src/http/own/`).
    ///
    /// # Default
    /// `false`: a store of one process.
    fn shared(&self) -> bool {
        false
    }

    /// The host ended session `key` itself (`DELETE`): forget it everywhere, not only here.
    /// The state held here stays until the core [removes](Self::remove) it, as the session's
    /// end gives back what it held.
    ///
    /// # Default
    /// Nothing: the core's `remove` is all a store of one process needs.
    fn forget(&self, key: &str) {
        let _ = key;
    }
}

impl dyn HostStore {
    /// What `read` finds in the state under `key` (`None` when there is none).
    pub(crate) fn read<T>(&self, key: &str, read: impl FnOnce(&HostState) -> T) -> Option<T> {
        let mut read = Some(read);
        let mut found = None;
        self.view(key, &mut |state| {
            if let (Some(state), Some(read)) = (state, read.take()) {
                found = Some(read(state));
            }
        });
        found
    }

    /// Changes the state under `key` with `change`, and returns what `change` returned (`None`
    /// only from a store that broke its contract and never applied it).
    pub(crate) fn change<T>(
        &self,
        key: &str,
        change: impl FnOnce(&mut HostState) -> T,
    ) -> Option<T> {
        let mut change = Some(change);
        let mut out = None;
        self.update(key, &mut |state| {
            if let Some(change) = change.take() {
                out = Some(change(state));
            }
        });
        out
    }
}
