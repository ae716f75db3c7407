//! Waiting for a generation: the ready one, or during an outage the one `call_wait` waits for;
//! and, for a request the server provably did not run, the generation after the one that
//! refused it.
//!
//! Every wait reads the board ([`Published`]): a call never fails `Unavailable` while the
//! status reads `ready`. A generation whose death was reported but that the actor has not yet
//! taken off the board is waited past, within the call's own limit, whatever `call_wait` says.

use std::{sync::Arc, time::Duration};

use tokio::{sync::watch, time::Instant};

use super::CallPath;
use crate::{
    CallError, state::ConnectionState, supervisor::board::Published,
    supervisor::session::live::Live,
};

impl CallPath {
    /// The ready generation, or (during an outage) the one `call_wait` waits for. `limit` is
    /// the call's own: the longest it waits for the actor to publish a death already reported.
    pub(super) async fn current(&self, limit: Duration) -> Result<Arc<Live>, CallError> {
        let mut rx = self.board.subscribe();
        let board = rx.borrow_and_update().clone();
        match board.taking_calls() {
            Some(live) => Ok(live.clone()),
            None => self.wait_for_live(rx, board, limit).await,
        }
    }

    /// The generation after `dead`, waited for until `deadline` at most, or until the server
    /// is `failed`, `stopping` or `stopped`; then the call ends with `not_run` (it ran nowhere).
    pub(super) async fn next_live(
        &self,
        dead: &Live,
        deadline: Instant,
        not_run: CallError,
    ) -> Result<Arc<Live>, CallError> {
        let mut rx = self.board.subscribe();
        loop {
            let board = rx.borrow_and_update().clone();
            if let Some(next) = board
                .taking_calls()
                .filter(|live| live.generation > dead.generation)
            {
                return Ok(next.clone());
            }
            if gone(&board.status.state) {
                return Err(not_run);
            }
            tokio::select! {
                changed = rx.changed() => if changed.is_err() { return Err(not_run) },
                _ = tokio::time::sleep_until(deadline) => return Err(not_run),
            }
        }
    }

    /// No generation takes calls now: wait for one, up to `call_wait` during an outage; fail at
    /// once when `call_wait` is zero or the server is `failed`, `stopping` or `stopped` (it
    /// will not come back by itself).
    async fn wait_for_live(
        &self,
        mut rx: watch::Receiver<Published>,
        mut board: Published,
        limit: Duration,
    ) -> Result<Arc<Live>, CallError> {
        let outage_deadline = crate::clock::deadline_in(self.call_wait);
        let catch_up_deadline = crate::clock::deadline_in(limit).max(outage_deadline);
        let mut held: Option<crate::telemetry::Held> = None;
        loop {
            if let Some(live) = board.taking_calls() {
                if let Some(held) = &mut held {
                    held.ready();
                }
                return Ok(live.clone());
            }
            let deadline = if board.catching_up() {
                catch_up_deadline
            } else if gone(&board.status.state) || self.call_wait.is_zero() {
                return Err(self.unavailable(board.status.state));
            } else {
                held.get_or_insert_with(|| crate::telemetry::Held::start(&self.server));
                outage_deadline
            };
            tokio::select! {
                changed = rx.changed() => if changed.is_err() { return Err(self.no_generation(board)) },
                _ = tokio::time::sleep_until(deadline) => return Err(self.no_generation(board)),
            }
            board = rx.borrow_and_update().clone();
        }
    }

    /// What a call that found no generation in time is told: the server's state, or, when the
    /// board still shows a generation whose death was reported, that it ended unsent.
    fn no_generation(&self, board: Published) -> CallError {
        match board.live {
            Some(live) => self.lost(
                &live,
                "the generation ended before the call was sent",
                false,
            ),
            None => self.unavailable(board.status.state),
        }
    }
}

/// The server will not come back by itself.
fn gone(state: &ConnectionState) -> bool {
    matches!(
        state,
        ConnectionState::Failed { .. } | ConnectionState::Stopping | ConnectionState::Stopped
    )
}
