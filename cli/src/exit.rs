//! The exit codes of the CLI contract (README, "Command line"), and [`fail`], which says why.

use std::process::ExitCode;

use crate::safe;

pub(crate) const OK: u8 = 0;
pub(crate) const TOOL_ERROR: u8 = 1;
pub(crate) const USAGE: u8 = 2;
pub(crate) const CONNECT: u8 = 3;
// A command ended by SIGINT or SIGTERM exits 128 + the signal's number (130, 143), as the
// shell reports a process the signal killed.

/// Says `message` on stderr (redacted and escaped) and returns `code`.
pub(crate) fn fail(code: u8, message: impl std::fmt::Display) -> ExitCode {
    safe::eprint("mcp-resilient", message);
    ExitCode::from(code)
}
