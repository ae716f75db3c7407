//! The paragraph a host (and its model) reads when a call could not be answered by the upstream:
//! which server, what happened, whether the call ran and may be sent again, and when the next
//! attempt is.

use std::time::Duration;

use mcp_resilient::{
    CallError, ConnectionState, call::CallPhase, state::Generation, text::human_duration as seconds,
};

/// Where the upstream stands, as far as the sentence needs it.
pub(super) struct Standing {
    pub(super) state: ConnectionState,
    /// When the proxy will start a supervisor that gave up again.
    pub(super) revive_in: Option<Duration>,
}

/// The text of the `isError` tool result for `error` from server `server`: what happened, then
/// whether the call ran and may be sent again (the [`CallError`] table's answers, in its words),
/// then when the next attempt is.
pub(super) fn explain(server: &str, error: &CallError, standing: &Standing) -> String {
    format!(
        "{} {} {}",
        what_happened(server, error),
        error.advice(),
        next_words(error, standing)
    )
}

/// What happened, as a sentence; nothing about running or sending again (see `explain`).
fn what_happened(server: &str, error: &CallError) -> String {
    match error {
        CallError::Unavailable { state, .. } => format!(
            "The MCP server '{server}' is unavailable ({}).",
            state_words(state)
        ),
        CallError::AuthUnavailable { detail, .. } => format!(
            "The MCP server '{server}' could not be authorized for the call: its authorization server did not answer ({detail}). Nothing needs to change on the host's side."
        ),
        CallError::ConnectionLost { detail, .. } => format!(
            "The connection to the MCP server '{server}' was lost during the call ({detail})."
        ),
        CallError::Timeout {
            phase: CallPhase::Answer,
            after,
            ..
        } => format!(
            "The MCP server '{server}' did not answer within {}; the call was cancelled on the server.",
            seconds(*after)
        ),
        CallError::Timeout { after, .. } => format!(
            "The host did not answer the MCP server '{server}''s request for input within {}; the call was cancelled on the server.",
            seconds(*after)
        ),
        CallError::Overloaded {
            status,
            retry_after,
            ..
        } => format!(
            "The MCP server '{server}' is overloaded (HTTP {status}){}.",
            retry_after
                .map(|wait| format!(" and asked for a wait of {}", seconds(wait)))
                .unwrap_or_default()
        ),
        CallError::Http { status, detail, .. } => match status {
            Some(status) => {
                format!(
                    "The MCP server '{server}' answered the call with HTTP {status} ({detail})."
                )
            }
            None => format!("The MCP server '{server}' sent a malformed answer ({detail})."),
        },
        CallError::Rejected { detail, .. } => format!(
            "The MCP server '{server}' refused the call ({detail}); retrying will not help until its credentials or permissions are fixed."
        ),
        CallError::InputRequired { asked, .. } => format!(
            "The MCP server '{server}' needs {asked} from the host to complete the call, and this host does not provide it."
        ),
        CallError::Protocol { detail } => format!(
            "The MCP server '{server}' answered with something that is not a tool result ({detail})."
        ),
        CallError::ToolNotFound { name } => {
            format!("The MCP server '{server}' does not list a tool named '{name}'.")
        }
        CallError::Server(error) => format!(
            "The MCP server '{server}' answered with error {}: {}.",
            error.code.0, error.message
        ),
        // A kind a later release of the library adds.
        other => format!("The call to the MCP server '{server}' failed ({other})."),
    }
}

/// What the state says about the server, as a clause.
fn state_words(state: &ConnectionState) -> String {
    match state {
        ConnectionState::Connecting { attempt } => format!("connecting, attempt {attempt}"),
        ConnectionState::Ready { generation, .. } => format!("ready, generation {generation}"),
        ConnectionState::Reconnecting { reason, death, .. } => {
            format!(
                "{}: {}, {}",
                reason_words(*reason),
                death.cause,
                death.detail
            )
        }
        ConnectionState::Failed { death, .. } => {
            format!("gave up: {}, {}", death.cause, death.detail)
        }
        ConnectionState::Stopping => "stopping".to_owned(),
        ConnectionState::Stopped => "stopped".to_owned(),
        // A state a later release of the library adds.
        other => other.to_string(),
    }
}

/// The generation an outage ended, for an error that reports one: the lost generation, or
/// `Some(None)` for an outage whose error names none. `None` when the error is not an outage.
fn outage_of(error: &CallError) -> Option<Option<Generation>> {
    match error {
        CallError::ConnectionLost { generation, .. } => Some(Some(*generation)),
        CallError::Unavailable { .. } => Some(None),
        _ => None,
    }
}

fn reason_words(reason: mcp_resilient::state::Reason) -> &'static str {
    match reason {
        mcp_resilient::state::Reason::ConnectionFailed => "connection failed",
        mcp_resilient::state::Reason::ConnectionLost => "connection lost",
    }
}

/// When the next attempt is, as a sentence. A ready state read after a lost connection may
/// still be the generation that was lost (the supervisor has not yet taken in the death): that
/// is told as an ending, not as a recovery.
fn next_words(error: &CallError, standing: &Standing) -> String {
    match &standing.state {
        ConnectionState::Ready { generation, .. } => match outage_of(error) {
            Some(Some(ended)) if *generation <= ended => {
                "Its connection has just ended; when it is tried again is not known yet.".into()
            }
            Some(_) => format!("It is connected again, as generation {generation}."),
            None => format!("It is connected (generation {generation})."),
        },
        ConnectionState::Connecting { attempt } => {
            format!("Connection attempt {attempt} is under way now.")
        }
        ConnectionState::Reconnecting { attempt, delay, .. } => format!(
            "Reconnection attempt {attempt} starts within {} of the failure.",
            seconds(*delay)
        ),
        ConnectionState::Failed {
            retry_in: Some(wait),
            ..
        } => format!(
            "It will be tried once more {} after it refused.",
            seconds(*wait)
        ),
        ConnectionState::Failed {
            manual_recovery: true,
            ..
        } => "Reconnection is disabled for it; it stays down until restarted.".into(),
        ConnectionState::Failed { .. } => match standing.revive_in {
            Some(wait) => format!("The proxy starts it again in {}.", seconds(wait)),
            None => "The proxy starts it again shortly.".into(),
        },
        ConnectionState::Stopping | ConnectionState::Stopped => {
            "The proxy is shutting down.".into()
        }
        // A state a later release of the library adds: nothing to say of the next attempt.
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests;
