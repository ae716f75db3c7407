//! [`Conns`]: an origin's connections that take new streams, oldest first, and which one has
//! room for the next request, found without looking at every connection each time.
//!
//! Every request that finds no room waits for the next connection to open, and each opening
//! wakes them all: at 500 connections and 100,000 requests waiting, a look at every connection
//! for each of them, each time, is the whole cost of starting. So a cursor keeps where the last
//! look stopped: the connections before it were full then, and are passed over until a stream
//! ends anywhere in the set (a [`Slot`]'s drop sets `freed`), when the next look starts again
//! from the oldest.
//!
//! # Invariants
//!
//! 1. Every connection before the cursor was full or drained when a look passed it, unless
//!    `freed` was set since.
//! 2. A look drops the drained connections it meets; a look from the oldest drops them all, and
//!    so does [`Conns::forget_drained`].

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use super::conn::{Conn, Slot};

/// The connections that may take streams, oldest first (see the module docs).
#[derive(Default)]
pub(super) struct Conns {
    list: Vec<Arc<Conn>>,
    /// Where the next look starts (invariant 1).
    cursor: usize,
    /// Set by every [`Slot`] of the set as it ends; cleared by the look that starts over.
    freed: Arc<AtomicBool>,
}

impl Conns {
    /// A stream on the oldest connection with room, if one has.
    pub(super) fn with_room(&mut self) -> Option<Slot> {
        if self.freed.swap(false, Ordering::AcqRel) {
            self.cursor = 0;
            self.list.retain(|conn| !conn.drained());
        }
        while let Some(conn) = self.list.get(self.cursor) {
            if conn.drained() {
                self.list.remove(self.cursor);
            } else if conn.has_room() {
                return Some(conn.take(&self.freed));
            } else {
                self.cursor += 1;
            }
        }
        None
    }

    /// Drops every drained connection now, met by a look or not.
    pub(super) fn forget_drained(&mut self) {
        self.list.retain(|conn| !conn.drained());
        self.cursor = 0;
    }

    /// Adds `conn`, newest, and takes a stream on it.
    pub(super) fn push(&mut self, conn: Arc<Conn>) -> Slot {
        let slot = conn.take(&self.freed);
        self.list.push(conn);
        slot
    }

    /// A stream on the least busy connection, room or not (hyper queues it there).
    pub(super) fn least_busy(&self) -> Option<Slot> {
        let open = self.list.iter().filter(|conn| !conn.drained());
        let least = open.min_by_key(|conn| conn.open_streams())?;
        Some(least.take(&self.freed))
    }

    /// How many it holds, drained ones not met by a look yet included.
    pub(super) fn len(&self) -> usize {
        self.list.len()
    }

    /// The stream limit of the newest connection: the server's word for the next one.
    pub(super) fn newest_limit(&self) -> Option<usize> {
        self.list.last().map(|conn| conn.limit())
    }

    /// Connections that take new streams now.
    #[cfg(test)]
    pub(super) fn taking(&self) -> usize {
        self.list.iter().filter(|conn| !conn.drained()).count()
    }
}
