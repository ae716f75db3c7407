//! Progress routes: where each call's progress goes, and what arrived before its route did.

use std::{
    collections::{HashMap, VecDeque},
    sync::Arc,
    time::Duration,
};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use tokio::time::Instant;

use super::Relay;
use crate::{call::ProgressFn, state::Generation};

/// The longest a call waits, after its answer, for progress that arrived before the answer but
/// has not reached its callback yet; also the longest progress is held for a route not yet
/// registered. It is normally a few scheduler turns; the bound is for a notification rmcp never
/// hands over (its task gone with a runtime that is shutting down) and for a send that stalls.
pub(in crate::supervisor) const SETTLE_LIMIT: Duration = Duration::from_secs(1);

/// The most progress notifications one server's relay holds for routes not registered yet (and
/// the most tokens whose early arrivals it counts); past it, progress without a route goes to
/// the host at once, as it did before anything was held.
pub(in crate::supervisor) const HELD_LIMIT: usize = 64;

type Key = (Generation, ProgressToken);

/// One registered route: where its progress goes, and how much of it is on the way.
struct Route {
    callback: ProgressFn,
    /// Progress notifications for this route that the transport has received.
    arrived: u64,
    /// Of those (or of later ones), how many reached `callback`.
    delivered: u64,
}

/// A progress notification waiting for its route.
struct Held {
    key: Key,
    /// Tells the waiting handler its own notification from others of the same token.
    seq: u64,
    progress: ProgressNotificationParam,
}

/// The progress side of a [`Relay`].
#[derive(Default)]
pub(super) struct Table {
    routes: HashMap<Key, Route>,
    /// Per generation, the calls that want progress and are between their send and their route.
    sending: HashMap<Generation, u32>,
    /// Arrivals counted for tokens without a route while their generation had a call sending.
    early: HashMap<Key, u64>,
    held: VecDeque<Held>,
    next: u64,
}

impl Table {
    pub(super) fn routes(&self) -> usize {
        self.routes.len()
    }

    pub(super) fn held(&self) -> usize {
        self.held.len()
    }

    #[cfg(test)]
    pub(super) fn early_counted(&self) -> usize {
        self.early.len()
    }

    /// Ends one call's sending on `generation`; the last one ends the generation's early counts
    /// (no route can claim them now).
    fn sent(&mut self, generation: Generation) {
        let Some(count) = self.sending.get_mut(&generation) else {
            return;
        };
        *count -= 1;
        if *count == 0 {
            self.sending.remove(&generation);
            self.early.retain(|(early, _), _| *early != generation);
        }
    }
}

impl Relay {
    /// Marks a call that wants progress as being sent on `generation`: from now until the
    /// returned guard registers the call's route (or is dropped), progress of that generation
    /// with no route is held for the route to take.
    pub(in crate::supervisor) fn sending(self: &Arc<Self>, generation: Generation) -> Sending {
        *self.lock().sending.entry(generation).or_default() += 1;
        Sending {
            relay: self.clone(),
            generation,
            routed: false,
        }
    }

    /// Counts a progress notification for `token` that `generation`'s transport has just
    /// received, before rmcp hands it on. Progress for a token without a route is counted only
    /// while a call of that generation is being sent (it may be that call's).
    pub(in crate::supervisor) fn arrived(&self, generation: Generation, token: &ProgressToken) {
        let mut table = self.lock();
        let key = (generation, token.clone());
        if let Some(route) = table.routes.get_mut(&key) {
            route.arrived += 1;
        } else if table.sending.contains_key(&generation)
            && (table.early.contains_key(&key) || table.early.len() < HELD_LIMIT)
        {
            *table.early.entry(key).or_default() += 1;
        }
    }

    /// Hands `progress` to the call waiting for it; gives it back when no call is. Progress
    /// that may belong to a call still being sent waits for that call's route (see
    /// [`Sending`]), at most [`SETTLE_LIMIT`].
    pub(in crate::supervisor) async fn progress(
        &self,
        generation: Generation,
        progress: ProgressNotificationParam,
    ) -> Option<ProgressNotificationParam> {
        let key = (generation, progress.progress_token.clone());
        let seq = {
            let mut table = self.lock();
            if let Some(route) = table.routes.get(&key) {
                let callback = route.callback.clone();
                drop(table);
                self.deliver(&key, &callback, progress);
                return None;
            }
            if !table.sending.contains_key(&generation) || table.held.len() >= HELD_LIMIT {
                return Some(progress);
            }
            let seq = table.next;
            table.next += 1;
            table.held.push_back(Held { key, seq, progress });
            seq
        };
        self.await_route(generation, seq).await
    }

    /// Waits while held progress `seq` may still be taken by a route: until a route takes it
    /// (`None`), no call of `generation` is being sent any more, or [`SETTLE_LIMIT`] passes
    /// (then it is given back).
    async fn await_route(
        &self,
        generation: Generation,
        seq: u64,
    ) -> Option<ProgressNotificationParam> {
        let deadline = Instant::now() + SETTLE_LIMIT;
        loop {
            let woken = self.changed.notified();
            tokio::pin!(woken);
            // Registered before the look, so a change between the look and the wait wakes it.
            woken.as_mut().enable();
            {
                let mut table = self.lock();
                let at = table.held.iter().position(|held| held.seq == seq)?;
                if Instant::now() >= deadline || !table.sending.contains_key(&generation) {
                    return table.held.remove(at).map(|held| held.progress);
                }
            }
            let _ = tokio::time::timeout_at(deadline, woken).await;
        }
    }

    fn deliver(&self, key: &Key, callback: &ProgressFn, progress: ProgressNotificationParam) {
        callback(progress);
        if let Some(route) = self.lock().routes.get_mut(key) {
            route.delivered += 1;
        }
        self.changed.notify_waiters();
    }
}

/// A call that wants progress, between its send and its route (see [`Relay::sending`]).
pub(in crate::supervisor) struct Sending {
    relay: Arc<Relay>,
    generation: Generation,
    routed: bool,
}

impl Sending {
    /// Routes progress for `token` to `callback` until the returned route is dropped. What was
    /// held for `token` reaches `callback` first, in the order it was held, and what arrived for
    /// it is counted as the route's.
    pub(in crate::supervisor) fn route(
        mut self,
        token: ProgressToken,
        callback: ProgressFn,
    ) -> ProgressRoute {
        let key = (self.generation, token);
        let mut delivered = 0;
        loop {
            let taken: VecDeque<Held> = {
                let mut table = self.relay.lock();
                let (taken, kept): (VecDeque<Held>, VecDeque<Held>) =
                    std::mem::take(&mut table.held)
                        .into_iter()
                        .partition(|held| held.key == key);
                table.held = kept;
                if taken.is_empty() {
                    let arrived = table.early.remove(&key).unwrap_or(0).max(delivered);
                    let route = Route {
                        callback,
                        arrived,
                        delivered,
                    };
                    table.routes.insert(key.clone(), route);
                    table.sent(self.generation);
                    self.routed = true;
                    break;
                }
                taken
            };
            // Outside the lock: the callback is the host's code.
            for held in taken {
                callback(held.progress);
                delivered += 1;
            }
        }
        self.relay.changed.notify_waiters();
        ProgressRoute {
            relay: self.relay.clone(),
            key: Some(key),
        }
    }
}

impl Drop for Sending {
    fn drop(&mut self) {
        if !self.routed {
            self.relay.lock().sent(self.generation);
            self.relay.changed.notify_waiters();
        }
    }
}

/// Keeps one progress route registered; unregisters it when dropped.
pub(in crate::supervisor) struct ProgressRoute {
    relay: Arc<Relay>,
    key: Option<Key>,
}

impl ProgressRoute {
    /// Waits until every progress notification counted as arrived for this route has been
    /// delivered, at most `limit`; false if the limit passed first.
    pub(in crate::supervisor) async fn settled(&self, limit: Duration) -> bool {
        let Some(key) = &self.key else {
            return true;
        };
        let deadline = Instant::now() + limit;
        loop {
            let woken = self.relay.changed.notified();
            tokio::pin!(woken);
            // Registered before the look, so a delivery between the look and the wait wakes it.
            woken.as_mut().enable();
            let on_the_way = self
                .relay
                .lock()
                .routes
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
            self.relay.lock().routes.remove(&key);
        }
    }
}
