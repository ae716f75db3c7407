//! The store's local copy: every host session this process holds, and what is still to be said
//! to Redis about each, one pending operation per session at most.
//!
//! # Invariants
//!
//! 1. `pending` holds at most one operation per key, and a key is pending only while it is held
//!    and shared, or for a [`Op::Forget`] of a session the host ended (which nothing replaces);
//!    forgets are bounded by [`MAX_FORGETS`] (past it the record is left to expire by its TTL).
//! 2. Only the writer task takes from `pending`; everyone else only adds (and wakes it).
//! 3. A key is in `flying` from the writer's taking it until Redis answered its operation (or
//!    it was put back): a key neither pending nor flying has been written, or was never asked
//!    to be.

use std::collections::{HashMap, HashSet};

use tokio::time::Instant;

use crate::state::HostState;

/// Forgets kept while Redis cannot be reached; past it, a forgotten record expires on its own.
pub(super) const MAX_FORGETS: usize = 10_000;

/// What is still to be said to Redis about a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Op {
    /// Write the whole state.
    Write,
    /// Refresh the record's TTL (the session was active).
    Touch,
    /// Delete the record: the host ended the session.
    Forget,
}

/// One session this process holds.
#[derive(Debug)]
pub(super) struct Held {
    pub(super) state: HostState,
    /// This process's fencing value for the session.
    pub(super) owner: String,
    /// Whether the session leaves the process (the front shared it, or it was claimed).
    pub(super) shared: bool,
    /// Another replica claimed the session: nothing is written for it any more.
    pub(super) lost: bool,
    /// When its record's TTL was last refreshed (or asked to be).
    pub(super) touched: Instant,
}

/// The held sessions and the pending operations.
#[derive(Debug, Default)]
pub(super) struct Table {
    pub(super) held: HashMap<String, Held>,
    pub(super) pending: HashMap<String, Op>,
    /// The keys of the writer's batch whose operation Redis has not answered yet.
    pub(super) flying: HashSet<String>,
    forgets: usize,
}

impl Table {
    /// Asks for `op` on `key`; a write is not downgraded to a touch, a forget replaces anything.
    pub(super) fn ask(&mut self, key: &str, op: Op) {
        let forget = matches!(op, Op::Forget);
        if forget && self.forgets >= MAX_FORGETS {
            self.pending.remove(key);
            return;
        }
        match self.pending.get(key) {
            Some(Op::Write) if op == Op::Touch => return,
            Some(Op::Forget) if !forget => return,
            Some(Op::Forget) => self.forgets -= 1,
            _ => {}
        }
        if forget {
            self.forgets += 1;
        }
        self.pending.insert(key.to_owned(), op);
    }

    /// Every pending operation, taken (the writer's batch); each key is flying until
    /// [`landed`](Self::landed).
    pub(super) fn take(&mut self) -> Vec<(String, Op)> {
        self.forgets = 0;
        let batch: Vec<(String, Op)> = self.pending.drain().collect();
        self.flying = batch.iter().map(|(key, _)| key.clone()).collect();
        batch
    }

    /// Redis answered the operation on `key` of the writer's batch.
    pub(super) fn landed(&mut self, key: &str) {
        self.flying.remove(key);
    }

    /// Whether something is still to be said about `key`, or being said.
    pub(super) fn unsaid(&self, key: &str) -> bool {
        self.pending.contains_key(key) || self.flying.contains(key)
    }

    /// Operations still to be said or being said (the status's `pending`).
    pub(super) fn unsaid_count(&self) -> usize {
        self.pending.len() + self.flying.len()
    }

    /// Gives back an operation the writer could not do, unless a newer one was asked since.
    pub(super) fn put_back(&mut self, key: String, op: Op) {
        if self.pending.contains_key(&key) {
            return;
        }
        let still_wanted = match &op {
            Op::Forget => true,
            _ => self.held.get(&key).is_some_and(|h| h.shared && !h.lost),
        };
        if still_wanted {
            self.ask(&key, op);
        }
    }

    /// Every shared session is written again (Redis came back, and may have lost them).
    pub(super) fn write_all(&mut self) {
        let keys: Vec<String> = self
            .held
            .iter()
            .filter(|(_, h)| h.shared && !h.lost)
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            self.ask(&key, Op::Write);
        }
    }

    /// Drops `key` from the table; its pending write or touch goes with it.
    pub(super) fn drop_key(&mut self, key: &str) -> Option<Held> {
        if matches!(self.pending.get(key), Some(Op::Write | Op::Touch)) {
            self.pending.remove(key);
        }
        self.held.remove(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(shared: bool) -> Held {
        Held {
            state: HostState::default(),
            owner: "r/1".into(),
            shared,
            lost: false,
            touched: Instant::now(),
        }
    }

    #[test]
    fn a_write_is_not_downgraded_and_a_forget_replaces_it() {
        let mut table = Table::default();
        table.ask("a", Op::Write);
        table.ask("a", Op::Touch);
        assert_eq!(table.pending.get("a"), Some(&Op::Write));
        table.ask("a", Op::Forget);
        table.ask("a", Op::Write);
        assert!(matches!(table.pending.get("a"), Some(Op::Forget)));
    }

    #[test]
    fn forgets_past_the_bound_are_left_to_the_ttl() {
        let mut table = Table::default();
        for n in 0..MAX_FORGETS + 50 {
            table.ask(&format!("k{n}"), Op::Forget);
        }
        assert_eq!(table.pending.len(), MAX_FORGETS);
        assert_eq!(table.take().len(), MAX_FORGETS);
        assert!(table.pending.is_empty());
    }

    #[test]
    fn a_failed_write_comes_back_only_while_its_session_is_held_and_shared() {
        let mut table = Table::default();
        table.held.insert("a".into(), held(true));
        table.held.insert("b".into(), held(false));
        table.put_back("a".into(), Op::Write);
        table.put_back("b".into(), Op::Write);
        table.put_back("gone".into(), Op::Touch);
        assert_eq!(table.pending.len(), 1);
        assert_eq!(table.pending.get("a"), Some(&Op::Write));
        table.write_all();
        assert_eq!(table.pending.len(), 1, "b is not shared");
    }

    #[test]
    fn a_key_is_unsaid_from_its_asking_until_its_batch_lands() {
        let mut table = Table::default();
        assert!(!table.unsaid("a"));
        table.ask("a", Op::Write);
        assert!(table.unsaid("a"));
        let batch = table.take();
        assert_eq!(batch.len(), 1);
        assert!(table.unsaid("a"), "flying");
        assert!(!table.unsaid("b"));
        table.landed("a");
        assert!(!table.unsaid("a"));
    }
}
