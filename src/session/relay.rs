//! [`Relay`]: what outlives generations on the way between a server and the host — the progress
//! of calls in flight, and the resource subscriptions every new generation re-establishes.
//!
//! # Invariants
//!
//! 1. A progress callback is registered under its generation and rmcp's progress token (each
//!    generation's peer numbers its tokens from the start, so the token alone is ambiguous) for
//!    exactly as long as its request is in flight ([`ProgressRoute`] unregisters on drop).
//! 2. The subscription set is the host's intent, not a server's state: it survives outages and is
//!    sent to each new generation (2025: `resources/subscribe` per URI; 2026-07-28: the listen
//!    request's filter).

use std::{
    collections::{BTreeSet, HashMap},
    sync::{Arc, Mutex, PoisonError},
};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use tokio::sync::watch;

use crate::{call::ProgressFn, state::Generation};

/// Shared by a supervisor's call path, its generations' handlers and their listeners.
pub(crate) struct Relay {
    progress: Mutex<HashMap<(Generation, ProgressToken), ProgressFn>>,
    /// The resources the host subscribed to.
    pub(crate) subscriptions: watch::Sender<BTreeSet<String>>,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay")
            .field("progress_routes", &self.lock().len())
            .field("subscriptions", &*self.subscriptions.borrow())
            .finish()
    }
}

impl Default for Relay {
    fn default() -> Self {
        Relay {
            progress: Mutex::default(),
            subscriptions: watch::Sender::new(BTreeSet::new()),
        }
    }
}

impl Relay {
    /// Routes progress for `token` on `generation` to `callback` until the returned route is
    /// dropped.
    pub(crate) fn route_progress(
        self: &Arc<Self>,
        generation: Generation,
        token: ProgressToken,
        callback: ProgressFn,
    ) -> ProgressRoute {
        self.lock().insert((generation, token.clone()), callback);
        ProgressRoute {
            relay: self.clone(),
            key: Some((generation, token)),
        }
    }

    /// Hands `progress` to the call waiting for it; gives it back when no call is.
    pub(crate) fn progress(
        &self,
        generation: Generation,
        progress: ProgressNotificationParam,
    ) -> Option<ProgressNotificationParam> {
        let callback = self
            .lock()
            .get(&(generation, progress.progress_token.clone()))
            .cloned();
        match callback {
            Some(callback) => {
                callback(progress);
                None
            }
            None => Some(progress),
        }
    }

    /// The resources subscribed to now.
    pub(crate) fn subscribed(&self) -> BTreeSet<String> {
        self.subscriptions.borrow().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(Generation, ProgressToken), ProgressFn>> {
        self.progress.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Keeps one progress route registered; unregisters it when dropped.
pub(crate) struct ProgressRoute {
    relay: Arc<Relay>,
    key: Option<(Generation, ProgressToken)>,
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            self.relay.lock().remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use rmcp::model::NumberOrString;

    use super::*;

    fn progress(token: &str, value: f64) -> ProgressNotificationParam {
        ProgressNotificationParam::new(ProgressToken(NumberOrString::String(token.into())), value)
    }

    #[test]
    fn progress_reaches_its_own_call_only_while_the_route_lives() {
        let relay = Arc::new(Relay::default());
        let seen = Arc::new(AtomicU32::new(0));
        let counter = seen.clone();
        let route = relay.route_progress(
            Generation::of(2),
            progress("1", 0.0).progress_token,
            Arc::new(move |_| {
                counter.fetch_add(1, Ordering::SeqCst);
            }),
        );
        assert!(
            relay
                .progress(Generation::of(2), progress("1", 0.5))
                .is_none()
        );
        // The same token on another generation is another request.
        assert!(
            relay
                .progress(Generation::of(1), progress("1", 0.5))
                .is_some()
        );
        assert!(
            relay
                .progress(Generation::of(2), progress("2", 0.5))
                .is_some()
        );
        drop(route);
        assert!(
            relay
                .progress(Generation::of(2), progress("1", 1.0))
                .is_some()
        );
        assert_eq!(seen.load(Ordering::SeqCst), 1);
    }
}
