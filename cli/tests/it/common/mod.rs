//! Shared helpers of the integration tests: the mock server as a real child process (from
//! `tests/support/`, which the benchmark shares), fast policies, and waits that always have a
//! deadline.
#![allow(dead_code, unreachable_pub)]

pub mod host;
pub mod raw;
#[path = "../../support/mod.rs"]
mod support;

// The soak and telemetry binaries include this module too and use only some of them.
#[allow(unused_imports)]
pub use support::{
    LIMIT, call, echo, era_2025, fast, init_tracing, lost, mock_binary, no_probe_missed,
    opens_session, peak, process, ready_generation, serve, starts_attempt, until, wait_event,
    wait_state, whoami,
};

use std::path::Path;

use mcp_resilient::ServerConfig;

/// A stdio server config for the mock server with millisecond policies.
pub fn stdio_mock(name: &str, extra: &[&str]) -> ServerConfig {
    let mut args = vec!["mock-server", "--transport", "stdio"];
    args.extend_from_slice(extra);
    fast(ServerConfig::stdio(name, mock_binary()).args(args))
}

/// A stdio server config that runs `script` with `sh -c` (to count or break spawns).
pub fn shell(name: &str, script: &str) -> ServerConfig {
    fast(ServerConfig::stdio(name, "sh").args(["-c", script]))
}

/// True while a process with this pid exists and is not a zombie.
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Number of lines in a file (0 if it does not exist).
pub fn line_count(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|s| s.lines().count())
        .unwrap_or(0)
}
