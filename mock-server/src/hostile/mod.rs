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
//! - [`replies`]: bad replies on stdio and Streamable HTTP (huge and endless tool pages, stray
//!   and duplicate responses, malformed JSON).
//! - [`sse`]: legacy HTTP+SSE (invalid UTF-8, a newline flood, an endless line, malformed
//!   JSON).
//!
//! [`Faults`]: crate::Faults

pub(crate) mod discover;
pub(crate) mod replies;
pub mod sse;

use std::process::ExitCode;

use crate::args::Args;

/// Runs the hostile kind named by `--hostile`, in the transport of `--transport`.
pub(crate) async fn run(kind: &str, args: &Args) -> ExitCode {
    if let Some(kind) = replies::ReplyKind::parse(kind) {
        return replies::run(kind, args).await;
    }
    eprintln!("mcp-mock-server: unknown hostile kind {kind:?}");
    ExitCode::from(2)
}
