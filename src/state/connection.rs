//! [`ConnectionState`]: where a server is in its life.

use std::{fmt, time::Duration};

use super::{Death, Generation, Reason};

/// The state of one supervised server, published through a `watch` channel.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConnectionState {
    /// The first attempt (or the attempt after `restart()`) is under way.
    Connecting {
        /// 1-based attempt number within this outage.
        attempt: u32,
    },
    /// A generation is connected, its tools are listed and registered.
    Ready {
        /// The current generation.
        generation: Generation,
        /// The protocol version it negotiated: `2026-07-28` (stateless, `server/discover`),
        /// `2025-11-25` or an earlier one (`initialize`; legacy SSE is `2024-11-05`).
        protocol: String,
    },
    /// Waiting `delay` before attempt `attempt`, after a failure or a loss.
    Reconnecting {
        /// Failed attempt or lost connection.
        reason: Reason,
        /// What ended the previous generation or attempt.
        death: Death,
        /// 1-based number of the attempt that will follow the delay.
        attempt: u32,
        /// The scheduled delay before that attempt: the backoff, which a server listening again
        /// cuts short; a web origin's attempt budget (`Reconnect::origin_attempts_per_second`)
        /// may hold the attempt a little longer.
        delay: Duration,
    },
    /// No further attempts at the normal pace: the budget is spent, reconnect is disabled, a
    /// close could not be confirmed, or the server refused us permanently (cause `unauthorized`
    /// or `rejected`) or exceeded a limit (`limit_exceeded`). `restart()` starts again.
    Failed {
        /// Failed attempt or lost connection.
        reason: Reason,
        /// The last death.
        death: Death,
        /// True when reconnect is disabled: the last tool set stays registered and
        /// the host is expected to call `restart()`.
        manual_recovery: bool,
        /// For a permanent refusal: the supervisor tries once more after this delay (the
        /// reconnect policy's `max_delay`, counted from when this state was published), in case
        /// the server or its configuration was fixed; a refusal again publishes `failed` again.
        /// `None`: nothing more happens until `restart()`.
        retry_in: Option<Duration>,
    },
    /// `shutdown()` is closing the server: no call is taken any more; `stopped` follows.
    Stopping,
    /// `shutdown()` completed. Nothing of this server runs any more.
    Stopped,
}

impl ConnectionState {
    /// The lowercase word for this state (`connecting`, `ready`, …).
    pub fn as_str(&self) -> &'static str {
        match self {
            ConnectionState::Connecting { .. } => "connecting",
            ConnectionState::Ready { .. } => "ready",
            ConnectionState::Reconnecting { .. } => "reconnecting",
            ConnectionState::Failed { .. } => "failed",
            ConnectionState::Stopping => "stopping",
            ConnectionState::Stopped => "stopped",
        }
    }

    /// True in the `ready` state.
    pub fn is_ready(&self) -> bool {
        matches!(self, ConnectionState::Ready { .. })
    }
}

impl fmt::Display for ConnectionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
