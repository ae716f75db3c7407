//! The errors' tests: `Unavailable`'s wording, and the table of `answers` pinned row by row.

use std::{collections::BTreeSet, time::Duration};

use rmcp::model::{ErrorCode, ErrorData};

use super::*;

use crate::{
    call::CallPhase,
    host::Ask,
    state::{Cause, Death, Reason}};

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
        generation: Generation::of(2),
        detail: "stream closed".into(),
        may_have_run,
    }
}

/// One row of the table on `CallError`: `(error, may_have_run, is_transient, may_send_again)`.
type Row = (CallError, bool, bool, bool);

/// The whole table: its rows by kind of failure.
fn table() -> Vec<Row> {
    [outage_rows(), answer_rows(), refusal_rows()].concat()
}

/// No server to send to, or the connection lost under the call.
fn outage_rows() -> Vec<Row> {
    let reconnecting = ConnectionState::Reconnecting {
        reason: Reason::ConnectionLost,
        death: Death::new(Cause::ProcessExited, "exit status: 1"),
        attempt: 2,
        delay: Duration::from_millis(500),
    };
    let connecting = ConnectionState::Connecting { attempt: 1 };
    let refused_for_now = failed(Some(Duration::from_secs(30)), false);
    vec![
        (unavailable(connecting), false, true, true),
        (unavailable(reconnecting), false, true, true),
        (unavailable(refused_for_now), false, true, true),
        (unavailable(failed(None, false)), false, false, false),
        (unavailable(failed(None, true)), false, false, false),
        (unavailable(ConnectionState::Stopped), false, false, false),
        (lost(false), false, true, true),
        (lost(true), true, true, false),
    ]
}

/// The call was sent and something came back, or nothing did in time.
fn answer_rows() -> Vec<Row> {
    let timeout = |phase| CallError::Timeout {
        server: "s".into(),
        phase,
        after: Duration::from_secs(5),
    };
    let server = |code| CallError::Server(ErrorData::new(ErrorCode(code), "no", None));
    let http = CallError::Http {
        server: "s".into(),
        status: Some(502),
        detail: "bad gateway".into(),
    };
    let mut rows = vec![
        (timeout(CallPhase::Answer), true, true, false),
        (timeout(CallPhase::HostInput), true, true, false),
        (timeout(CallPhase::Probe), false, true, true),
        (http, true, true, false),
        (
            CallError::Protocol { detail: "?".into() },
            true,
            false,
            false,
        ),
    ];
    // The request itself refused: not run.
    for code in [
        -32700, -32600, -32601, -32602, -32002, -32020, -32021, -32022,
    ] {
        rows.push((server(code), false, false, false));
    }
    // An internal error, a server's own code: a tool may have started.
    for code in [-32603, -32000, 7] {
        rows.push((server(code), true, false, false));
    }
    rows
}

/// Refused before it ran: for load, for want of a token, for good.
fn refusal_rows() -> Vec<Row> {
    let overloaded = CallError::Overloaded {
        server: "s".into(),
        status: 429,
        retry_after: None,
    };
    let no_token = CallError::AuthUnavailable {
        server: "s".into(),
        detail: "503".into(),
    };
    let input = CallError::InputRequired {
        server: "s".into(),
        asked: Ask::Elicitation,
    };
    let rejected = CallError::Rejected {
        server: "s".into(),
        status: Some(403),
        detail: "forbidden".into(),
    };
    vec![
        (overloaded, false, true, true),
        (no_token, false, true, true),
        (input, true, false, false),
        (rejected, false, false, false),
        (
            CallError::ToolNotFound { name: "t".into() },
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

fn unavailable_text(state: ConnectionState) -> String {
    CallError::Unavailable {
        server: "demo".into(),
        state,
    }
    .to_string()
}

#[test]
fn unavailable_names_the_state_it_found() {
    let connecting = unavailable_text(ConnectionState::Connecting { attempt: 2 });
    assert_eq!(connecting, "server 'demo' is unavailable (connecting)");
    let stopping = unavailable_text(ConnectionState::Stopping);
    assert_eq!(stopping, "server 'demo' is unavailable (stopping)");
    let stopped = unavailable_text(ConnectionState::Stopped);
    assert_eq!(stopped, "server 'demo' is unavailable (stopped)");
}
