//! [`Relay`]: what outlives generations on the way between a server and the host — the progress
//! of calls in flight, and the resource subscriptions every new generation re-establishes.
//!
//! # Invariants
//!
//! 1. A progress callback is registered under its generation and rmcp's progress token (each
//!    generation's peer numbers its tokens from the start, so the token alone is ambiguous) for
//!    exactly as long as its request is in flight ([`ProgressRoute`](progress::ProgressRoute) unregisters on drop).
//! 2. Every progress notification the transport received for a route before the request's
//!    answer reaches the route's callback before the call returns, or the call waits for it (at
//!    most [`SETTLE_LIMIT`]): the transport counts each one as it arrives
//!    ([`Relay::arrived`]), the route counts each one it delivers, and the call path waits
//!    ([`ProgressRoute::settled`](progress::ProgressRoute::settled)) until the two agree. rmcp runs each notification on a task of
//!    its own but hands the answer straight to the call, so without the wait the last progress
//!    can lose the race and go to the host unclaimed, without its request.
//! 3. Progress can also arrive before its route: rmcp picks the token inside the send, so the
//!    route is registered only after the request may have left, and a fast server's progress can
//!    come back first. While a call that wants progress is between its send and its route
//!    ([`Relay::sending`]), progress of that generation with no route is counted and held (at most
//!    [`HELD_LIMIT`](progress::HELD_LIMIT) notifications, each at most [`SETTLE_LIMIT`]), and the route, once
//!    registered, takes what was held for it, in the order it arrived. What no route takes goes
//!    to the host unclaimed, as before.
//! 4. The subscription set is the host's intent, not a server's state: it survives outages and is
//!    sent to each new generation (2025: `resources/subscribe` per URI; 2026-07-28: the listen
//!    request's filter).

mod progress;

use std::{
    collections::BTreeSet,
    sync::{Mutex, MutexGuard, PoisonError},
};

use tokio::sync::{Notify, watch};

pub(in crate::supervisor) use progress::SETTLE_LIMIT;

/// Shared by a supervisor's call path, its generations' handlers and their listeners.
pub(in crate::supervisor) struct Relay {
    progress: Mutex<progress::Table>,
    /// Woken after every change to the progress table (a delivery, a route registered, a send
    /// finished), for calls waiting in [`settled`](progress::ProgressRoute::settled) and for held progress.
    changed: Notify,
    /// The resources the host subscribed to.
    pub(in crate::supervisor) subscriptions: watch::Sender<BTreeSet<String>>,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let table = self.lock();
        f.debug_struct("Relay")
            .field("progress_routes", &table.routes())
            .field("progress_held", &table.held())
            .field("subscriptions", &*self.subscriptions.borrow())
            .finish()
    }
}

impl Default for Relay {
    fn default() -> Self {
        Relay {
            progress: Mutex::default(),
            changed: Notify::new(),
            subscriptions: watch::Sender::new(BTreeSet::new()),
        }
    }
}

impl Relay {
    /// The resources subscribed to now.
    pub(in crate::supervisor) fn subscribed(&self) -> BTreeSet<String> {
        self.subscriptions.borrow().clone()
    }

    fn lock(&self) -> MutexGuard<'_, progress::Table> {
        self.progress.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests;
