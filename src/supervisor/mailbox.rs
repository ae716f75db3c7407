//! What handles, watchers and rmcp handlers tell the supervisor task. A leaf: it names only the
//! retry permit and the state types, so every sender can use it without importing the actor.
//!
//! The mailbox is unbounded, so that a death report can always be queued; what bounds it is
//! that each sender queues little. Deaths are one per generation (the retry permit), restarts
//! and shutdowns come from the host. The one feed a server controls, "the tool list changed",
//! goes through a [`ListChange`]: however many `list_changed` notifications a server sends,
//! each of a generation's senders has at most one message waiting.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::{mpsc, oneshot};

use crate::state::{Death, Generation};
use crate::supervisor::reconnect::retry_guard::RetryPermit;

/// Messages from handles, watchers and rmcp handlers to the supervisor task.
///
/// Every payload larger than a pointer is boxed, so a message is 16 bytes: the mailbox's first
/// block (32 slots, allocated with the channel and kept for the server's life) is 0.5 KiB,
/// not 1.6 KiB, on every idle server. The boxed messages are rare (a death, a list change).
#[derive(Debug)]
pub(in crate::supervisor) enum Msg {
    /// A generation died; the sender won the retry permit.
    Died(Box<Died>),
    /// `notifications/tools/list_changed` (or a host request) for a generation. The actor
    /// calls [`Queued::take`] before it acts on it.
    ListChanged(Box<ListChanged>),
    /// Close what runs, refill the budget, connect again.
    Restart { done: oneshot::Sender<()> },
    /// Stop everything (the status says `stopped` when done).
    Shutdown,
}

/// [`Msg::Died`]'s payload.
#[derive(Debug)]
pub(in crate::supervisor) struct Died {
    pub(in crate::supervisor) death: Death,
    pub(in crate::supervisor) permit: RetryPermit,
}

/// [`Msg::ListChanged`]'s payload.
#[derive(Debug)]
pub(in crate::supervisor) struct ListChanged {
    pub(in crate::supervisor) generation: Generation,
    pub(in crate::supervisor) queued: Queued,
}

impl Msg {
    pub(in crate::supervisor) fn died(death: Death, permit: RetryPermit) -> Msg {
        Msg::Died(Box::new(Died { death, permit }))
    }

    pub(in crate::supervisor) fn list_changed(generation: Generation, queued: Queued) -> Msg {
        Msg::ListChanged(Box::new(ListChanged { generation, queued }))
    }
}

/// Set while a sender's `ListChanged` waits in the mailbox.
#[derive(Debug, Clone, Default)]
pub(in crate::supervisor) struct Queued(Arc<AtomicBool>);

impl Queued {
    /// Marks the message taken: a change the server announces from now on is queued again,
    /// so none is lost between the actor's read and its listing.
    pub(in crate::supervisor) fn take(&self) {
        self.0.store(false, Ordering::Release);
    }
}

/// One sender's "the tool list of `generation` changed": a message is queued only when none of
/// this sender's is waiting (the actor coalesces the rest: one listing answers them all).
#[derive(Debug, Clone)]
pub(in crate::supervisor) struct ListChange {
    generation: Generation,
    queued: Queued,
    tx: mpsc::UnboundedSender<Msg>,
}

impl ListChange {
    pub(in crate::supervisor) fn new(
        generation: Generation,
        tx: mpsc::UnboundedSender<Msg>,
    ) -> Self {
        ListChange {
            generation,
            queued: Queued::default(),
            tx,
        }
    }

    /// Tells the actor, unless a message of this sender is still waiting. Returns whether one
    /// was queued.
    pub(in crate::supervisor) fn raise(&self) -> bool {
        if self.queued.0.swap(true, Ordering::AcqRel) {
            return false;
        }
        let msg = Msg::list_changed(self.generation, self.queued.clone());
        // The supervisor may be gone (shutdown); then there is nothing to re-sync.
        self.tx.send(msg).is_ok()
    }
}

/// The most messages seen waiting in one server's mailbox at once, the one being taken
/// included: the actor notes the rest each time it takes one ([`Depth::took`]). It is what the
/// bound above bounds, measured where a test can read it (`Supervisor::mailbox_peak`).
#[derive(Debug, Default)]
pub(in crate::supervisor) struct Depth(AtomicUsize);

impl Depth {
    /// The actor took a message and `left` still wait.
    pub(in crate::supervisor) fn took(&self, left: usize) {
        self.0.fetch_max(left.saturating_add(1), Ordering::Relaxed);
    }

    /// The most seen so far.
    #[cfg_attr(not(any(test, feature = "test-hooks")), allow(dead_code))]
    pub(in crate::supervisor) fn peak(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(msg: Msg) -> Generation {
        match msg {
            Msg::ListChanged(change) => {
                change.queued.take();
                change.generation
            }
            other => panic!("expected ListChanged, got {other:?}"),
        }
    }

    #[test]
    fn a_message_is_two_words_so_the_idle_mailbox_block_stays_small() {
        assert!(
            std::mem::size_of::<Msg>() <= 16,
            "{}",
            std::mem::size_of::<Msg>()
        );
    }

    #[test]
    fn a_flood_of_changes_queues_one_message_until_it_is_taken() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let change = ListChange::new(Generation::of(3), tx);
        let raised = (0..100_000).filter(|_| change.raise()).count();
        assert_eq!(raised, 1);
        assert_eq!(rx.len(), 1, "one message waits, whatever the flood");
        assert_eq!(
            take(rx.try_recv().expect("the one message")),
            Generation::of(3)
        );
        // Taken: the next change is queued again, and again only once.
        let raised = (0..1_000).filter(|_| change.raise()).count();
        assert_eq!(raised, 1);
        assert_eq!(rx.len(), 1);
    }

    #[test]
    fn each_sender_and_generation_has_its_own_slot() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let old = ListChange::new(Generation::of(1), tx.clone());
        let new = ListChange::new(Generation::of(2), tx.clone());
        let stream = ListChange::new(Generation::of(2), tx);
        for _ in 0..10 {
            old.raise();
            new.raise();
            stream.raise();
        }
        assert_eq!(
            rx.len(),
            3,
            "a waiting old generation's message hides no newer one"
        );
        let seen: Vec<_> = (0..3).map(|_| take(rx.try_recv().unwrap())).collect();
        assert_eq!(seen, [1, 2, 2].map(Generation::of));
    }

    #[test]
    fn the_depth_is_the_most_seen_waiting_with_the_one_taken() {
        let depth = Depth::default();
        assert_eq!(depth.peak(), 0, "nothing taken yet");
        depth.took(4);
        depth.took(0);
        assert_eq!(depth.peak(), 5);
    }

    #[test]
    fn a_gone_supervisor_is_no_error() {
        let (tx, rx) = mpsc::unbounded_channel();
        drop(rx);
        assert!(!ListChange::new(Generation::of(1), tx).raise());
    }
}
