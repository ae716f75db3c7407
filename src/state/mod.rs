//! Connection states, causes of death and the events a supervisor publishes.
//!
//! These are the words of the crate (see the README's vocabulary): a server is
//! `connecting`, `ready`, `reconnecting`, `failed` or `stopped`; a generation
//! ends for a [`Cause`]; an outage is either a connection that *failed* (never
//! became ready) or one that was *lost* (was ready, then ended).

pub(crate) mod connection;
mod events;
mod generation;
mod receiver;
pub(crate) mod status;

use std::{fmt, sync::Arc};

pub(crate) use connection::ConnectionState;
pub(crate) use events::Events;
pub use generation::Generation;
pub use receiver::{ChangeReceiver, EventReceiver, RecvError};
pub(crate) use status::Status;

/// Why a generation ended or an attempt failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Cause {
    /// The stdio child process exited.
    ProcessExited,
    /// The transport's incoming stream ended (stdout EOF, SSE stream end).
    StreamClosed,
    /// The server no longer knows the session (HTTP 404/410, or 400 where enabled).
    SessionExpired,
    /// The heartbeat probe went unanswered `failures` times in a row.
    HeartbeatTimeout,
    /// A request failed on the transport (send refused, connection reset).
    TransportError,
    /// An attempt could not establish a session (spawn, connect, handshake, first tools/list).
    ConnectFailed,
    /// The server answered HTTP 401: the credentials are missing or no longer accepted.
    /// Permanent: the server is `failed` and retried only slowly.
    Unauthorized,
    /// The server refused us in a way retrying cannot fix: HTTP 403, a wrong path (404/405 on
    /// every transport tried), no protocol version in common, a JSON-RPC error answering
    /// `initialize`. Permanent: the server is `failed` and retried only slowly.
    Rejected,
    /// The server sent more than a [`Limits`](crate::config::Limits) bound allows: a tool list
    /// too big or too long, a message or an SSE event too large. The detail names the limit and
    /// the value seen. Permanent, like a refusal: the server is `failed` and retried only slowly.
    LimitExceeded,
}

impl Cause {
    /// The snake_case word used in logs and in `watch --json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::ProcessExited => "process_exited",
            Cause::StreamClosed => "stream_closed",
            Cause::SessionExpired => "session_expired",
            Cause::HeartbeatTimeout => "heartbeat_timeout",
            Cause::TransportError => "transport_error",
            Cause::ConnectFailed => "connect_failed",
            Cause::Unauthorized => "unauthorized",
            Cause::Rejected => "rejected",
            Cause::LimitExceeded => "limit_exceeded",
        }
    }

    /// True for the causes that retrying the same request cannot fix (`unauthorized`,
    /// `rejected`, `limit_exceeded`): the supervisor goes `failed` at once instead of spending
    /// its budget.
    pub fn is_permanent(self) -> bool {
        matches!(
            self,
            Cause::Unauthorized | Cause::Rejected | Cause::LimitExceeded
        )
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether an outage began with a failed attempt or with the loss of a ready generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    /// An attempt never established a session: `connection failed; retrying`.
    ConnectionFailed,
    /// A generation that was ready ended: `connection lost; reconnecting`.
    ConnectionLost,
}

impl Reason {
    /// The snake_case word used in logs and in `watch --json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::ConnectionFailed => "connection_failed",
            Reason::ConnectionLost => "connection_lost",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a generation or attempt ended: the cause plus a human detail line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Death {
    /// The classified cause.
    pub cause: Cause,
    /// What was observed, e.g. `exit status: 1` or `HTTP 404 on POST`.
    pub detail: String,
}

impl Death {
    /// A death with a cause and a detail line. URLs in the detail lose their credentials (the
    /// userinfo, query values and fragment): a detail reaches events, logs and error messages.
    pub fn new(cause: Cause, detail: impl Into<String>) -> Self {
        let detail = detail.into();
        let detail = match crate::text::redact(&detail) {
            std::borrow::Cow::Borrowed(_) => detail,
            std::borrow::Cow::Owned(redacted) => redacted,
        };
        Death { cause, detail }
    }
}

/// Something a supervisor reports on its `events()` broadcast.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// The status changed: `status` is the new one, already visible to
    /// [`Supervisor::status`](crate::Supervisor::status).
    State {
        /// The server's name.
        server: Arc<str>,
        /// The new status.
        status: Status,
    },
    /// The server's registered tool set changed (or was first registered).
    Tools(ToolsChanged),
    /// The ready generation stayed ready for the stability window: the outage budget is full again.
    Stable {
        /// The server's name.
        server: Arc<str>,
        /// The stable generation.
        generation: Generation,
    },
    /// A heartbeat probe went unanswered.
    ProbeMissed {
        /// The server's name.
        server: Arc<str>,
        /// The probed generation.
        generation: Generation,
        /// Consecutive misses so far.
        misses: u32,
    },
}

/// A change of one server's registered tools, as sent on
/// [`ToolRegistry::changes`](crate::ToolRegistry::changes).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolsChanged {
    /// The server's name.
    pub server: Arc<str>,
    /// The generation whose list is now registered (for a removal, the last one that was).
    pub generation: Generation,
    /// The raw names now registered, in server order (empty after an unregister).
    pub tools: Vec<String>,
    /// Raw names that were not registered before.
    pub added: Vec<String>,
    /// Raw names that are no longer registered.
    pub removed: Vec<String>,
    /// Raw names whose definition changed.
    pub changed: Vec<String>,
}

impl ToolsChanged {
    /// True when nothing was added, removed or changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}
