//! Whether a server's authorization is busy with its authorization server, and since when it is
//! not. A remote attempt's hedge reads it (`crate::supervisor::actor::hedge`): time spent on discovery, a
//! token exchange or a person's authorization is not the MCP server's silence, and a fresh
//! attempt beside a waiting one would only wait on the same exchange (renewals are serialised)
//! after sending an unauthenticated request again.

use std::{
    sync::atomic::{AtomicU64, AtomicUsize, Ordering},
    time::Duration,
};

// tokio's clock, as `Activity`'s, which the hedge weighs this against.
use tokio::time::Instant;

/// The token work of one authorizer: how much is in flight, and when the last of it ended.
#[derive(Debug)]
pub(super) struct Busy {
    base: Instant,
    in_flight: AtomicUsize,
    /// Milliseconds from `base` to when the last piece of work ended; `u64::MAX`: none yet.
    ended_ms: AtomicU64,
}

impl Default for Busy {
    fn default() -> Self {
        Busy {
            base: Instant::now(),
            in_flight: AtomicUsize::new(0),
            ended_ms: AtomicU64::new(u64::MAX),
        }
    }
}

impl Busy {
    /// Marks work in flight until the guard is dropped (it ends with the work's future, however
    /// that ends: answered, timed out or dropped).
    pub(super) fn enter(&self) -> Working<'_> {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        Working(self)
    }

    /// `None` while work is in flight; otherwise how long since the last work ended
    /// (`Duration::MAX` when there has been none).
    pub(super) fn since(&self) -> Option<Duration> {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return None;
        }
        match self.ended_ms.load(Ordering::Acquire) {
            u64::MAX => Some(Duration::MAX),
            ended => Some(
                self.base
                    .elapsed()
                    .saturating_sub(Duration::from_millis(ended)),
            ),
        }
    }
}

/// Work in flight on a [`Busy`]; its end is stamped when dropped.
pub(super) struct Working<'a>(&'a Busy);

impl Drop for Working<'_> {
    fn drop(&mut self) {
        let busy = self.0;
        // Stamped before the count falls, so a reader that sees no work sees its end.
        let now = busy.base.elapsed().as_millis() as u64;
        busy.ended_ms.store(now, Ordering::Release);
        busy.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_while_any_work_is_in_flight_then_counts_from_the_last_end() {
        let busy = Busy::default();
        assert_eq!(busy.since(), Some(Duration::MAX), "no work yet");
        let first = busy.enter();
        let second = busy.enter();
        assert_eq!(busy.since(), None);
        drop(first);
        assert_eq!(busy.since(), None, "one still in flight");
        drop(second);
        let since = busy.since().expect("nothing in flight");
        assert!(since < Duration::from_secs(5), "{since:?}");
    }
}
