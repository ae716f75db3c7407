//! Initialize-era resource subscriptions (`resources/subscribe` / `resources/unsubscribe`):
//! which session subscribed to which URI. The 2026-07-28 ones live in their
//! `subscriptions/listen` filter (see [`crate::listen`]).
//!
//! # Invariants
//!
//! 1. A (session, URI) pair is recorded at most once: subscribing twice is one subscription,
//!    and one `resources/unsubscribe` ends it.
//! 2. A pair is recorded before the `resources/subscribe` reply is sent, so an update made
//!    after the client saw the reply reaches it.
//! 3. Pairs whose session's transport has closed are dropped whenever the set is read; they are
//!    never counted nor notified.

use std::sync::{Mutex, MutexGuard, PoisonError};

use rmcp::{Peer, RoleServer};

struct Subscriber {
    /// The handler's session number (see `MockHandler`).
    session: u64,
    uri: String,
    peer: Peer<RoleServer>,
}

/// The initialize-era resource subscriptions of one server.
#[derive(Default)]
pub(crate) struct Subscribers(Mutex<Vec<Subscriber>>);

impl Subscribers {
    fn live(&self) -> MutexGuard<'_, Vec<Subscriber>> {
        let mut all = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        all.retain(|s| !s.peer.is_transport_closed());
        all
    }

    /// Records that `session` (reached through `peer`) subscribed to `uri`.
    pub(crate) fn subscribe(&self, session: u64, uri: &str, peer: Peer<RoleServer>) {
        let mut all = self.live();
        if !all.iter().any(|s| s.session == session && s.uri == uri) {
            let uri = uri.to_owned();
            all.push(Subscriber { session, uri, peer });
        }
    }

    /// Forgets `session`'s subscription to `uri`; `false` if it had none.
    pub(crate) fn unsubscribe(&self, session: u64, uri: &str) -> bool {
        let mut all = self.live();
        let before = all.len();
        all.retain(|s| !(s.session == session && s.uri == uri));
        all.len() < before
    }

    /// The peers of the live sessions subscribed to `uri`.
    pub(crate) fn of(&self, uri: &str) -> Vec<Peer<RoleServer>> {
        let all = self.live();
        all.iter()
            .filter(|s| s.uri == uri)
            .map(|s| s.peer.clone())
            .collect()
    }

    /// Live (session, URI) pairs.
    pub(crate) fn count(&self) -> usize {
        self.live().len()
    }
}
