//! [`Pending`]: the requests of one lean link waiting for their answers, by id.
//!
//! # Invariants
//!
//! 1. An id is in the table from just before its request leaves until its answer came or its
//!    caller gave up ([`Entry`] takes it out when dropped). An id still in the table is never
//!    entered again; once its answer came, it may be.
//! 2. The first answer for an id is handed to its entry; a second one, or one for an id not in
//!    the table, is refused (the link drops it, and counts it as stray).
//! 3. At most `limit` requests wait at once: one more waits for room, as a request waited for
//!    room in rmcp's bounded channel. What the host asks at once costs no memory past the
//!    bound.

use std::{
    collections::{HashMap, hash_map},
    sync::{
        Mutex, MutexGuard, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
};

use rmcp::model::{ProgressToken, RequestId, ServerJsonRpcMessage};
use tokio::sync::{Semaphore, SemaphorePermit, oneshot};

/// An answer: a response or an error, boxed (a message is large; an idle entry is not).
pub(super) type Answer = Box<ServerJsonRpcMessage>;

/// The requests waiting for their answers (see the module invariants).
#[derive(Debug)]
pub(super) struct Pending {
    /// Each waiting id, with the entry that waits (its number) and where its answer goes.
    table: Mutex<HashMap<RequestId, (u64, oneshot::Sender<Answer>)>>,
    /// Numbers the entries, so that an entry dropped late never takes out a newer one.
    entries: AtomicU64,
    room: Semaphore,
}

/// One request waiting for its answer; its id leaves the table when it is dropped.
#[derive(Debug)]
pub(super) struct Entry<'a> {
    pending: &'a Pending,
    id: RequestId,
    number: u64,
    answer: oneshot::Receiver<Answer>,
    _room: SemaphorePermit<'a>,
}

impl Pending {
    /// A table of at most `limit` waiting requests (invariant 3).
    pub(super) fn new(limit: usize) -> Self {
        Pending {
            table: Mutex::default(),
            entries: AtomicU64::new(0),
            room: Semaphore::new(limit),
        }
    }

    /// Enters `id`, once there is room; `None` if `id` is waiting already (invariant 1).
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: dropped while it waits for room, it has entered nothing.
    pub(super) async fn enter(&self, id: RequestId) -> Option<Entry<'_>> {
        let room = self.room.acquire().await.ok()?;
        let (tx, answer) = oneshot::channel();
        let number = self.entries.fetch_add(1, Ordering::Relaxed);
        match self.lock().entry(id.clone()) {
            hash_map::Entry::Occupied(_) => return None,
            hash_map::Entry::Vacant(vacant) => vacant.insert((number, tx)),
        };
        Some(Entry {
            pending: self,
            id,
            number,
            answer,
            _room: room,
        })
    }

    /// Hands `answer` to the request `id` waits for; false (and `answer` dropped) if no request
    /// waits for it: an unknown id, or one already answered (invariant 2).
    pub(super) fn answer(&self, id: &RequestId, answer: Answer) -> bool {
        let mut table = self.lock();
        // rmcp's rule: the same id, or its number written as a string.
        let waiting = table.remove(id).or_else(|| match id {
            RequestId::String(text) => text
                .parse()
                .ok()
                .and_then(|n| table.remove(&RequestId::Number(n))),
            RequestId::Number(_) => None,
        });
        drop(table);
        let Some((_, tx)) = waiting else {
            return false;
        };
        // Its caller may have gone meanwhile: the answer was still ours.
        let _ = tx.send(answer);
        true
    }

    /// True when `token` names a request still waiting: the link numbers a request's progress
    /// token as its id, and progress for anything else is no request's.
    pub(super) fn claims(&self, token: &ProgressToken) -> bool {
        self.lock().contains_key(&token.0)
    }

    /// How many requests wait.
    pub(super) fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<RequestId, (u64, oneshot::Sender<Answer>)>> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Entry<'_> {
    /// The answer, if it has come.
    pub(super) fn take(&mut self) -> Option<Answer> {
        self.answer.try_recv().ok()
    }

    /// Waits for the answer; `None` if it can no longer come (the entry was taken out).
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: an answer that came stays for the next call.
    pub(super) async fn answered(&mut self) -> Option<Answer> {
        (&mut self.answer).await.ok()
    }
}

impl Drop for Entry<'_> {
    fn drop(&mut self) {
        let mut table = self.pending.lock();
        if table.get(&self.id).is_some_and(|(n, _)| *n == self.number) {
            table.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rmcp::model::{JsonRpcMessage, NumberOrString, ServerResult};

    use super::*;

    fn id(n: i64) -> RequestId {
        NumberOrString::Number(n)
    }

    fn answer_to(n: i64) -> Answer {
        Box::new(JsonRpcMessage::response(ServerResult::empty(()), id(n)))
    }

    #[tokio::test]
    async fn an_answer_reaches_the_request_with_its_id_and_no_other() {
        let pending = Pending::new(8);
        let mut one = pending.enter(id(1)).await.unwrap();
        let mut two = pending.enter(id(2)).await.unwrap();
        assert!(pending.answer(&id(2), answer_to(2)));
        assert!(one.take().is_none());
        let JsonRpcMessage::Response(answer) = *two.take().unwrap() else {
            panic!("not a response")
        };
        assert_eq!(answer.id, id(2));
    }

    #[tokio::test]
    async fn an_answer_for_an_unknown_id_is_dropped() {
        let pending = Pending::new(8);
        let mut waiting = pending.enter(id(1)).await.unwrap();
        assert!(!pending.answer(&id(7), answer_to(7)), "nobody asked for 7");
        assert!(waiting.take().is_none());
        assert_eq!(pending.len(), 1);
    }

    #[tokio::test]
    async fn an_answer_naming_its_number_as_a_string_is_its_answer() {
        let pending = Pending::new(8);
        let mut waiting = pending.enter(id(12)).await.unwrap();
        assert!(pending.answer(&NumberOrString::String("12".into()), answer_to(12)));
        assert!(waiting.take().is_some());
    }

    #[tokio::test]
    async fn a_second_answer_for_one_id_is_dropped() {
        let pending = Pending::new(8);
        let mut waiting = pending.enter(id(1)).await.unwrap();
        assert!(pending.answer(&id(1), answer_to(1)));
        assert!(!pending.answer(&id(1), answer_to(1)), "already answered");
        assert!(waiting.take().is_some());
        assert!(waiting.take().is_none(), "one answer, once");
    }

    #[tokio::test]
    async fn an_id_is_entered_again_only_after_its_answer() {
        let pending = Pending::new(8);
        let first = pending.enter(id(1)).await.unwrap();
        assert!(pending.enter(id(1)).await.is_none(), "1 still waits");
        assert!(pending.answer(&id(1), answer_to(1)));
        let second = pending.enter(id(1)).await.expect("1 was answered");
        // The first entry, dropped late, leaves the second one in the table.
        drop(first);
        assert_eq!(pending.len(), 1);
        assert!(
            pending.answer(&id(1), answer_to(1)),
            "the second still waits"
        );
        drop(second);
        assert_eq!(pending.len(), 0);
    }

    #[tokio::test]
    async fn a_request_given_up_leaves_the_table() {
        let pending = Pending::new(8);
        let waiting = pending.enter(id(3)).await.unwrap();
        drop(waiting);
        assert_eq!(pending.len(), 0);
        assert!(
            !pending.answer(&id(3), answer_to(3)),
            "a late answer is dropped"
        );
    }

    #[tokio::test]
    async fn progress_is_claimed_only_by_a_request_still_waiting() {
        let pending = Pending::new(8);
        let waiting = pending.enter(id(4)).await.unwrap();
        assert!(pending.claims(&ProgressToken(id(4))));
        assert!(!pending.claims(&ProgressToken(id(5))), "an unknown token");
        let text = ProgressToken(NumberOrString::String("4".into()));
        assert!(!pending.claims(&text), "ids are matched exactly");
        drop(waiting);
        assert!(
            !pending.claims(&ProgressToken(id(4))),
            "answered or given up"
        );
    }

    #[tokio::test]
    async fn past_its_bound_the_table_makes_a_request_wait_for_room() {
        let pending = Pending::new(2);
        let one = pending.enter(id(1)).await.unwrap();
        let _two = pending.enter(id(2)).await.unwrap();
        let third = pending.enter(id(3));
        tokio::pin!(third);
        assert!(
            futures::poll!(&mut third).is_pending(),
            "no room for a third"
        );
        assert_eq!(pending.len(), 2);
        drop(one);
        let third = tokio::time::timeout(Duration::from_secs(10), third).await;
        assert!(third.unwrap().is_some(), "room once one left");
    }
}
