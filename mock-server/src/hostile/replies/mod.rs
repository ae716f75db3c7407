//! Hostile replies: a small hand-written JSON-RPC server (initialize era) whose answers are too
//! big, never end, answer what was never asked, answer twice, or are not JSON.
//!
//! It answers `initialize`, `ping`, `tools/list` (the tools `echo` and `broken`, or pages) and
//! `tools/call` (every tool echoes its `text` argument), refuses `server/discover` and every other method with `-32601` (so a client on
//! `protocol: auto` falls back to `initialize`), and ignores notifications. Per [`ReplyKind`]:
//!
//! | kind | what changes |
//! |---|---|
//! | `huge-pages` | `tools/list` pages of about `page_bytes` of JSON each (tools of ~1 KiB with 10-property schemas), with a next cursor until `pages` pages |
//! | `endless-pages` | `tools/list` pages of one tool each, and always a next cursor (it stops after a million pages) |
//! | `stray-response` | every answer (`initialize` and `server/discover` too) follows a response to an id never sent |
//! | `duplicate-response` | every answer (`initialize` and `server/discover` too) is sent twice |
//! | `malformed-json` | every `tools/call` answer follows a line that is not JSON; the tool `broken` gets only that line |
//! | `list-changed-flood` | each of the first two `tools/list` answers follows `list_changed` `notifications/tools/list_changed`, written at once; every `tools/call` answers how many lists and notifications there were so far (`{"lists": …, "listChanged": …}`) |
//!
//! On stdio each message is one line, and the messages of one answer go out in one write. On
//! Streamable HTTP (`POST /mcp`, no session) one message
//! is an `application/json` body, several are one `text/event-stream` response; `GET` and
//! `DELETE` answer 405.
//!
//! # Invariants
//!
//! 1. Nothing is sent that was not asked for by a request: a page is built only when listed, so
//!    the bytes a client receives are bounded by what it asks for (a flood, by its count times
//!    two).
//! 2. In the page and malformed kinds, the handshake is answered like a real server's; the
//!    stray and duplicate kinds misbehave from the first answer on.

mod options;
mod pages;
mod script;
mod serve;

use std::process::ExitCode;

pub(crate) use options::PageArgs;
pub use options::{ReplyKind, ReplyOptions};
pub use serve::HostileReplies;

use script::Script;

/// Runs the binary's `--hostile KIND --transport stdio` for a reply kind, until stdin ends.
pub(crate) async fn run_stdio(options: ReplyOptions) -> ExitCode {
    serve::stdio(Script::new(options)).await
}

/// Runs the binary's `--hostile KIND --transport http` for a reply kind, until a signal.
pub(crate) async fn run_http(options: ReplyOptions) -> ExitCode {
    serve::http_main(options).await
}
