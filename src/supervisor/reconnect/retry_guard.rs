//! The single-retrier guard.
//!
//! Death can be noticed by several parties at once: the transport closing, the heartbeat, a
//! call that got a transport error, an HTTP 404. All of them only *report*. The guard lets the
//! first report for the current generation through and coalesces the rest, so exactly one
//! recovery runs per server.
//!
//! # Invariants
//!
//! 1. At most one [`RetryPermit`] exists per guard at any time (compare-and-swap on `busy`).
//! 2. A report for a generation other than `current` gets no permit: it is stale.
//! 3. After [`RetryGuard::close`] no permit is ever granted again.
//!
//! The supervisor moves `current` forward *before* it drops the permit of the recovery that
//! produced the new generation, so a late report about the old generation can never start a
//! second recovery.

use std::sync::{
    Arc,
    atomic::{AtomicBool, AtomicU64, Ordering},
};

use crate::state::Generation;

/// Grants at most one recovery at a time for one server.
#[derive(Debug, Default)]
pub(in crate::supervisor) struct RetryGuard {
    /// The generation whose death may be reported (0: none); moved only by the supervisor task.
    current: AtomicU64,
    /// True while a permit is out.
    busy: AtomicBool,
    /// Set once at shutdown; never cleared.
    closed: AtomicBool,
}

/// Proof of being the one retrier. Dropping it lets the next recovery begin.
#[derive(Debug)]
pub(in crate::supervisor) struct RetryPermit {
    guard: Arc<RetryGuard>,
    generation: Generation,
}

impl RetryPermit {
    /// The generation whose death this permit recovers from.
    pub(in crate::supervisor) fn generation(&self) -> Generation {
        self.generation
    }
}

impl Drop for RetryPermit {
    fn drop(&mut self) {
        self.guard.busy.store(false, Ordering::Release);
    }
}

impl RetryGuard {
    /// Takes the permit if `generation` is current and no recovery is running.
    pub(in crate::supervisor) fn try_begin(
        self: &Arc<Self>,
        generation: Generation,
    ) -> Option<RetryPermit> {
        if self.closed.load(Ordering::Acquire)
            || self.current.load(Ordering::Acquire) != generation.get()
        {
            return None;
        }
        self.busy
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .ok()?;
        // Re-check after winning: the generation may have moved while we raced.
        if self.closed.load(Ordering::Acquire)
            || self.current.load(Ordering::Acquire) != generation.get()
        {
            self.busy.store(false, Ordering::Release);
            return None;
        }
        Some(RetryPermit {
            guard: self.clone(),
            generation,
        })
    }

    /// Makes `generation` the one whose death may be reported; `None`: no generation's (one
    /// the supervisor closes itself).
    pub(in crate::supervisor) fn set_current(&self, generation: Option<Generation>) {
        self.current
            .store(generation.map_or(0, Generation::get), Ordering::Release);
    }

    /// Refuses every future report.
    pub(in crate::supervisor) fn close(&self) {
        self.closed.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(n: u64) -> Generation {
        Generation::new(n).expect("not 0")
    }

    #[test]
    fn only_one_permit_at_a_time() {
        let guard = Arc::new(RetryGuard::default());
        guard.set_current(Generation::new(3));
        let first = guard.try_begin(g(3)).expect("first report wins");
        assert!(guard.try_begin(g(3)).is_none(), "second report coalesces");
        drop(first);
        assert!(
            guard.try_begin(g(3)).is_some(),
            "permit is free again after drop"
        );
    }

    #[test]
    fn stale_generations_get_nothing() {
        let guard = Arc::new(RetryGuard::default());
        guard.set_current(Generation::new(4));
        assert!(guard.try_begin(g(3)).is_none());
        assert!(guard.try_begin(g(5)).is_none());
    }

    #[test]
    fn closed_guard_grants_nothing() {
        let guard = Arc::new(RetryGuard::default());
        guard.set_current(Generation::new(1));
        guard.close();
        assert!(guard.try_begin(g(1)).is_none());
    }

    #[test]
    fn concurrent_reports_yield_one_permit() {
        let guard = Arc::new(RetryGuard::default());
        guard.set_current(Generation::new(7));
        let barrier = Arc::new(std::sync::Barrier::new(16));
        let threads: Vec<_> = (0..16)
            .map(|_| {
                let (guard, barrier) = (guard.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    // Keep the permit alive until every thread has tried.
                    guard
                        .try_begin(g(7))
                        .map(std::mem::ManuallyDrop::new)
                        .is_some()
                })
            })
            .collect();
        let winners: Vec<bool> = threads
            .into_iter()
            .map(|t| t.join().expect("thread"))
            .collect();
        assert_eq!(winners.iter().filter(|w| **w).count(), 1);
    }
}
