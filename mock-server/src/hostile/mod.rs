//! Hostile mode: servers that answer, but answer badly — too much, malformed, or not quite to
//! the protocol. Each area of misbehaviour has its own module; the binary picks a kind with
//! `--hostile KIND` ([`run`]), tests start one in-process.
//!
//! Every hostile server binds 127.0.0.1 only, and every flood it can send is bounded in bytes or
//! time and stops by itself.

pub(crate) mod replies;

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
