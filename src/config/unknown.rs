//! [`UnknownValue`]: the error of every setting read from a word.

/// A word the settings' `FromStr` ([`ProtocolChoice`](super::ProtocolChoice), [`RemoteKind`](super::RemoteKind),
/// [`Sessions`](super::Sessions), [`Replay`](super::Replay)) does not know. `Display`: ``unknown protocol `x`; expected auto,
/// 2025-11-25 or 2026-07-28``.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{value}`; expected {expected}")]
pub struct UnknownValue {
    what: &'static str,
    value: String,
    expected: &'static str,
}

impl UnknownValue {
    pub(crate) fn new(what: &'static str, value: &str, expected: &'static str) -> Self {
        UnknownValue {
            what,
            value: value.to_owned(),
            expected,
        }
    }

    /// The word that was not understood.
    pub fn value(&self) -> &str {
        &self.value
    }
}
