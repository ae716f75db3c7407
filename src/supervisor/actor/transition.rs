//! [`Transition`]: one change of a server's status, with what its log line and its metrics need
//! beyond the status itself.
//!
//! The actor makes one value for every change and hands it to its three consumers: the log
//! ([`Transition::log`]), the metrics (`telemetry::transition`) and the board, whose events
//! hosts read. They take the same value, so they cannot tell different stories.
//!
//! # Invariants
//!
//! 1. The two vocabularies of failure (DESIGN invariant 9): an attempt that never established a
//!    session is `connection failed; retrying`, a generation that was ready and ended is
//!    `connection lost; reconnecting`. Recovery logs at info; giving up, disabled recovery and
//!    refusals at error.
//! 2. A `ready` transition carries the generation that takes calls; no other does.

use std::{sync::Arc, time::Duration};

use crate::{
    state::{ConnectionState, Generation, Reason},
    supervisor::session::live::Live,
};

/// One change of a server's status.
#[derive(Debug)]
pub(in crate::supervisor) struct Transition {
    pub(in crate::supervisor) server: Arc<str>,
    /// The new state.
    pub(in crate::supervisor) state: ConnectionState,
    /// The generation the state is about (see [`Status::generation`](crate::Status)).
    pub(in crate::supervisor) generation: Option<Generation>,
    /// What the log and the metrics say beyond the state.
    pub(in crate::supervisor) note: Note,
}

/// What a transition's log line and metrics say beyond its state.
#[derive(Debug)]
pub(in crate::supervisor) enum Note {
    /// Nothing more.
    Plain,
    /// A generation is ready: `live` takes calls; the handshake took `handshake`; `outage` is
    /// how long the server was without a generation, when this ended an outage.
    Ready {
        live: Arc<Live>,
        handshake: Duration,
        outage: Option<Duration>,
    },
    /// Reconnect is disabled: the last tool set stays, `restart()` recovers.
    Manual,
    /// The outage budget is spent after `failures` failures in a row, or (`disabled`) reconnect
    /// is disabled and the first attempt failed.
    GaveUp { failures: u32, disabled: bool },
    /// A permanent refusal (`unauthorized`, `rejected`) or a limit exceeded.
    Refused,
    /// A close could not be confirmed within `limit`: no generation may start.
    CloseUnconfirmed { limit: Duration },
}

impl Transition {
    /// The generation that takes calls, with a `ready` transition only (invariant 2).
    pub(in crate::supervisor) fn live(&self) -> Option<&Arc<Live>> {
        match &self.note {
            Note::Ready { live, .. } => Some(live),
            _ => None,
        }
    }

    /// Records the transition in the metrics, as a change from `from`.
    pub(in crate::supervisor) fn record(&self, from: &ConnectionState) {
        let ready = match &self.note {
            Note::Ready { live, outage, .. } => Some((&live.telemetry, *outage)),
            _ => None,
        };
        crate::telemetry::transition(&self.server, from, &self.state, ready);
    }

    /// Writes the transition's log line (invariant 1).
    pub(in crate::supervisor) fn log(&self) {
        let server = &*self.server;
        let generation = self.generation.map(Generation::get);
        match (&self.state, &self.note) {
            (ConnectionState::Connecting { attempt }, _) => {
                tracing::debug!(server, generation, attempt, "connecting");
            }
            (
                ConnectionState::Ready { protocol, .. },
                Note::Ready {
                    handshake, outage, ..
                },
            ) => {
                let handshake_ms = handshake.as_millis() as u64;
                match outage {
                    Some(outage) => tracing::info!(
                        server, generation, handshake_ms, %protocol,
                        downtime_ms = outage.as_millis() as u64, "recovered"
                    ),
                    None => {
                        tracing::info!(server, generation, handshake_ms, %protocol, "connected")
                    }
                }
            }
            (ConnectionState::Ready { .. }, _) => tracing::info!(server, generation, "ready"),
            (
                ConnectionState::Reconnecting {
                    reason,
                    death,
                    attempt,
                    delay,
                },
                _,
            ) => {
                let delay_ms = delay.as_millis() as u64;
                let cause = death.cause.as_str();
                match reason {
                    Reason::ConnectionFailed => tracing::warn!(
                        server,
                        generation,
                        cause,
                        attempt,
                        delay_ms,
                        "connection failed; retrying: {}",
                        death.detail
                    ),
                    Reason::ConnectionLost => tracing::warn!(
                        server,
                        generation,
                        cause,
                        attempt,
                        delay_ms,
                        "connection lost; reconnecting: {}",
                        death.detail
                    ),
                }
            }
            (ConnectionState::Failed { .. }, _) => self.log_failed(),
            (ConnectionState::Stopping, _) => tracing::debug!(server, "stopping"),
            (ConnectionState::Stopped, _) => tracing::info!(server, "stopped"),
        }
    }

    /// The error line of a `failed` transition: why nothing more happens at the normal pace.
    fn log_failed(&self) {
        let ConnectionState::Failed {
            death, retry_in, ..
        } = &self.state
        else {
            return;
        };
        let server = &*self.server;
        let generation = self.generation.map(Generation::get);
        let cause = death.cause.as_str();
        let detail = &death.detail;
        match &self.note {
            Note::Manual => tracing::error!(
                server,
                generation,
                cause,
                "connection lost; reconnect is disabled, call restart() to recover: {detail}"
            ),
            Note::GaveUp { failures, disabled } => {
                if *disabled {
                    tracing::error!(
                        server,
                        generation,
                        cause,
                        "connection failed; reconnect is disabled: {detail}"
                    );
                }
                tracing::error!(server, generation, cause, failures, "giving up: {detail}");
            }
            Note::CloseUnconfirmed { limit } => tracing::error!(
                server,
                generation,
                "giving up: could not confirm the last generation closed within {limit:?}; not reconnecting to avoid two live servers"
            ),
            _ => {
                let what = match death.cause {
                    crate::state::Cause::LimitExceeded => "the server exceeded a limit",
                    _ => "refused by the server",
                };
                match retry_in {
                    Some(wait) => tracing::error!(
                        server,
                        generation,
                        cause,
                        "{what}; trying again only in {wait:?}: {detail}"
                    ),
                    None => tracing::error!(
                        server,
                        generation,
                        cause,
                        "{what}; reconnect is disabled: {detail}"
                    ),
                }
            }
        }
    }
}
