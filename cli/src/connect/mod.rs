//! How `tools` and `call` get a ready server, or say in one message why they could not.
//!
//! A one-shot command follows its supervisor's status while it waits (`progress`): a person
//! sees what it is waiting for, not a log line per retry. It stops at once on a permanent
//! refusal (`unauthorized`, `rejected`), which the supervisor reports as `failed`, and on a
//! connection that nothing accepts (`refusal`): a server that is not running is not going to
//! answer the next attempt either, unless the person said they are starting it (`--wait`).
//! Other transient failures (a timeout, a 503) are retried within the connect timeout, or
//! within `--wait` when it is given.
//!
//! A signal ends the wait: the supervisor is shut down, and the command exits 128 + its number.

mod progress;
mod refusal;

use std::{process::ExitCode, time::Duration};

use mcp_resilient::{ConnectionState, Supervisor, ToolRegistry, state::Death};

use crate::{
    args::server::ServerArgs,
    exit::{self, fail},
    output::human,
    signals::Signals,
};
use progress::{FIRST_LINE_AFTER, Progress};
use refusal::{Target, is_refusal};

/// How a wait for the server ended.
enum Ended {
    Ready,
    /// A connection nothing accepted, and no `--wait`.
    Refused,
    /// `failed`, `stopped`, or the time ran out: the state then, and the last death seen.
    NotReady(ConnectionState, Option<Death>),
    Signal,
}

/// Starts the supervisor of `args`' server and waits until it is ready: up to `wait` when the
/// person asked to wait for it (`--wait`), otherwise within the connect timeout and not past a
/// refused connection.
pub(crate) async fn connect(
    args: &ServerArgs,
    wait: Option<Duration>,
    signals: &Signals,
) -> Result<(Supervisor, ToolRegistry), ExitCode> {
    let config = args
        .to_waiting_config(wait)
        .map_err(|e| fail(exit::USAGE, e))?;
    let budget = wait.unwrap_or(config.get_connect_timeout());
    let target = Target::of(&config);
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(config, &registry).map_err(|e| match e {
        mcp_resilient::StartError::Config(e) => fail(exit::USAGE, e),
        other => fail(exit::USAGE, other),
    })?;
    // The progress line is erased (dropped inside `follow`) before anything below is said.
    let ended = follow(
        &server,
        Progress::new(target.clone()),
        wait,
        budget,
        signals,
    )
    .await;
    if !matches!(ended, Ended::Ready) {
        server.shutdown().await;
    }
    let message = match ended {
        Ended::Ready => return Ok((server, registry)),
        Ended::Signal => return Err(ExitCode::from(signals.exit_code())),
        Ended::Refused => refused(&target, None, None),
        Ended::NotReady(state, last) => not_ready(&target, &state, last.as_ref(), wait, budget),
    };
    Err(fail(exit::CONNECT, message))
}

/// Follows the status until the server is ready, refused (without `wait`), failed, or `budget`
/// has elapsed, saying what it waits for on the way.
async fn follow(
    server: &Supervisor,
    mut progress: Progress,
    wait: Option<Duration>,
    budget: Duration,
    signals: &Signals,
) -> Ended {
    let mut watch = server.watch();
    let ready = server.wait_ready(budget);
    let first_line = tokio::time::sleep(FIRST_LINE_AFTER);
    tokio::pin!(ready, first_line);
    let (mut watching, mut first_line_due) = (true, true);
    // Read, not only watched: an attempt may have failed before the watch was made.
    let mut status = watch.status();
    loop {
        // A refusal that ends the command is said by its error alone (`progress` invariant 3).
        if progress.is_new(&status)
            && wait.is_none()
            && progress.target().address.is_some()
            && let ConnectionState::Reconnecting { death, .. } = &status.state
            && is_refusal(death)
        {
            return Ended::Refused;
        }
        progress.take(&status);
        tokio::select! {
            biased;
            () = signals.stop.cancelled() => return Ended::Signal,
            ready = &mut ready => return match ready {
                Ok(_) => {
                    progress.ready();
                    Ended::Ready
                }
                Err(not_ready) => Ended::NotReady(not_ready.status.state, progress.last_death().cloned()),
            },
            changed = watch.changed(), if watching => match changed {
                Some(next) => status = next,
                // Stopped: `wait_ready` returns it.
                None => watching = false,
            },
            () = &mut first_line, if first_line_due => {
                first_line_due = false;
                progress.still_connecting();
            }
        }
    }
}

/// The message for a connection that nothing accepted at the target's address: how long the
/// command waited for it, if the time ran out, and the way to wait for the server when the
/// person did not ask to.
fn refused(target: &Target, within: Option<Duration>, wait: Option<Duration>) -> String {
    let (to, at) = (&target.shown, target.address.as_deref().unwrap_or_default());
    let mut message = match within {
        Some(budget) => format!(
            "could not connect to {to}: nothing accepted connections at {at} within {} \
             (connection refused)",
            human(budget)
        ),
        None => {
            format!(
                "could not connect to {to}: nothing accepts connections at {at} (connection refused)"
            )
        }
    };
    if wait.is_none() {
        message.push_str("; start the server, or pass --wait 30s to wait for it");
    }
    message
}

/// The message for a wait that ended without a ready server: the state it ended in (`failed`
/// says why), or the last death seen when the time ran out.
fn not_ready(
    target: &Target,
    state: &ConnectionState,
    last: Option<&Death>,
    wait: Option<Duration>,
    budget: Duration,
) -> String {
    let to = &target.shown;
    let (death, within) = match state {
        ConnectionState::Failed { death, .. } => (death, None),
        ConnectionState::Reconnecting { death, .. } => (death, Some(budget)),
        ConnectionState::Connecting { attempt } => match last {
            Some(death) => (death, Some(budget)),
            None => {
                return format!(
                    "could not connect to {to} within {}: attempt {attempt} got no answer",
                    human(budget)
                );
            }
        },
        other => return format!("could not connect to {to}: {other}"),
    };
    if is_refusal(death) && target.address.is_some() {
        return refused(target, within, wait);
    }
    let within = within.map_or_else(String::new, |d| format!(" within {}", human(d)));
    format!(
        "could not connect to {to}{within}: {}: {}",
        death.cause, death.detail
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_resilient::{
        ServerConfig,
        state::{Cause, Reason},
    };

    const URL: &str = "http://127.0.0.1:8000/mcp";
    const REFUSED: &str = "GET failed: Connection refused (os error 111)";
    const SECOND: Duration = Duration::from_secs(1);

    fn failed(cause: Cause, detail: &str) -> ConnectionState {
        ConnectionState::Failed {
            reason: Reason::ConnectionFailed,
            death: Death::new(cause, detail),
            manual_recovery: false,
            retry_in: None,
        }
    }

    fn says(state: &ConnectionState, last: Option<&Death>, wait: Option<Duration>) -> String {
        let target = Target::of(&ServerConfig::remote("s", URL));
        not_ready(&target, state, last, wait, 30 * SECOND)
    }

    #[test]
    fn a_failed_server_is_said_with_its_cause_and_detail_and_no_time() {
        let rejected = failed(Cause::Rejected, "HTTP 404 Not Found");
        assert_eq!(
            says(&rejected, None, None),
            format!("could not connect to {URL}: rejected: HTTP 404 Not Found")
        );
    }

    #[test]
    fn a_wait_that_ran_out_gives_the_last_death_and_how_long_it_waited() {
        let connecting = ConnectionState::Connecting { attempt: 3 };
        let timed_out = Death::new(Cause::ConnectFailed, "initialize timed out");
        assert_eq!(
            says(&connecting, Some(&timed_out), None),
            format!("could not connect to {URL} within 30 s: connect_failed: initialize timed out")
        );
        assert_eq!(
            says(&connecting, None, None),
            format!("could not connect to {URL} within 30 s: attempt 3 got no answer")
        );
        let refused = Death::new(Cause::ConnectFailed, REFUSED);
        assert_eq!(
            says(&connecting, Some(&refused), Some(30 * SECOND)),
            format!(
                "could not connect to {URL}: nothing accepted connections at 127.0.0.1:8000 \
                 within 30 s (connection refused)"
            )
        );
    }

    #[test]
    fn a_refusal_without_wait_says_how_to_wait() {
        let gave_up = failed(Cause::ConnectFailed, REFUSED);
        let message = says(&gave_up, None, None);
        assert!(
            message.ends_with("at 127.0.0.1:8000 (connection refused); start the server, or pass --wait 30s to wait for it"),
            "{message}"
        );
        assert!(!says(&gave_up, None, Some(SECOND)).contains("--wait"));
    }
}
