//! Which of a generation's requests were handed to its transport, and which of those the
//! transport could not deliver: the evidence that a request lost with its generation never ran,
//! and may be sent to the next one.
//!
//! A request can fail without a word about delivery: its generation's session loop ended
//! (rmcp answers every request still waiting with "transport closed"), or another watcher
//! reported the death first. Whether the server can have run it then depends on whether it left:
//! never handed to the transport, or handed and refused by it (a write into a closed pipe, a
//! POST whose connection was refused), it did not.
//!
//! # Invariants
//!
//! 1. Memory is bounded: at most [`TRACKED`] requests are remembered; past that the oldest is
//!    forgotten, and from then on an id not found is [`Delivery::Unknown`], never
//!    [`Delivery::NeverHanded`]: a request is judged unsent only on evidence.
//! 2. An answered request is forgotten (its fate is known to whoever waited for it).
//!
//! A handed request's method is remembered too when its result can be read as one type
//! ([`decode::Typed`]): legacy SSE's answers arrive on a stream of their own, and this is
//! how its reader knows what an answer answers.

use std::{
    collections::VecDeque,
    sync::{Mutex, MutexGuard, PoisonError},
};

use rmcp::model::RequestId;

use super::decode;

/// The most requests remembered at once (invariant 1).
const TRACKED: usize = 1024;

/// What the transport did with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// Never handed to the transport: it cannot have run.
    NeverHanded,
    /// Handed, and the transport could not deliver it: it cannot have run.
    Failed,
    /// Handed, and its send had not finished when asked: over a pipe, an incomplete line that
    /// the child cannot have read whole; over HTTP, a request that may have reached the server.
    Pending,
    /// Its send finished: the server may have it (and run it).
    Delivered,
    /// The server answered its send with a refusal (an HTTP error status): the refusal itself
    /// says whether it ran (a session the server no longer knows: it did not).
    Refused,
    /// Not remembered (invariant 1): it may have run.
    Unknown,
}

/// What one handed request's send came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::transport) enum Sent {
    /// Not finished yet.
    Pending,
    /// Finished: the server may have it.
    Delivered,
    /// The transport could not deliver it (a closed pipe, a refused connection).
    Failed,
    /// Answered with a refusal by the server (see [`Delivery::Refused`]).
    Refused,
}

/// One generation's record of its requests' delivery.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    state: Mutex<State>,
    /// Woken when a send finishes.
    sent: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct State {
    /// Requests handed and not answered, oldest first.
    entries: VecDeque<Entry>,
    /// Set once an entry was forgotten for room (invariant 1).
    forgot: bool,
}

/// One handed request.
#[derive(Debug)]
struct Entry {
    id: RequestId,
    /// What its send came to.
    sent: Sent,
    /// Its method, if its result is read typed (see the module docs).
    method: Option<decode::Typed>,
}

impl Ledger {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Plain data, never left half-written.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `id`, a `method` request, is being handed to the transport.
    pub(crate) fn handed(&self, id: &RequestId, method: &str) {
        let mut state = self.lock();
        if state.entries.len() == TRACKED {
            state.entries.pop_front();
            state.forgot = true;
        }
        state.entries.push_back(Entry {
            id: id.clone(),
            sent: Sent::Pending,
            method: decode::Typed::of(method),
        });
    }

    /// The send of `id` finished as `outcome`.
    pub(in crate::transport) fn sent(&self, id: &RequestId, outcome: Sent) {
        if let Some(entry) = self.lock().entries.iter_mut().find(|entry| entry.id == *id) {
            entry.sent = outcome;
        }
        self.sent.notify_waiters();
    }

    /// What became of `id`, once its send finished or `limit` passed.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: it only waits.
    pub(crate) async fn settled(&self, id: &RequestId, limit: std::time::Duration) -> Delivery {
        let deadline = crate::clock::deadline_in(limit);
        loop {
            let notified = self.sent.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let delivery = self.delivery(id);
            if delivery != Delivery::Pending
                || tokio::time::timeout_at(deadline, notified).await.is_err()
            {
                return delivery;
            }
        }
    }

    /// `id` was answered.
    pub(in crate::transport) fn answered(&self, id: &RequestId) {
        let mut state = self.lock();
        if let Some(at) = state.entries.iter().position(|entry| entry.id == *id) {
            state.entries.remove(at);
        }
    }

    /// The method of `id`, if it is remembered and its result is read typed.
    pub(in crate::transport) fn method(&self, id: &RequestId) -> Option<decode::Typed> {
        let state = self.lock();
        state.entries.iter().find(|entry| entry.id == *id)?.method
    }

    /// What became of `id`.
    pub(in crate::transport) fn delivery(&self, id: &RequestId) -> Delivery {
        let state = self.lock();
        match state.entries.iter().find(|entry| entry.id == *id) {
            Some(Entry { sent, .. }) => match sent {
                Sent::Pending => Delivery::Pending,
                Sent::Delivered => Delivery::Delivered,
                Sent::Failed => Delivery::Failed,
                Sent::Refused => Delivery::Refused,
            },
            None if state.forgot => Delivery::Unknown,
            None => Delivery::NeverHanded,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: i64) -> RequestId {
        RequestId::Number(n)
    }

    #[test]
    fn a_request_is_unsent_only_on_evidence() {
        let ledger = Ledger::default();
        assert_eq!(ledger.delivery(&id(1)), Delivery::NeverHanded);
        ledger.handed(&id(1), "tools/call");
        assert_eq!(ledger.delivery(&id(1)), Delivery::Pending);
        ledger.sent(&id(1), Sent::Failed);
        assert_eq!(ledger.delivery(&id(1)), Delivery::Failed);
        ledger.handed(&id(2), "ping");
        ledger.sent(&id(2), Sent::Delivered);
        assert_eq!(ledger.delivery(&id(2)), Delivery::Delivered);
        ledger.handed(&id(3), "resources/read");
        ledger.sent(&id(3), Sent::Refused);
        assert_eq!(ledger.delivery(&id(3)), Delivery::Refused);
        ledger.answered(&id(2));
        assert_eq!(ledger.delivery(&id(2)), Delivery::NeverHanded);
    }

    #[test]
    fn a_requests_method_is_known_until_it_is_answered_when_its_result_reads_typed() {
        let ledger = Ledger::default();
        ledger.handed(&id(1), "tools/call");
        ledger.handed(&id(2), "resources/read");
        assert_eq!(ledger.method(&id(1)), Some(decode::Typed::CallTool));
        assert_eq!(ledger.method(&id(2)), None, "not read typed");
        assert_eq!(ledger.method(&id(3)), None, "never handed");
        ledger.answered(&id(1));
        assert_eq!(ledger.method(&id(1)), None);
    }

    #[test]
    fn past_the_bound_a_forgotten_request_may_have_run() {
        let ledger = Ledger::default();
        for n in 0..=TRACKED as i64 {
            ledger.handed(&id(n), "tools/call");
        }
        assert_eq!(ledger.lock().entries.len(), TRACKED, "bounded");
        assert_eq!(ledger.delivery(&id(0)), Delivery::Unknown);
        assert_eq!(ledger.delivery(&id(-1)), Delivery::Unknown);
        assert_eq!(ledger.delivery(&id(TRACKED as i64)), Delivery::Pending);
    }
}
