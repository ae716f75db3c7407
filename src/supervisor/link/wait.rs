//! Waiting for a generation: the ready one, or during an outage the one `call_wait` waits for;
//! and, for a request the server provably did not run, the generation after the one that
//! refused it.

use std::sync::Arc;

use tokio::time::Instant;

use super::Link;
use crate::{CallError, state::ConnectionState, supervisor::live::Live};

impl Link {
    /// The ready generation, or (during an outage) the one `call_wait` waits for.
    pub(super) async fn current(&self) -> Result<Arc<Live>, CallError> {
        let live = self.live.borrow().clone();
        match live.filter(|l| !l.dead.is_cancelled()) {
            Some(live) => Ok(live),
            None => self.wait_for_live().await,
        }
    }

    /// The generation after `dead`, waited for until `deadline` at most, or until the server
    /// is `failed` or `stopped`; then the call ends with `not_run` (it ran nowhere).
    pub(super) async fn next_live(
        &self,
        dead: &Live,
        deadline: Instant,
        not_run: CallError,
    ) -> Result<Arc<Live>, CallError> {
        let (mut live, mut state) = (self.live.subscribe(), self.state.subscribe());
        loop {
            let next = live.borrow_and_update().clone();
            if let Some(next) =
                next.filter(|l| l.generation > dead.generation && !l.dead.is_cancelled())
            {
                return Ok(next);
            }
            if matches!(
                *state.borrow_and_update(),
                ConnectionState::Failed { .. } | ConnectionState::Stopped
            ) {
                return Err(not_run);
            }
            tokio::select! {
                changed = live.changed() => if changed.is_err() { return Err(not_run) },
                changed = state.changed() => if changed.is_err() { return Err(not_run) },
                _ = tokio::time::sleep_until(deadline) => return Err(not_run),
            }
        }
    }

    /// During an outage: waits up to `call_wait` for a ready generation; fails at once without
    /// `call_wait`, or when the server is `failed` or `stopped` (it will not come back by itself).
    async fn wait_for_live(&self) -> Result<Arc<Live>, CallError> {
        let Some(wait) = self.call_wait else {
            return Err(self.unavailable());
        };
        let deadline = crate::clock::deadline_in(wait);
        let mut held = crate::telemetry::Held::start(&self.server);
        let (mut live, mut state) = (self.live.subscribe(), self.state.subscribe());
        loop {
            let current = live.borrow_and_update().clone();
            if let Some(ready) = current.filter(|l| !l.dead.is_cancelled()) {
                held.ready();
                return Ok(ready);
            }
            if matches!(
                *state.borrow_and_update(),
                ConnectionState::Failed { .. } | ConnectionState::Stopped
            ) {
                return Err(self.unavailable());
            }
            tokio::select! {
                changed = live.changed() => changed.map_err(|_| self.unavailable())?,
                changed = state.changed() => changed.map_err(|_| self.unavailable())?,
                _ = tokio::time::sleep_until(deadline) => return Err(self.unavailable()),
            }
        }
    }
}
