//! The paragraph a host (and its model) reads when a call could not be answered by the upstream:
//! which server, what happened, whether the call was sent, and when the next attempt is.

use std::time::Duration;

use crate::{CallError, ConnectionState, config::human_duration as seconds};

/// Where the upstream stands, as far as the sentence needs it.
pub(super) struct Standing {
    pub(super) state: ConnectionState,
    /// When the proxy will start a supervisor that gave up again.
    pub(super) revive_in: Option<Duration>,
}

/// Whether the call ran, in the host's words.
enum Ran {
    No,
    Maybe,
}

/// The text of the `isError` tool result for `error` from server `server`.
pub(super) fn explain(server: &str, error: &CallError, standing: &Standing) -> String {
    let (what, ran) = match error {
        CallError::Unavailable { state, .. } => (
            format!(
                "The MCP server '{server}' is unavailable ({}).",
                state_words(state)
            ),
            Ran::No,
        ),
        CallError::AuthUnavailable { detail, .. } => (
            format!(
                "The MCP server '{server}' could not be authorized for the call: its authorization server did not answer ({detail}). Nothing needs to change; trying again later can succeed."
            ),
            Ran::No,
        ),
        CallError::ConnectionLost {
            detail,
            may_have_run,
            ..
        } => (
            format!(
                "The connection to the MCP server '{server}' was lost during the call ({detail})."
            ),
            if *may_have_run { Ran::Maybe } else { Ran::No },
        ),
        CallError::Timeout { after } => (
            format!(
                "The MCP server '{server}' did not answer within {}; the call was cancelled on the server.",
                seconds(*after)
            ),
            Ran::Maybe,
        ),
        CallError::Overloaded {
            status,
            retry_after,
            ..
        } => (
            format!(
                "The MCP server '{server}' is overloaded (HTTP {status}){}.",
                retry_after
                    .map(|wait| format!(" and asked for a wait of {}", seconds(wait)))
                    .unwrap_or_default()
            ),
            Ran::No,
        ),
        CallError::Http { status, detail, .. } => (
            match status {
                Some(status) => format!(
                    "The MCP server '{server}' answered the call with HTTP {status} ({detail})."
                ),
                None => format!("The MCP server '{server}' sent a malformed answer ({detail})."),
            },
            Ran::Maybe,
        ),
        CallError::Rejected { detail, .. } => (
            format!(
                "The MCP server '{server}' refused the call ({detail}); retrying will not help until its credentials or permissions are fixed."
            ),
            Ran::No,
        ),
        CallError::InputRequired { asked, .. } => (
            format!(
                "The MCP server '{server}' needs {asked} from the host to complete the call, and this host does not provide it."
            ),
            Ran::No,
        ),
        CallError::Protocol { detail } => (
            format!(
                "The MCP server '{server}' answered with something that is not a tool result ({detail})."
            ),
            Ran::Maybe,
        ),
        CallError::ToolNotFound { name } => (
            format!("The MCP server '{server}' does not list a tool named '{name}'."),
            Ran::No,
        ),
        CallError::Server(error) => (
            format!(
                "The MCP server '{server}' answered with error {}: {}.",
                error.code.0, error.message
            ),
            Ran::No,
        ),
    };
    let ran = match ran {
        Ran::No => "The call was not run.",
        Ran::Maybe => {
            "The call may have run: check its effect before calling again if it changes anything."
        }
    };
    format!("{what} {ran} {}", next_words(standing))
}

/// What the state says about the server, as a clause.
fn state_words(state: &ConnectionState) -> String {
    match state {
        ConnectionState::Connecting { attempt } => format!("connecting, attempt {attempt}"),
        ConnectionState::Ready { generation, .. } => {
            format!("connected again as generation {generation}")
        }
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
        ConnectionState::Stopped => "stopped".to_owned(),
    }
}

fn reason_words(reason: crate::Reason) -> &'static str {
    match reason {
        crate::Reason::ConnectionFailed => "connection failed",
        crate::Reason::ConnectionLost => "connection lost",
    }
}

/// When the next attempt is, as a sentence.
fn next_words(standing: &Standing) -> String {
    match &standing.state {
        ConnectionState::Ready { .. } => "It is connected again; calling again should work.".into(),
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
        ConnectionState::Stopped => "The proxy is shutting down.".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cause, Death, Reason};

    fn reconnecting() -> ConnectionState {
        ConnectionState::Reconnecting {
            reason: Reason::ConnectionLost,
            death: Death::new(Cause::ProcessExited, "exit status: 137"),
            attempt: 2,
            delay: Duration::from_millis(1500),
        }
    }

    #[test]
    fn an_outage_names_the_server_what_happened_that_nothing_ran_and_the_next_attempt() {
        let state = reconnecting();
        let error = CallError::Unavailable {
            server: "files".into(),
            state: state.clone(),
        };
        let text = explain(
            "files",
            &error,
            &Standing {
                state,
                revive_in: None,
            },
        );
        assert_eq!(
            text,
            "The MCP server 'files' is unavailable (connection lost: process_exited, exit status: 137). \
             The call was not run. Reconnection attempt 2 starts within 1.5 s of the failure."
        );
    }

    #[test]
    fn a_call_lost_in_flight_says_it_may_have_run() {
        let error = CallError::ConnectionLost {
            server: "db".into(),
            generation: 3,
            detail: "stream closed".into(),
            may_have_run: true,
        };
        let text = explain(
            "db",
            &error,
            &Standing {
                state: ConnectionState::Connecting { attempt: 1 },
                revive_in: None,
            },
        );
        assert!(text.contains("'db'"), "{text}");
        assert!(text.contains("may have run"), "{text}");
        assert!(
            text.ends_with("Connection attempt 1 is under way now."),
            "{text}"
        );
    }

    #[test]
    fn a_server_that_gave_up_says_when_the_proxy_revives_it() {
        let state = ConnectionState::Failed {
            reason: Reason::ConnectionFailed,
            death: Death::new(Cause::ConnectFailed, "connection refused"),
            manual_recovery: false,
            retry_in: None,
        };
        let error = CallError::Unavailable {
            server: "s".into(),
            state: state.clone(),
        };
        let text = explain(
            "s",
            &error,
            &Standing {
                state,
                revive_in: Some(Duration::from_secs(30)),
            },
        );
        assert!(text.contains("gave up: connect_failed"), "{text}");
        assert!(
            text.ends_with("The proxy starts it again in 30 s."),
            "{text}"
        );
    }

    #[test]
    fn durations_read_like_speech() {
        assert_eq!(seconds(Duration::from_millis(800)), "800 ms");
        assert_eq!(seconds(Duration::from_millis(2500)), "2.5 s");
        assert_eq!(seconds(Duration::from_secs(30)), "30 s");
    }
}
