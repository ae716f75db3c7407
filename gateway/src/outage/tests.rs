//! The outage paragraph: what it says for a failure, whether the call ran, and what is next.

use super::*;
use mcp_resilient::state::{Cause, Death, Reason};

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
         The call was not run. It had no effect and can be sent again. \
         Reconnection attempt 2 starts within 1.5 s of the failure."
    );
}

#[test]
fn a_call_lost_in_flight_says_it_may_have_run() {
    let error = CallError::ConnectionLost {
        server: "db".into(),
        generation: Generation::new(3).expect("a generation"),
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

/// A call lost to a reset connection is answered before the supervisor has taken in the
/// death: the state still names the lost generation, which is not a recovery.
#[test]
fn a_ready_state_that_names_the_lost_generation_is_not_called_connected_again() {
    let lost = CallError::ConnectionLost {
        server: "db".into(),
        generation: Generation::new(3).expect("a generation"),
        detail: "connection reset".into(),
        may_have_run: true,
    };
    let ready = |generation| Standing {
        state: ConnectionState::Ready {
            generation: Generation::new(generation).expect("a generation"),
            protocol: "2025-11-25".into(),
        },
        revive_in: None,
    };
    let text = explain("db", &lost, &ready(3));
    assert!(
        text.ends_with("Its connection has just ended; when it is tried again is not known yet."),
        "{text}"
    );
    assert!(!text.contains("connected again"), "{text}");
    let text = explain("db", &lost, &ready(4));
    assert!(
        text.ends_with("It is connected again, as generation 4."),
        "{text}"
    );
    let slow = CallError::Timeout {
        server: "db".into(),
        phase: CallPhase::Answer,
        after: Duration::from_secs(5),
    };
    let text = explain("db", &slow, &ready(3));
    assert!(text.ends_with("It is connected (generation 3)."), "{text}");
}

#[test]
fn durations_read_like_speech() {
    assert_eq!(seconds(Duration::from_millis(800)), "800 ms");
    assert_eq!(seconds(Duration::from_millis(2500)), "2.5 s");
    assert_eq!(seconds(Duration::from_secs(30)), "30 s");
}
