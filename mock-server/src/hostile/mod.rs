//! Hostile mode: servers that answer, but answer badly — too much, too fast, malformed, or not
//! quite to the protocol — for the client's bounds on memory, CPU and time. Each kind completes
//! the handshake like a real server first (where the kind allows it), so what is measured is the
//! client's reaction to the bad bytes alone. Each area of misbehaviour has its own module; the
//! binary picks a kind with `--hostile KIND` (legacy SSE kinds with `--transport sse`) or
//! `--discover-refusal SHAPE`, and each kind's options sit next to it (`hostile/args.rs` gathers them);
//! tests start one in-process or through [`Faults`].
//!
//! Every hostile server binds 127.0.0.1 only, and every flood it can send is bounded in bytes or
//! time and stops by itself.
//!
//! - `discover`: the ways a pre-2026 server refuses `server/discover` (on stdio also late, with
//!   `--discover-late`: after the client gave up waiting and sent `initialize`).
//! - `flood`: stdio `notifications/message` as fast as the client reads them, up to
//!   `--flood-count` messages of `--flood-bytes` bytes or `--flood-ms` milliseconds, then one
//!   `notifications/resources/list_changed` that marks the end (`--hostile flood`: a change of
//!   the mock itself, requests are served meanwhile).
//! - [`escapes`]: terminal escape sequences in tool names, descriptions, errors, instructions
//!   and stderr (`--hostile escapes`, `escapes-exit`: a change of the mock itself, [`Hostile`]).
//! - `replies`: bad replies on stdio and Streamable HTTP (huge and endless tool pages, stray
//!   and duplicate responses, malformed JSON, a `notifications/tools/list_changed` flood).
//! - [`sse`]: legacy HTTP+SSE (invalid UTF-8, a newline flood, an endless line, malformed
//!   JSON).
//!
//! [`Faults`]: crate::Faults

pub(crate) mod args;
pub(crate) mod discover;
pub mod escapes;
pub(crate) mod flood;
pub(crate) mod replies;
pub mod sse;

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
    /// stdio: flood `notifications/message` once the session is initialized (`flood`).
    ///
    /// # Default
    /// `false`
    pub flood: bool,
}

impl Hostile {
    /// The `--hostile` kinds that change the mock itself rather than replacing it.
    pub(crate) const MODS: [&'static str; 3] = ["escapes", "escapes-exit", "flood"];

    /// The changes that `kinds` (the values of every `--hostile`) turn on; other kinds are left
    /// out.
    pub(crate) fn from_kinds<S: AsRef<str>>(kinds: &[S]) -> Self {
        let on = |name: &str| kinds.iter().any(|kind| kind.as_ref() == name);
        Self {
            escapes: on("escapes"),
            escapes_exit: on("escapes-exit"),
            flood: on("flood"),
        }
    }
}
