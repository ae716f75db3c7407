//! The one answer to "did the call run, and may it be sent again?" for each [`CallError`]: the
//! table on [`CallError`] is this file. The proxy's outage paragraph, the proxy's wait for a
//! revived upstream and rig's tool error all ask these methods instead of deciding again.

use rmcp::model::ErrorCode;

use super::CallError;
use crate::{call::CallPhase, state::ConnectionState};

impl CallError {
    /// False when the server provably did not run the call: it was never sent (no ready
    /// generation, no token, a refused connection), or the server refused it before running it
    /// (an unknown session, a load refusal, an HTTP 401/403, a JSON-RPC refusal of the request
    /// itself). True when it was sent and what it did is unknown. See the table on
    /// [`CallError`].
    pub fn may_have_run(&self) -> bool {
        match self {
            CallError::ConnectionLost { may_have_run, .. } => *may_have_run,
            CallError::Timeout {
                phase: CallPhase::Probe,
                ..
            } => false,
            CallError::Server(error) => !refused_unrun(error.code),
            CallError::Timeout { .. }
            | CallError::Protocol { .. }
            | CallError::Http { .. }
            | CallError::InputRequired { .. } => true,
            CallError::Unavailable { .. }
            | CallError::ToolNotFound { .. }
            | CallError::Overloaded { .. }
            | CallError::AuthUnavailable { .. }
            | CallError::Rejected { .. } => false,
        }
    }

    /// True when the same call may succeed later without anything changing on the caller's side
    /// (the server came back, a new generation was built, the load passed). It says nothing
    /// about whether sending it again is safe: see [`may_send_again`](Self::may_send_again).
    pub fn is_transient(&self) -> bool {
        match self {
            // A server refused for now (`retry_in`) is tried again by the supervisor itself.
            CallError::Unavailable { state, .. } => !matches!(
                state,
                ConnectionState::Failed { retry_in: None, .. }
                    | ConnectionState::Stopping
                    | ConnectionState::Stopped
            ),
            CallError::ConnectionLost { .. }
            | CallError::Timeout { .. }
            | CallError::Overloaded { .. }
            | CallError::AuthUnavailable { .. }
            | CallError::Http { .. } => true,
            CallError::ToolNotFound { .. }
            | CallError::Server(_)
            | CallError::Protocol { .. }
            | CallError::InputRequired { .. }
            | CallError::Rejected { .. } => false,
        }
    }

    /// True when sending the same call again cannot run it twice and may succeed: it did not
    /// run ([`may_have_run`](Self::may_have_run) is false) and the failure is
    /// [transient](Self::is_transient). This is what rig's `retryable` carries to a model.
    pub fn may_send_again(&self) -> bool {
        !self.may_have_run() && self.is_transient()
    }

    /// The error's kind in one snake_case word (`unavailable`, `connection_lost`, `timeout`,
    /// `tool_not_found`, `server_error`, `protocol`, `overloaded`, `http`, `auth_unavailable`,
    /// `input_required`, `rejected`): a bounded label for logs and metrics (the `error.type` the
    /// library's telemetry records).
    pub fn kind(&self) -> &'static str {
        match self {
            CallError::Unavailable { .. } => "unavailable",
            CallError::ConnectionLost { .. } => "connection_lost",
            CallError::Timeout { .. } => "timeout",
            CallError::ToolNotFound { .. } => "tool_not_found",
            CallError::Server(_) => "server_error",
            CallError::Protocol { .. } => "protocol",
            CallError::Overloaded { .. } => "overloaded",
            CallError::Http { .. } => "http",
            CallError::AuthUnavailable { .. } => "auth_unavailable",
            CallError::InputRequired { .. } => "input_required",
            CallError::Rejected { .. } => "rejected",
        }
    }

    /// The sentence a host's model reads about running and sending again, chosen by the answers
    /// above and nothing else (the proxy and rig put their own account of what happened before
    /// it).
    pub fn advice(&self) -> &'static str {
        match (self.may_have_run(), self.is_transient()) {
            (false, true) => "The call was not run. It had no effect and can be sent again.",
            (false, false) => "The call was not run. It had no effect.",
            (true, _) => {
                "The call was sent and may have run: check its effect before calling it again if \
                 it changes anything."
            }
        }
    }
}

/// JSON-RPC and MCP codes that refuse the request itself, before anything runs: a malformed
/// request, an unknown method, invalid parameters, and MCP's refusals of a resource, a header,
/// a missing client capability or a protocol version. Every other code (an internal error, a
/// server's own) may come from a tool that had started.
fn refused_unrun(code: ErrorCode) -> bool {
    [
        ErrorCode::PARSE_ERROR,
        ErrorCode::INVALID_REQUEST,
        ErrorCode::METHOD_NOT_FOUND,
        ErrorCode::INVALID_PARAMS,
        ErrorCode::RESOURCE_NOT_FOUND,
        ErrorCode::HEADER_MISMATCH,
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
    ]
    .contains(&code)
}
