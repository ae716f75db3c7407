//! The descriptor budget of the process's HTTP/2 connections: how many an origin's set may
//! open, all origins together, before a request waits on a busy connection instead of opening
//! another.
//!
//! Each connection is one file descriptor for as long as it lives (its streams may outlive its
//! place in the set). An origin whose server allows few streams per connection would otherwise
//! open one connection per few sessions until `accept`, `open` or `connect` anywhere in the
//! process fails with `EMFILE`. So the connections of all origins share a budget: half of the
//! process's `RLIMIT_NOFILE` soft limit once [`RESERVE`] descriptors are set aside for
//! everything else, read again each time a connection would open (a process that raises its
//! limit gets more). One origin alone is bounded by [`PER_ORIGIN`] as well.
//!
//! At a soft limit of 1,024 (a common default) that is 384 connections; at 20,000 (what the
//! scale bench runs with) 9,872, of which one origin may take [`PER_ORIGIN`].
//!
//! # Invariants
//!
//! 1. A [`Descriptor`] counts one connection being opened or open; it is taken only while the
//!    count is under the budget (but see [`Descriptor::first`]) and given back when dropped.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Descriptors left for everything else in the process: stdio, listeners, the HTTP/1.1
/// client's pool, children's pipes, files, other connections.
pub(super) const RESERVE: usize = 256;
/// The most connections one origin gets. 100,000 sessions, each holding one stream for life,
/// at the RFC 9113 floor of 100 concurrent streams (§ 6.5.2) take 1,000 connections (500 at
/// hyper's default of 200); a server that allows fewer per connection is asking its clients
/// for fewer, and does not get a connection per handful of sessions.
pub(super) const PER_ORIGIN: usize = 1024;
/// The soft limit assumed when it cannot be read.
const UNREADABLE: u64 = 1024;

/// HTTP/2 connections open or being opened in the process, all origins (invariant 1).
static OPEN: AtomicUsize = AtomicUsize::new(0);

/// The connections the process may hold at the soft limit `soft` (see the module docs).
pub(super) fn share(soft: u64) -> usize {
    let soft = usize::try_from(soft).unwrap_or(usize::MAX);
    soft.saturating_sub(RESERVE) / 2
}

/// The process's budget now, from its `RLIMIT_NOFILE` soft limit.
pub(super) fn process_budget() -> usize {
    use nix::sys::resource::{Resource, getrlimit};
    let soft = getrlimit(Resource::RLIMIT_NOFILE).map_or(UNREADABLE, |(soft, _)| soft);
    share(soft)
}

/// One connection's place in the budget (invariant 1); given back when dropped.
#[derive(Debug)]
pub(super) struct Descriptor(());

impl Descriptor {
    /// A place, when fewer than `budget` connections are open or opening in the process.
    pub(super) fn take(budget: usize) -> Option<Descriptor> {
        OPEN.fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
            (open < budget).then_some(open + 1)
        })
        .ok()
        .map(|_| Descriptor(()))
    }

    /// A place whatever the budget: an origin's first connection, without which its set serves
    /// no one (the system's own limit then says whether it opens).
    pub(super) fn first() -> Descriptor {
        OPEN.fetch_add(1, Ordering::AcqRel);
        Descriptor(())
    }
}

impl Drop for Descriptor {
    fn drop(&mut self) {
        OPEN.fetch_sub(1, Ordering::AcqRel);
    }
}

/// HTTP/2 connections open or being opened in the process now.
pub(super) fn open() -> usize {
    OPEN.load(Ordering::Acquire)
}
