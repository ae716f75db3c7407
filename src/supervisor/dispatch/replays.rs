//! The count of tool calls a call path sent again: lost with their generation, or with their
//! cut answer stream, to a tool annotated read-only or idempotent.

use std::sync::atomic::{AtomicU64, Ordering};

/// Tool calls sent again since the start; read by [`Supervisor::replayed_calls`](crate::Supervisor::replayed_calls).
#[derive(Debug, Default)]
pub(in crate::supervisor) struct Replays(AtomicU64);

impl Replays {
    /// One more call sent again, unless this call was `counted` already (sent again the other
    /// way before).
    pub(in crate::supervisor) fn count_unless(&self, counted: bool) {
        if !counted {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// How many so far.
    pub(in crate::supervisor) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}
