//! What `tools` and `call` say while they wait for their server: on a terminal, one line
//! rewritten in place and erased when the wait ends; otherwise one line per state change.
//!
//! # Invariants
//!
//! 1. A server that is ready at once gets no line: on a terminal the first attempt is shown
//!    only after [`FIRST_LINE_AFTER`]; elsewhere the first line is the first failure.
//! 2. Each status is taken once (by its `seq`), whether it came from the watch or was read.
//! 3. The failure that ends the wait is not said here: the command's error says it, once. The
//!    line on a terminal is erased when this is dropped, before that error is printed.
//! 4. Server text (a cause's detail) and URLs reach the terminal only through
//!    [`safe::status`]: redacted and escaped.

use std::time::Duration;

use mcp_resilient::{
    ConnectionState, Status,
    state::{Death, Reason},
};

use super::refusal::{Target, is_refusal};
use crate::{output::human, safe, status_line};

/// How long a terminal shows nothing while the first attempt is under way: most servers are
/// ready sooner, and a line that flashes and vanishes is noise.
pub(crate) const FIRST_LINE_AFTER: Duration = Duration::from_millis(300);

/// The most characters of a cause's detail a line shows.
const DETAIL_CHARS: usize = 120;

/// The prefix of every line, as of our other messages.
const PREFIX: &str = "mcp-resilient";

/// What a waiting command has said so far. Owned by the command's wait.
pub(crate) struct Progress {
    target: Target,
    /// Rewrite one line in place (stderr is a terminal), not a line per change.
    in_place: bool,
    /// The `seq` of the last status taken (invariant 2).
    seen: u64,
    /// Something was said: a plain wait that ends ready says so too.
    said: bool,
    /// The last death seen: what a wait that ran out gives as its reason.
    last_death: Option<Death>,
}

impl Progress {
    pub(crate) fn new(target: Target) -> Progress {
        Progress {
            target,
            in_place: status_line::is_terminal(),
            seen: 0,
            said: false,
            last_death: None,
        }
    }

    /// Whether `status` is newer than the last one taken.
    pub(crate) fn is_new(&self, status: &Status) -> bool {
        status.seq > self.seen
    }

    /// Takes `status` and says what it means for the wait; nothing when it was taken before.
    pub(crate) fn take(&mut self, status: &Status) {
        if !self.is_new(status) {
            return;
        }
        self.seen = status.seq;
        if let ConnectionState::Reconnecting { death, .. } | ConnectionState::Failed { death, .. } =
            &status.state
        {
            self.last_death = Some(death.clone());
        }
        let say = match &status.state {
            ConnectionState::Connecting { attempt: 1 } => false,
            ConnectionState::Connecting { .. } => self.in_place,
            ConnectionState::Reconnecting { .. } => true,
            // Said by `ready`, once the server takes calls.
            _ => false,
        };
        if let Some(text) = say.then(|| line(&self.target, &status.state)).flatten() {
            self.say(&text);
        }
    }

    /// The first attempt has taken [`FIRST_LINE_AFTER`]: a terminal shows that it is under way.
    pub(crate) fn still_connecting(&mut self) {
        if self.in_place && !self.said {
            let text = line(&self.target, &ConnectionState::Connecting { attempt: 1 });
            if let Some(text) = text {
                self.say(&text);
            }
        }
    }

    /// The server takes calls: a wait that said something says it ended (a terminal's line is
    /// erased instead, when this is dropped).
    pub(crate) fn ready(&mut self) {
        if self.said && !self.in_place {
            let text = format!("connected to {}", self.target.shown);
            self.say(&text);
        }
    }

    pub(crate) fn target(&self) -> &Target {
        &self.target
    }

    /// The last death seen while waiting.
    pub(crate) fn last_death(&self) -> Option<&Death> {
        self.last_death.as_ref()
    }

    fn say(&mut self, text: &str) {
        safe::status(PREFIX, text, self.in_place);
        self.said = true;
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if self.in_place {
            status_line::clear();
        }
    }
}

/// The line that says `state` of a wait for `target`, if it has one.
fn line(target: &Target, state: &ConnectionState) -> Option<String> {
    let to = &target.shown;
    Some(match state {
        ConnectionState::Connecting { attempt: 1 } => format!("connecting to {to}"),
        ConnectionState::Connecting { attempt } => format!("connecting to {to}: attempt {attempt}"),
        ConnectionState::Reconnecting {
            reason: Reason::ConnectionFailed,
            death,
            attempt,
            delay,
        } => format!(
            "connecting to {to}: attempt {} failed ({}); next in {}",
            attempt.saturating_sub(1),
            why(death),
            human(*delay)
        ),
        ConnectionState::Reconnecting { death, delay, .. } => format!(
            "connecting to {to}: connection lost ({}); next attempt in {}",
            why(death),
            human(*delay)
        ),
        _ => return None,
    })
}

/// A death in a few words: `connection refused`, or its cause and the start of its detail.
pub(crate) fn why(death: &Death) -> String {
    if is_refusal(death) {
        return "connection refused".to_owned();
    }
    let first = death.detail.lines().next().unwrap_or("");
    let mut detail: String = first.chars().take(DETAIL_CHARS).collect();
    if detail.len() < first.len() {
        detail.push('…');
    }
    format!("{}: {detail}", death.cause)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_resilient::state::Cause;

    fn target() -> Target {
        Target {
            shown: "http://127.0.0.1:8000/mcp".to_owned(),
            address: Some("127.0.0.1:8000".to_owned()),
        }
    }

    fn failed(attempt: u32, detail: &str) -> ConnectionState {
        ConnectionState::Reconnecting {
            reason: Reason::ConnectionFailed,
            death: Death::new(Cause::ConnectFailed, detail),
            attempt,
            delay: Duration::from_millis(1200),
        }
    }

    #[test]
    fn a_failed_attempt_names_its_number_its_cause_and_the_next_delay() {
        let refused = failed(4, "GET failed: Connection refused (os error 111)");
        assert_eq!(
            line(&target(), &refused).as_deref(),
            Some(
                "connecting to http://127.0.0.1:8000/mcp: attempt 3 failed (connection refused); \
                 next in 1.2 s"
            )
        );
        let timed_out = failed(2, "initialize timed out\nmore");
        let text = line(&target(), &timed_out).unwrap_or_default();
        assert!(
            text.contains("attempt 1 failed (connect_failed: initialize timed out); next in"),
            "{text}"
        );
    }

    #[test]
    fn a_long_detail_is_cut() {
        let death = Death::new(Cause::ConnectFailed, "x".repeat(500));
        let text = why(&death);
        assert!(text.ends_with('…') && text.chars().count() < 150, "{text}");
    }
}
