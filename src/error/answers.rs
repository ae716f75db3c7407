//! The one answer to "did the call run, and may it be sent again?" for each [`CallError`]: the
//! table on [`CallError`] is this file. The proxy's outage paragraph, the proxy's wait for a
//! revived upstream and rig's tool error all ask these methods instead of deciding again.

use rmcp::model::ErrorCode;

use super::CallError;
use crate::state::ConnectionState;

impl CallError {
    /// False when the server provably did not run the call: it was never sent (no ready
    /// generation, no token, a refused connection), or the server refused it before running it
    /// (an unknown session, a load refusal, an HTTP 401/403, a JSON-RPC refusal of the request
    /// itself). True when it was sent and what it did is unknown. See the table on
    /// [`CallError`].
    pub fn may_have_run(&self) -> bool {
        match self {
            CallError::ConnectionLost { may_have_run, .. } => *may_have_run,
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
                ConnectionState::Failed { retry_in: None, .. } | ConnectionState::Stopped
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

    /// The sentence a host's model reads about running and sending again, chosen by the answers
    /// above and nothing else (the proxy and rig put their own account of what happened before
    /// it).
    #[cfg_attr(
        not(any(feature = "proxy", feature = "rig")),
        allow(
            dead_code,
            reason = "only the proxy and rig word an answer for a model"
        )
    )]
    pub(crate) fn advice(&self) -> &'static str {
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

#[cfg(test)]
mod tests {
    use std::{collections::BTreeSet, time::Duration};

    use rmcp::model::ErrorData;

    use super::*;
    use crate::{
        call::CallPhase,
        host::Ask,
        state::{Cause, Death, Reason},
    };

    /// Every variant by name; a new variant does not compile here until it is added to the
    /// table below.
    fn variant(error: &CallError) -> &'static str {
        match error {
            CallError::Unavailable { .. } => "Unavailable",
            CallError::ConnectionLost { .. } => "ConnectionLost",
            CallError::Timeout { .. } => "Timeout",
            CallError::ToolNotFound { .. } => "ToolNotFound",
            CallError::Server(_) => "Server",
            CallError::Protocol { .. } => "Protocol",
            CallError::Overloaded { .. } => "Overloaded",
            CallError::Http { .. } => "Http",
            CallError::AuthUnavailable { .. } => "AuthUnavailable",
            CallError::InputRequired { .. } => "InputRequired",
            CallError::Rejected { .. } => "Rejected",
        }
    }

    fn unavailable(state: ConnectionState) -> CallError {
        CallError::Unavailable {
            server: "s".into(),
            state,
        }
    }

    fn failed(retry_in: Option<Duration>, manual_recovery: bool) -> ConnectionState {
        ConnectionState::Failed {
            reason: Reason::ConnectionLost,
            death: Death::new(Cause::ProcessExited, "exit status: 1"),
            manual_recovery,
            retry_in,
        }
    }

    fn lost(may_have_run: bool) -> CallError {
        CallError::ConnectionLost {
            server: "s".into(),
            generation: 2,
            detail: "stream closed".into(),
            may_have_run,
        }
    }

    /// `(error, may_have_run, is_transient, may_send_again)`: the table on `CallError`.
    fn table() -> Vec<(CallError, bool, bool, bool)> {
        let reconnecting = ConnectionState::Reconnecting {
            reason: Reason::ConnectionLost,
            death: Death::new(Cause::ProcessExited, "exit status: 1"),
            attempt: 2,
            delay: Duration::from_millis(500),
        };
        let server = |code| CallError::Server(ErrorData::new(ErrorCode(code), "no", None));
        vec![
            (
                unavailable(ConnectionState::Connecting { attempt: 1 }),
                false,
                true,
                true,
            ),
            (unavailable(reconnecting), false, true, true),
            (
                unavailable(failed(Some(Duration::from_secs(30)), false)),
                false,
                true,
                true,
            ),
            (unavailable(failed(None, false)), false, false, false),
            (unavailable(failed(None, true)), false, false, false),
            (unavailable(ConnectionState::Stopped), false, false, false),
            (lost(false), false, true, true),
            (lost(true), true, true, false),
            (
                CallError::Timeout {
                    server: "s".into(),
                    phase: CallPhase::Answer,
                    after: Duration::from_secs(5),
                },
                true,
                true,
                false,
            ),
            (
                CallError::Timeout {
                    server: "s".into(),
                    phase: CallPhase::HostInput,
                    after: Duration::from_secs(5),
                },
                true,
                true,
                false,
            ),
            (
                CallError::ToolNotFound { name: "t".into() },
                false,
                false,
                false,
            ),
            (server(-32700), false, false, false),
            (server(-32600), false, false, false),
            (server(-32601), false, false, false),
            (server(-32602), false, false, false),
            (server(-32002), false, false, false),
            (server(-32020), false, false, false),
            (server(-32021), false, false, false),
            (server(-32022), false, false, false),
            (server(-32603), true, false, false),
            (server(-32000), true, false, false),
            (server(7), true, false, false),
            (
                CallError::Protocol { detail: "?".into() },
                true,
                false,
                false,
            ),
            (
                CallError::Overloaded {
                    server: "s".into(),
                    status: 429,
                    retry_after: None,
                },
                false,
                true,
                true,
            ),
            (
                CallError::Http {
                    server: "s".into(),
                    status: Some(502),
                    detail: "bad gateway".into(),
                },
                true,
                true,
                false,
            ),
            (
                CallError::AuthUnavailable {
                    server: "s".into(),
                    detail: "503".into(),
                },
                false,
                true,
                true,
            ),
            (
                CallError::InputRequired {
                    server: "s".into(),
                    asked: Ask::Elicitation,
                },
                true,
                false,
                false,
            ),
            (
                CallError::Rejected {
                    server: "s".into(),
                    status: Some(403),
                    detail: "forbidden".into(),
                },
                false,
                false,
                false,
            ),
        ]
    }

    #[test]
    fn each_variant_answers_as_the_table_says() {
        let table = table();
        for (error, ran, transient, again) in &table {
            let seen = (
                error.may_have_run(),
                error.is_transient(),
                error.may_send_again(),
            );
            assert_eq!(seen, (*ran, *transient, *again), "{error:?}");
        }
        let covered: BTreeSet<_> = table.iter().map(|(e, ..)| variant(e)).collect();
        assert_eq!(covered.len(), 11, "every variant has a row: {covered:?}");
    }

    #[test]
    fn the_advice_follows_the_answers_alone() {
        for (error, ran, transient, _) in table() {
            let advice = error.advice();
            assert_eq!(advice.contains("may have run"), ran, "{error:?}: {advice}");
            assert_eq!(
                advice.contains("can be sent again"),
                !ran && transient,
                "{error:?}: {advice}"
            );
            assert_eq!(advice.contains("was not run"), !ran, "{error:?}: {advice}");
        }
    }

    #[test]
    fn a_timeout_names_its_server_and_what_it_waited_for() {
        let answer = CallError::Timeout {
            server: "files".into(),
            phase: CallPhase::Answer,
            after: Duration::from_secs(5),
        };
        assert_eq!(
            answer.to_string(),
            "call to server 'files' timed out after 5s waiting for the server's answer"
        );
        let input = CallError::Timeout {
            server: "files".into(),
            phase: CallPhase::HostInput,
            after: Duration::from_millis(1500),
        };
        assert_eq!(
            input.to_string(),
            "call to server 'files' timed out after 1.5s waiting for the host to answer the \
             server's request for input"
        );
    }
}
