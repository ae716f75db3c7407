//! Hostile mode: a server that answers, but badly — too much, too fast, malformed, or not quite
//! to the protocol. Each kind lives in its own file and is switched on through [`Faults`] (remote
//! modes) and a flag of the binary (stdio too, where the kind applies).
//!
//! [`Faults`]: crate::Faults

pub(crate) mod discover;
