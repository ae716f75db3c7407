//! Tool re-syncs after `tools/list_changed`: one at a time, fenced by generation.

use std::time::Duration;

use tokio::task::JoinHandle;

use super::Actor;
use crate::{
    state::{Cause, Death, Generation},
    supervisor::session::listing::{Listing, list_all_tools},
};

/// The sync in flight, if any, and whether another was asked for meanwhile. Written only by
/// the actor.
#[derive(Default)]
pub(super) struct SyncState {
    task: Option<SyncTask>,
    /// A list-changed arrived while the current generation's sync ran: sync once more after it.
    pub(super) again: bool,
    /// Attempts (by generation) that were told of a change while doing their own first
    /// listing: whichever of them becomes current syncs once more.
    pending: Vec<Generation>,
}

/// The shortest refresh interval a `ttlMs` can ask for: a server that says "1 ms" must not make
/// the client list in a loop.
const MIN_REFRESH: Duration = Duration::from_secs(1);

struct SyncTask {
    /// Kept beside the task, so that even a sync that panicked is answered for its generation
    /// (and a pending `again` is not lost).
    generation: Generation,
    task: JoinHandle<Result<Listing, Death>>,
}

impl SyncState {
    /// True (once) when attempt `generation` was told of a change during its first listing;
    /// forgets every other attempt's note.
    pub(super) fn take_pending(&mut self, generation: Generation) -> bool {
        let pending = self.pending.contains(&generation);
        self.pending.clear();
        pending
    }

    /// Resolves when the sync in flight ends, with its generation.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: the task is taken out of its slot only in the poll that returns it.
    pub(super) async fn done(&mut self) -> (Generation, Result<Listing, Death>) {
        let Some(sync) = &mut self.task else {
            return std::future::pending().await;
        };
        let joined = (&mut sync.task).await;
        let generation = sync.generation;
        self.task = None;
        let result = joined.unwrap_or_else(|e| {
            Err(Death::new(
                Cause::ConnectFailed,
                format!("sync task failed: {e}"),
            ))
        });
        (generation, result)
    }
}

impl Actor {
    /// Arms (or disarms) the refresh of the current list after its `ttlMs`: a hint to list
    /// again even without a change notification.
    pub(super) fn refresh_after(&mut self, ttl: Option<Duration>) {
        self.refresh = ttl.map(|ttl| Box::pin(tokio::time::sleep(ttl.max(MIN_REFRESH))));
    }

    pub(super) fn on_list_changed(&mut self, generation: Generation) {
        let Some(running) = &self.running else {
            // A change announced while an attempt's own listing was under way: sync once more
            // as soon as that generation is ready, or the set could miss the change.
            if self.attempts.has(generation) && !self.sync.pending.contains(&generation) {
                self.sync.pending.push(generation);
            }
            return;
        };
        if running.live.generation != generation {
            tracing::debug!(server = %self.server(), %generation, current = %running.live.generation, "ignoring list_changed from a replaced generation");
            return;
        }
        if self.sync.task.is_some() {
            self.sync.again = true;
            return;
        }
        let peer = running.live.link.clone();
        let labels = running.live.telemetry.clone();
        let config = self.config.clone();
        let timeout = self.config.call_timeout;
        let task = tokio::spawn(async move {
            tokio::time::timeout(timeout, list_all_tools(&peer, &config.limits, &labels))
                .await
                .unwrap_or_else(|_| {
                    Err(Death::new(
                        Cause::ConnectFailed,
                        format!("tools/list timed out after {timeout:?}"),
                    ))
                })
        });
        self.sync.task = Some(SyncTask { generation, task });
    }

    pub(super) fn on_sync_done(&mut self, generation: Generation, result: Result<Listing, Death>) {
        let Some(running) = self
            .running
            .as_ref()
            .filter(|r| r.live.generation == generation)
        else {
            return;
        };
        if let Err(death) = &result
            && death.cause == Cause::LimitExceeded
        {
            // A list over the limits is a verdict on the generation, not a sync to retry.
            running.live.report_death(death.clone());
            return;
        }
        if let Ok(listing) = &result {
            self.refresh_after(listing.ttl);
        }
        let result = result.map(|listing| listing.tools);
        if let (Ok(tools), Some(running)) = (&result, &self.running) {
            running.live.set_tools(tools);
        }
        match result.map(|tools| self.registry.publish(self.server(), generation, tools)) {
            Ok(Ok(published)) if published.change.is_empty() => {}
            Ok(Ok(published)) => {
                let change = &published.change;
                tracing::info!(server = %self.server(), %generation, added = change.added.len(), removed = change.removed.len(), changed = change.changed.len(), "tools changed");
                self.announce(&published);
            }
            Ok(Err(e)) => {
                tracing::warn!(server = %self.server(), %generation, "tool list rejected, keeping the previous set: {e}")
            }
            Err(death) => {
                tracing::warn!(server = %self.server(), %generation, "tool sync failed, keeping the previous set: {}", death.detail)
            }
        }
        if std::mem::take(&mut self.sync.again) {
            self.on_list_changed(generation);
        }
    }

    pub(super) async fn stop_sync(&mut self) {
        self.sync.again = false;
        self.refresh = None;
        if let Some(sync) = self.sync.task.take() {
            sync.task.abort();
            let _ = sync.task.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicked_sync_is_answered_for_its_own_generation() {
        let mut state = SyncState {
            task: Some(SyncTask {
                generation: Generation::of(7),
                task: tokio::spawn(async { panic!("a sync that panics") }),
            }),
            again: true,
            pending: Vec::new(),
        };
        let (generation, result) = state.done().await;
        assert_eq!(generation, 7, "the generation survives the panic");
        assert!(result.is_err());
        assert!(state.again, "a pending re-sync is still pending");
    }
}
