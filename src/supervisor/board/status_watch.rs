//! [`StatusWatch`]: a reader that follows one server's [`Status`].

use tokio::sync::watch;

use super::Published;
use crate::state::{ConnectionState, Status};

/// Follows one server's [`Status`] (from [`Supervisor::watch`](crate::Supervisor::watch)).
///
/// Like a Tokio `watch` receiver: it remembers the last status it returned, `changed` waits
/// for a newer one, and a reader that falls behind skips to the latest. After `stopped`
/// nothing changes any more, and `changed` returns `None`.
#[derive(Debug, Clone)]
pub struct StatusWatch {
    rx: watch::Receiver<Published>,
}

impl StatusWatch {
    pub(in crate::supervisor) fn new(rx: watch::Receiver<Published>) -> Self {
        StatusWatch { rx }
    }

    /// True when both watch the same supervisor.
    #[cfg_attr(not(feature = "rig"), allow(dead_code))]
    pub(crate) fn same_channel(&self, other: &StatusWatch) -> bool {
        self.rx.same_channel(&other.rx)
    }

    /// The status now. It does not count as seen by [`changed`](Self::changed).
    pub fn status(&self) -> Status {
        self.rx.borrow().status.clone()
    }

    /// Waits for a status newer than the last one this watch returned (or, for a new watch,
    /// than the one when it was made), and returns it. `None` once the status is `stopped`
    /// and was returned (or seen by [`status`](Self::status)'s caller in a `wait_for`).
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: dropped before it returns, the next call returns the same change.
    pub async fn changed(&mut self) -> Option<Status> {
        if matches!(self.rx.borrow().status.state, ConnectionState::Stopped)
            && !self.rx.has_changed().unwrap_or(false)
        {
            return None;
        }
        self.rx.changed().await.ok()?;
        Some(self.rx.borrow_and_update().status.clone())
    }

    /// Waits until `accept` holds for the status (the one now included) and returns that
    /// status; `None` when the status became `stopped` without `accept` holding.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: it only watches.
    pub async fn wait_for(&mut self, mut accept: impl FnMut(&Status) -> bool) -> Option<Status> {
        let board = self
            .rx
            .wait_for(|board| {
                accept(&board.status) || matches!(board.status.state, ConnectionState::Stopped)
            })
            .await
            .ok()?;
        let status = board.status.clone();
        drop(board);
        if accept(&status) { Some(status) } else { None }
    }
}
