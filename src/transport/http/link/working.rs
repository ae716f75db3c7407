//! [`Working`]: the server's requests a lean link is working on, by id, each with the stop
//! that drops its work when the server cancels it (see [`super::inbound`], invariant 5).
//!
//! # Invariants
//!
//! 1. At most `bound` entries: an id past the bound is worked on but cannot be cancelled by the
//!    server (the link's own bound on requests in progress keeps the table under it anyway).
//! 2. An entry leaves when its work ends, however it ends ([`Untrack`] is dropped), or when the
//!    server cancels it; a task removes only its own entry, never a later request's under the
//!    same id.
//! 3. Cancelling an id not in the table changes nothing.

use std::collections::HashMap;
use std::sync::{
    Arc, Mutex, MutexGuard, PoisonError,
    atomic::{AtomicU64, Ordering},
};

use rmcp::model::RequestId;
use tokio_util::sync::CancellationToken;

type Table = HashMap<RequestId, (u64, CancellationToken)>;

/// The table of the server's requests in progress (see the module docs).
pub(super) struct Working {
    table: Arc<Mutex<Table>>,
    serial: AtomicU64,
    bound: usize,
}

/// Held by a request's work; dropped, it takes the request's own entry out of the table.
pub(super) struct Untrack {
    table: Arc<Mutex<Table>>,
    id: RequestId,
    serial: u64,
}

impl Drop for Untrack {
    fn drop(&mut self) {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        if table
            .get(&self.id)
            .is_some_and(|(serial, _)| *serial == self.serial)
        {
            table.remove(&self.id);
        }
    }
}

impl Working {
    pub(super) fn new(bound: usize) -> Self {
        Working {
            table: Arc::default(),
            serial: AtomicU64::new(0),
            bound,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Enters the request `id`; its stop is a child of `stop` (the transport's), so either
    /// ends the work. The work holds the [`Untrack`] for as long as it runs.
    pub(super) fn track(
        &self,
        id: &RequestId,
        stop: &CancellationToken,
    ) -> (CancellationToken, Untrack) {
        let serial = self.serial.fetch_add(1, Ordering::Relaxed);
        let own = stop.child_token();
        let mut table = self.lock();
        if table.len() < self.bound || table.contains_key(id) {
            table.insert(id.clone(), (serial, own.clone()));
        }
        let untrack = Untrack {
            table: self.table.clone(),
            id: id.clone(),
            serial,
        };
        (own, untrack)
    }

    /// The server cancelled its request `id`: its work is stopped. False if no such request
    /// is in the table.
    pub(super) fn cancel(&self, id: &RequestId) -> bool {
        let entry = self.lock().remove(id);
        entry.map(|(_, stop)| stop.cancel()).is_some()
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: i64) -> RequestId {
        RequestId::Number(n)
    }

    #[test]
    fn a_cancel_stops_its_request_and_no_other() {
        let working = Working::new(4);
        let transport = CancellationToken::new();
        let (first, _a) = working.track(&id(1), &transport);
        let (second, _b) = working.track(&id(2), &transport);
        assert!(working.cancel(&id(1)));
        assert!(first.is_cancelled() && !second.is_cancelled());
        assert!(!working.cancel(&id(1)), "cancelled once");
        assert!(!working.cancel(&id(9)), "an unknown id changes nothing");
        assert_eq!(working.len(), 1);
        transport.cancel();
        assert!(
            second.is_cancelled(),
            "the transport's stop ends every request"
        );
    }

    #[test]
    fn an_entry_leaves_when_its_work_ends_and_only_its_own() {
        let working = Working::new(4);
        let transport = CancellationToken::new();
        let (_, earlier) = working.track(&id(1), &transport);
        // The server reuses the id: the later request takes the entry.
        let (later, later_untrack) = working.track(&id(1), &transport);
        drop(earlier);
        assert_eq!(
            working.len(),
            1,
            "the earlier work leaves the later's entry"
        );
        assert!(working.cancel(&id(1)) && later.is_cancelled());
        drop(later_untrack);
        let (_, untrack) = working.track(&id(3), &transport);
        drop(untrack);
        assert_eq!(working.len(), 0);
    }

    #[test]
    fn the_table_holds_at_most_its_bound() {
        let working = Working::new(3);
        let transport = CancellationToken::new();
        let held: Vec<_> = (0..10).map(|n| working.track(&id(n), &transport)).collect();
        assert_eq!(working.len(), 3);
        assert!(
            !working.cancel(&id(9)),
            "past the bound a request cannot be cancelled"
        );
        assert!(!held[9].0.is_cancelled());
        assert!(working.cancel(&id(0)) && held[0].0.is_cancelled());
    }
}
