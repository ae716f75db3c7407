//! Hostile mode: servers that answer, but answer badly — too much, too fast, malformed, or not
//! quite to the protocol — for the client's bounds on memory, CPU and time. Each kind completes
//! the handshake like a real server first (where the kind allows it), so what is measured is the
//! client's reaction to the bad bytes alone. Each area of misbehaviour has its own module; the
//! binary picks a kind with `--hostile KIND` ([`run`]; legacy SSE kinds with `--transport sse`)
//! or `--discover-refusal SHAPE`, tests start one in-process or through [`Faults`].
//!
//! Every hostile server binds 127.0.0.1 only, and every flood it can send is bounded in bytes or
//! time and stops by itself.
//!
//! - [`discover`]: the ways a pre-2026 server refuses `server/discover`.
//! - [`flood`]: stdio `notifications/message` as fast as the client reads them, up to
//!   `--flood-count` messages of `--flood-bytes` bytes or `--flood-ms` milliseconds, then one
//!   `notifications/resources/list_changed` that marks the end (`--hostile flood`: a change of
//!   the mock itself, requests are served meanwhile).
//! - [`escapes`]: terminal escape sequences in tool names, descriptions, errors, instructions
//!   and stderr (`--hostile escapes`, `escapes-exit`: a change of the mock itself, [`Hostile`]).
//! - [`replies`]: bad replies on stdio and Streamable HTTP (huge and endless tool pages, stray
//!   and duplicate responses, malformed JSON).
//! - [`sse`]: legacy HTTP+SSE (invalid UTF-8, a newline flood, an endless line, malformed
//!   JSON).
//!
//! [`Faults`]: crate::Faults

pub(crate) mod discover;
pub mod escapes;
pub(crate) mod flood;
pub(crate) mod replies;
pub mod sse;

use std::process::ExitCode;

use crate::args::Args;

/// True for a `--hostile` kind that [`run`] serves instead of the mock.
pub(crate) fn is_kind(kind: &str) -> bool {
    replies::ReplyKind::parse(kind).is_some() || sse::SseHostility::from_name(kind).is_some()
}

/// Runs the hostile kind named by `--hostile`, in the transport of `--transport`.
pub(crate) async fn run(kind: &str, args: &Args) -> ExitCode {
    if let Some(kind) = replies::ReplyKind::parse(kind) {
        return replies::run(kind, args).await;
    }
    eprintln!("mcp-mock-server: unknown hostile kind {kind:?}");
    ExitCode::from(2)
}

/// The hostile kinds turned on for one server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hostile {
    /// Tool names, titles, descriptions, results, errors, instructions and stderr carry terminal
    /// escape sequences ([`escapes`]).
    ///
    /// # Default
    /// `false`
    pub escapes: bool,
    /// stdio: write escape sequences to stderr at start, then exit 3 before serving.
    ///
    /// # Default
    /// `false`
    pub escapes_exit: bool,
    /// stdio: flood `notifications/message` once the session is initialized ([`flood`]).
    ///
    /// # Default
    /// `false`
    pub flood: bool,
}

impl Hostile {
    /// True for a kind that changes the mock itself rather than replacing it.
    pub(crate) fn modifies(kind: &str) -> bool {
        matches!(kind, "escapes" | "escapes-exit" | "flood")
    }

    /// Turns on `kind` (the value of one `--hostile`).
    pub(crate) fn enable(&mut self, kind: &str) -> Result<(), String> {
        match kind {
            "escapes" => self.escapes = true,
            "escapes-exit" => self.escapes_exit = true,
            "flood" => self.flood = true,
            other => return Err(format!("--hostile: unknown kind {other:?}")),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::args::Args;

    fn parse(args: &[&str]) -> Result<Args, String> {
        Args::parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn hostile_kinds_are_parsed_and_checked_against_the_mode() {
        let args = parse(&["--hostile", "escapes", "--hostile=escapes-exit"]).expect("valid");
        assert!(args.mods.escapes && args.mods.escapes_exit);
        let remote = parse(&["--hostile", "escapes", "--transport", "http"]).expect("valid");
        assert!(remote.mods.escapes);
        let flood = parse(&["--hostile", "flood", "--flood-count", "5"]).expect("valid");
        assert!(flood.mods.flood && flood.flood.count == 5);
        for bad in [
            &["--hostile", "nope"][..],
            &["--hostile"],
            &["--hostile", "escapes-exit", "--transport", "sse"],
            &["--hostile", "flood", "--transport", "http"],
            &["--flood-count", "5"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
