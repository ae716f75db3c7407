//! The `mcp-mock-server` binary; see the library docs for arguments and behaviour.

use std::process::ExitCode;

fn main() -> ExitCode {
    mcp_mock_server::main_with_args(std::env::args().skip(1))
}
