//! [`Relay`]: what outlives generations on the way between a server and the host — the progress
//! of calls in flight, and the resource subscriptions every new generation re-establishes.
//!
//! # Invariants
//!
//! 1. A progress callback is registered under its generation and rmcp's progress token (each
//!    generation's peer numbers its tokens from the start, so the token alone is ambiguous) for
//!    exactly as long as its request is in flight ([`ProgressRoute`] unregisters on drop).
//! 2. Every progress notification the transport received for a route before the request's
//!    answer reaches the route's callback before the call returns, or the call waits for it (at
//!    most [`SETTLE_LIMIT`]): the transport counts each one as it arrives
//!    ([`Relay::arrived`]), the route counts each one it delivers, and the call path waits
//!    ([`ProgressRoute::settled`]) until the two agree. rmcp runs each notification on a task of
//!    its own but hands the answer straight to the call, so without the wait the last progress
//!    can lose the race and go to the host unclaimed, without its request.
//! 3. The subscription set is the host's intent, not a server's state: it survives outages and is
//!    sent to each new generation (2025: `resources/subscribe` per URI; 2026-07-28: the listen
//!    request's filter).

use std::{
    collections::{BTreeSet, HashMap},
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use tokio::sync::{Notify, watch};

use crate::{call::ProgressFn, state::Generation};

/// The longest a call waits, after its answer, for progress that arrived before the answer but
/// has not reached its callback yet. It is normally a few scheduler turns; the bound is for a
/// notification rmcp never hands over (its task gone with a runtime that is shutting down).
pub(crate) const SETTLE_LIMIT: Duration = Duration::from_secs(1);

type Key = (Generation, ProgressToken);

/// One registered route: where its progress goes, and how much of it is on the way.
struct Route {
    callback: ProgressFn,
    /// Progress notifications for this route that the transport has received.
    arrived: u64,
    /// Of those (or of later ones), how many reached `callback`.
    delivered: u64,
}

/// Shared by a supervisor's call path, its generations' handlers and their listeners.
pub(crate) struct Relay {
    progress: Mutex<HashMap<Key, Route>>,
    /// Woken after every delivery, for calls waiting in [`ProgressRoute::settled`].
    delivered: Notify,
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
            delivered: Notify::new(),
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
        let route = Route {
            callback,
            arrived: 0,
            delivered: 0,
        };
        self.lock().insert((generation, token.clone()), route);
        ProgressRoute {
            relay: self.clone(),
            key: Some((generation, token)),
        }
    }

    /// Counts a progress notification for `token` that `generation`'s transport has just
    /// received, before rmcp hands it on; progress for a token without a route is not counted.
    pub(crate) fn arrived(&self, generation: Generation, token: &ProgressToken) {
        if let Some(route) = self.lock().get_mut(&(generation, token.clone())) {
            route.arrived += 1;
        }
    }

    /// Hands `progress` to the call waiting for it; gives it back when no call is.
    pub(crate) fn progress(
        &self,
        generation: Generation,
        progress: ProgressNotificationParam,
    ) -> Option<ProgressNotificationParam> {
        let key = (generation, progress.progress_token.clone());
        let callback = self.lock().get(&key).map(|route| route.callback.clone());
        let Some(callback) = callback else {
            return Some(progress);
        };
        callback(progress);
        if let Some(route) = self.lock().get_mut(&key) {
            route.delivered += 1;
        }
        self.delivered.notify_waiters();
        None
    }

    /// The resources subscribed to now.
    pub(crate) fn subscribed(&self) -> BTreeSet<String> {
        self.subscriptions.borrow().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Route>> {
        self.progress.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Keeps one progress route registered; unregisters it when dropped.
pub(crate) struct ProgressRoute {
    relay: Arc<Relay>,
    key: Option<Key>,
}

impl ProgressRoute {
    /// Waits until every progress notification counted as arrived for this route has been
    /// delivered, at most `limit`; false if the limit passed first.
    pub(crate) async fn settled(&self, limit: Duration) -> bool {
        let Some(key) = &self.key else {
            return true;
        };
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let woken = self.relay.delivered.notified();
            tokio::pin!(woken);
            // Registered before the look, so a delivery between the look and the wait wakes it.
            woken.as_mut().enable();
            let on_the_way = self
                .relay
                .lock()
                .get(key)
                .is_some_and(|route| route.arrived > route.delivered);
            if !on_the_way {
                return true;
            }
            if tokio::time::timeout_at(deadline, woken).await.is_err() {
                return false;
            }
        }
    }
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

    #[tokio::test(start_paused = true)]
    async fn a_route_is_settled_only_when_what_arrived_was_delivered() {
        let relay = Arc::new(Relay::default());
        let generation = Generation::of(1);
        let token = progress("7", 0.0).progress_token;
        let route = relay.route_progress(generation, token.clone(), Arc::new(|_| {}));
        assert!(route.settled(Duration::ZERO).await, "nothing arrived yet");

        relay.arrived(generation, &token);
        relay.arrived(generation, &token);
        // Another generation's token of the same number, and a token without a route, are
        // not this route's.
        relay.arrived(Generation::of(2), &token);
        relay.arrived(generation, &progress("8", 0.0).progress_token);
        assert!(
            !route.settled(Duration::from_millis(50)).await,
            "two arrived, none delivered: the wait ends at its limit"
        );

        // A delivery while the call waits wakes it; it settles once both are delivered.
        let route = Arc::new(route);
        let waiting = tokio::spawn({
            let route = route.clone();
            async move { route.settled(Duration::from_secs(5)).await }
        });
        tokio::task::yield_now().await;
        assert!(relay.progress(generation, progress("7", 0.5)).is_none());
        tokio::task::yield_now().await;
        assert!(
            !waiting.is_finished(),
            "one of two delivered: still waiting"
        );
        assert!(relay.progress(generation, progress("7", 1.0)).is_none());
        assert!(
            waiting.await.expect("the waiter ends"),
            "settled by deliveries"
        );
        assert!(route.settled(Duration::ZERO).await);

        drop(route);
        relay.arrived(generation, &token);
        assert!(relay.progress(generation, progress("7", 1.0)).is_some());
        assert_eq!(
            relay.lock().len(),
            0,
            "arrival without a route keeps nothing"
        );
    }
}
