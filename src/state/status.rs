//! [`Status`]: what one server is doing, as its supervisor publishes it.

use std::fmt;

use super::{ConnectionState, Generation};

/// What one server is doing: the single source of truth about it, written only by its
/// supervisor task. [`Supervisor::status`](crate::Supervisor::status) reads it,
/// [`Supervisor::watch`](crate::Supervisor::watch) follows it, and every
/// [`Event::State`](super::Event::State) carries the status it announces.
///
/// # Invariants
///
/// 1. `seq` grows by one with every change; a reader that saw `seq` never sees a smaller one.
/// 2. The state is `ready` exactly while a generation takes calls: a generation that is being
///    closed (by `restart`, `shutdown` or its death) is never shown as ready once its closing
///    has been decided.
/// 3. An [`Event::State`](super::Event::State) is sent after its status is visible: a reader that reacts to an event
///    and then reads the status sees that status or a newer one.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Status {
    /// The number of this status: 1 for the first (`connecting`), one more for each change.
    pub seq: u64,
    /// The state.
    pub state: ConnectionState,
    /// The generation the state is about: the one being tried (`connecting`; `None` while a
    /// restart closes the previous one), the ready one, the one lost or whose attempt failed
    /// (`reconnecting`, `failed`), or the last ready one (`stopping`, `stopped`; `None` when
    /// none was).
    pub generation: Option<Generation>,
}

impl Status {
    /// The ready generation, if the state is `ready`.
    pub fn ready(&self) -> Option<Generation> {
        match self.state {
            ConnectionState::Ready { generation, .. } => Some(generation),
            _ => None,
        }
    }

    /// True in the `ready` state.
    pub fn is_ready(&self) -> bool {
        self.state.is_ready()
    }

    /// The protocol version the ready generation negotiated (`2026-07-28`, `2025-11-25`, …).
    pub fn protocol(&self) -> Option<&str> {
        match &self.state {
            ConnectionState::Ready { protocol, .. } => Some(protocol),
            _ => None,
        }
    }
}

/// The state, the generation it is about (when there is one) and the sequence number:
/// `ready, generation 3, seq 7`; `connecting, seq 12` while a restart closes the previous
/// generation. The state's own `Display` is the word alone (`ready`).
impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.state, f)?;
        if let Some(generation) = self.generation {
            write!(f, ", generation {generation}")?;
        }
        write!(f, ", seq {}", self.seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_shows_its_state_generation_and_sequence_and_a_generation_its_number() {
        let three = Generation::new(3).expect("generation 3");
        let ready = Status {
            seq: 7,
            state: ConnectionState::Ready {
                generation: three,
                protocol: "2025-11-25".into(),
            },
            generation: Some(three),
        };
        assert_eq!(ready.to_string(), "ready, generation 3, seq 7");
        let restarting = Status {
            seq: 12,
            state: ConnectionState::Connecting { attempt: 1 },
            generation: None,
        };
        assert_eq!(restarting.to_string(), "connecting, seq 12");
        assert_eq!(format!("{three:?}"), "3");
        assert_eq!(format!("{:?}", Some(three)), "Some(3)");
    }
}
