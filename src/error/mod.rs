//! Typed errors.
//!
//! [`CallError`] is what a tool call can end with, and `answers` holds the one place that says,
//! for each of its variants, whether the call may have run and whether it may be sent again
//! (the table is on [`CallError`]).

use std::time::Duration;

use crate::{
    call::CallPhase,
    state::{ConnectionState, Generation},
};

mod answers;

/// Why a tool call did not produce a result.
///
/// A tool that ran and reported its own failure (`isError: true`) is *not* an error: it is a
/// [`rmcp::model::CallToolResult`] with `is_error == Some(true)`.
///
/// # Did it run, may it be sent again
///
/// Three questions, answered once here, from which the proxy's outage paragraph and rig's tool
/// error take their words:
///
/// - [`may_have_run`](Self::may_have_run): false only when the server provably did not run the
///   call (it was never sent, or the server refused it before running it). True means it was
///   sent and its effect is unknown.
/// - [`is_transient`](Self::is_transient): the same call may succeed later without anything
///   changing on the caller's side (the server comes back, the load passes).
/// - [`may_send_again`](Self::may_send_again): both of the above: sending the same call again
///   cannot run it twice, and may succeed. This is what "retryable" means to a model or an
///   automatic retrier.
///
/// "May succeed later" and "safe to send again" are different questions: a `Timeout` is
/// transient (the server may answer next time), but the call may have run, so only someone who
/// knows it is idempotent (or has checked its effect) should send it again.
///
/// | variant | `may_have_run` | `is_transient` | `may_send_again` |
/// |---|---|---|---|
/// | `Unavailable` | no | yes, unless `failed` with nothing scheduled, or `stopped` | = `is_transient` |
/// | `ConnectionLost { may_have_run: false }` | no | yes | yes |
/// | `ConnectionLost { may_have_run: true }` | yes | yes | no |
/// | `Timeout` | yes (no when its phase is [`Probe`](CallPhase::Probe): the call was not sent) | yes | no (yes for `Probe`) |
/// | `ToolNotFound` | no | no | no |
/// | `Server`: parse error, invalid request, unknown method, invalid params, and MCP's refusals (-32002, -32020, -32021, -32022) | no | no | no |
/// | `Server`: any other code (an internal error, a server's own code) | yes | no | no |
/// | `Protocol` | yes | no | no |
/// | `Overloaded` | no | yes | yes |
/// | `Http` | yes | yes | no |
/// | `AuthUnavailable` | no | yes | yes |
/// | `InputRequired` | yes | no | no |
/// | `Rejected` | no | no | no |
///
/// A server that gave up (`failed`, nothing scheduled) comes back only when someone starts it
/// again, so its `Unavailable` is not transient; the proxy, which does start it again, waits
/// for that and sends such a call once more because it did not run.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// No ready generation: the server is connecting, reconnecting, failed or stopped.
    /// Transient unless the server gave up (`failed`, nothing scheduled) or is `stopped`.
    #[error("server '{server}' is unavailable ({state})")]
    Unavailable {
        /// The server's name.
        server: String,
        /// The state at the time of the call.
        state: ConnectionState,
    },
    /// The generation that carried the call died while the call was in flight, or before it
    /// could be sent (its pre-call probe went unanswered, or the server refused it for a
    /// session it no longer knows) and no next generation took it within its deadline. Nothing
    /// is replayed that may have run: `may_have_run` says which it was.
    ///
    /// On 2026-07-28 also: the stream of the call's answer was cut before the answer while
    /// `generation` lives on (`may_have_run: true`). The server took the closed stream as the
    /// call's cancellation but may have run part or all of it; the call was not issued again
    /// (the tool is not annotated read-only or idempotent), or was, once, and cut again.
    #[error(
        "connection to '{server}' was lost (generation {generation}; {}): {detail}",
        if *.may_have_run { "the call may have run" } else { "the call did not run" }
    )]
    ConnectionLost {
        /// The server's name.
        server: String,
        /// The generation that died.
        generation: Generation,
        /// What was observed.
        detail: String,
        /// False when the server provably did not run the call: it was never sent, or the
        /// server refused it unrun. True when it was sent and the answer was lost.
        may_have_run: bool,
    },
    /// The call's deadline passed while it was waiting for `phase`. The request was cancelled
    /// on the server.
    #[error("call to server '{server}' timed out after {after:?} waiting for {phase}")]
    Timeout {
        /// The server's name.
        server: String,
        /// What the call was waiting for.
        phase: CallPhase,
        /// The timeout that elapsed (the call's own, or the server's `call_timeout`).
        after: Duration,
    },
    /// The registry has no tool with that public name, or the server no longer lists it.
    #[error("no tool named '{name}'")]
    ToolNotFound {
        /// The name that was asked for.
        name: String,
    },
    /// The server answered with a JSON-RPC error (unknown tool, invalid params, …).
    #[error("server error {}: {}", .0.code.0, .0.message)]
    Server(rmcp::model::ErrorData),
    /// The server answered with something that is not a tool result.
    #[error("unexpected response from server: {detail}")]
    Protocol {
        /// What was wrong.
        detail: String,
    },
    /// The server, or a gateway in front of it, refused the call for load (HTTP 429, or 503 with
    /// `Retry-After`) and asked for a wait that did not fit inside the call's deadline (or named
    /// none). The call did not run. Transient.
    #[error("server '{server}' is overloaded (HTTP {status}){}", retry_hint(*.retry_after))]
    Overloaded {
        /// The server's name.
        server: String,
        /// The HTTP status (429 or 503).
        status: u16,
        /// The wait the server asked for, if it named one.
        retry_after: Option<Duration>,
    },
    /// The server answered the call with an HTTP error that carries no JSON-RPC answer (a 5xx
    /// without `Retry-After`, a malformed response). The call may or may not have run; the
    /// generation lives on, and the answer counts as one missed probe. Transient.
    #[error("server '{server}' answered the call with {}", http_what(*.status, .detail))]
    Http {
        /// The server's name.
        server: String,
        /// The HTTP status, if there was one.
        status: Option<u16>,
        /// What was observed.
        detail: String,
    },
    /// No token could be had for the call: the authorization server did not answer (down, slow,
    /// or a 5xx), while nothing says the grant is gone. The call was not sent. Transient: the
    /// next call tries again.
    #[error("server '{server}' could not be authorized for the call: {detail}")]
    AuthUnavailable {
        /// The server's name.
        server: String,
        /// What was observed (never a secret).
        detail: String,
    },
    /// The server needs an answer from the host to complete the call (an `input_required` round,
    /// 2026-07-28) that no configured handler gives: see [`crate::host::HostHandlers`]. The
    /// call did not complete. Permanent until a handler is configured.
    #[error("server '{server}' asked for {asked}, which this host does not answer")]
    InputRequired {
        /// The server's name.
        server: String,
        /// What the server asked for.
        asked: crate::host::Ask,
    },
    /// The server refused the call in a way retrying cannot fix: HTTP 401 (credentials missing
    /// or no longer accepted; the server then goes `failed` with cause `unauthorized`), 403, or a
    /// redirect that was not followed. The call did not run. Permanent.
    #[error("server '{server}' refused the call: {detail}")]
    Rejected {
        /// The server's name.
        server: String,
        /// The HTTP status (401, 403, a 3xx), when there was one.
        status: Option<u16>,
        /// What was observed.
        detail: String,
    },
}

fn retry_hint(retry_after: Option<Duration>) -> String {
    match retry_after {
        Some(wait) => format!("; it asked for a wait of {wait:?}"),
        None => String::new(),
    }
}

fn http_what(status: Option<u16>, detail: &str) -> String {
    match status {
        Some(status) => format!("HTTP {status}"),
        None => format!("a malformed answer ({detail})"),
    }
}

/// A server not ready in time ([`Supervisor::wait_ready`](crate::Supervisor::wait_ready)): the
/// status it was in then, with the last death when there was one.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("server '{server}' is not ready: {}", describe(&.status.state))]
#[non_exhaustive]
pub struct NotReady {
    /// The server's name.
    pub server: String,
    /// Its status when the wait ended: `failed`, `stopping` or `stopped` (it will not be ready
    /// by itself), or, when the limit passed, whatever it was then.
    pub status: crate::state::Status,
}

fn describe(state: &ConnectionState) -> String {
    match state {
        ConnectionState::Reconnecting { death, .. } | ConnectionState::Failed { death, .. } => {
            format!("{state} ({}: {})", death.cause, death.detail)
        }
        other => other.to_string(),
    }
}

/// Why a [`Supervisor`](crate::Supervisor) could not be spawned.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The configuration did not pass [`ServerConfig::resolve`](crate::config::ServerConfig::resolve).
    #[error("invalid configuration")]
    Config(#[from] crate::config::ConfigError),
    /// The registry already has a supervisor for a server of that name.
    #[error("a server named '{0}' is already registered")]
    DuplicateServer(String),
    /// The default HTTP client could not be built (see
    /// [`SupervisorBuilder::http_client`](crate::supervisor::SupervisorBuilder::http_client)).
    #[error("could not build the HTTP client")]
    HttpClient(#[source] std::sync::Arc<reqwest::Error>),
    /// The configured authorization cannot be set up (no directory for the token store).
    #[error("the authorization cannot be set up")]
    Auth(#[source] crate::auth::StoreError),
    /// `spawn` was called outside a Tokio runtime: the supervisor is a task and needs one.
    #[error("no Tokio runtime: spawn a supervisor from within a runtime")]
    NoRuntime,
}

#[cfg(test)]
mod tests;
