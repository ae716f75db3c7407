//! [`Generation`]: the number of one connection attempt to a server.

use std::{fmt, num::NonZeroU64};

/// The number of one connection attempt to a server: 1, 2, 3 … never reused.
///
/// Generations of one server are ordered: a larger one started later. They are not meaningful
/// across servers.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Generation(NonZeroU64);

impl Generation {
    /// The first generation of a server.
    pub(crate) const FIRST: Generation = Generation(NonZeroU64::MIN);

    /// The number, from 1.
    pub fn get(self) -> u64 {
        self.0.get()
    }

    /// The generation after this one.
    pub(crate) fn next(self) -> Generation {
        Generation(self.0.saturating_add(1))
    }

    /// Generation `n` (tests).
    #[cfg(test)]
    pub(crate) fn of(n: u64) -> Generation {
        Generation::new(n).expect("generation 0 does not exist")
    }

    /// Generation `n`; `None` for 0 (generations count from 1). A program needs it only to
    /// make a state or an error of its own, in its tests, say: the supervisor numbers them.
    pub fn new(n: u64) -> Option<Generation> {
        NonZeroU64::new(n).map(Generation)
    }
}

/// The number, as `Display` writes it: `{:?}` of a status reads `generation: 3`.
impl fmt::Debug for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Display for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

// Like `http::StatusCode` and `u16`: a generation compares with its number, either way round.
impl PartialEq<u64> for Generation {
    fn eq(&self, other: &u64) -> bool {
        self.get() == *other
    }
}

impl PartialEq<Generation> for u64 {
    fn eq(&self, other: &Generation) -> bool {
        *self == other.get()
    }
}

impl PartialOrd<u64> for Generation {
    fn partial_cmp(&self, other: &u64) -> Option<std::cmp::Ordering> {
        self.get().partial_cmp(other)
    }
}

impl PartialOrd<Generation> for u64 {
    fn partial_cmp(&self, other: &Generation) -> Option<std::cmp::Ordering> {
        self.partial_cmp(&other.get())
    }
}

impl From<Generation> for u64 {
    fn from(generation: Generation) -> u64 {
        generation.get()
    }
}
