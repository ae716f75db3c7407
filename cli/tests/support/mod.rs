//! What the test binaries (`it`, `telemetry`, `soak`) and the benchmark share: the mock server
//! as a real child process ([`process::MockProcess`]), `serve`'s stderr and address
//! ([`serve`]), and a bounded wait for a supervisor's state. Each includes this folder with
//! `#[path]` (the tests through `it/common/`); there is no test-helper crate because everything
//! here runs this package's own binary.
//!
//! Every operation comes twice: `try_…` returns what went wrong, for the benchmark, which reports
//! a failed section and goes on; the plain one panics with it, for a test.
#![allow(dead_code, unreachable_pub)]

pub mod process;
pub mod serve;

// What needs no binary is the library's, beside its own integration tests (tests/support/ at
// the repository's root): the limit of every wait, the waits, fast policies.
#[path = "../../../tests/support/mod.rs"]
mod library;
pub use library::*;

/// The CLI binary of this package, whose hidden `mock-server` subcommand runs the mock server.
pub fn mock_binary() -> &'static str {
    env!("CARGO_BIN_EXE_mcp-resilient")
}

// The mock's request log (`MockProcess::try_requests`), read the same way by the tests and the
// benchmark.

/// Whether a recorded request starts an attempt: `GET /sse` (legacy), or a `POST` of
/// `initialize` (2025) or `server/discover` (2026-07-28, which has no sessions) that is not a
/// direct heartbeat probe (string ids `mcp-resilient-probe-N`). The one probe in ten that goes
/// through rmcp's session is counted too: at most N / 3,000 per 100 ms at the 30 s heartbeat.
pub fn starts_attempt(kind: &str, r: &serde_json::Value) -> bool {
    if kind == "sse" {
        return opens_session(kind, r);
    }
    let handshake = r["rpc_methods"].as_array().is_some_and(|m| {
        m.iter()
            .any(|m| m == "initialize" || m == "server/discover")
    });
    r["method"] == "POST"
        && handshake
        && !r["body"]
            .as_str()
            .is_some_and(|b| b.contains("mcp-resilient-probe-"))
}

/// Whether a recorded request opens a session: `GET /sse` (legacy) or a `POST /mcp` without a
/// session id (Streamable HTTP `initialize`).
pub fn opens_session(kind: &str, r: &serde_json::Value) -> bool {
    match kind {
        "sse" => r["method"] == "GET" && r["path"] == "/sse",
        _ => {
            r["method"] == "POST"
                && r["path"] == "/mcp"
                && r["headers"].get("mcp-session-id").is_none()
        }
    }
}

/// The most timestamps (µs) inside any window of `window_us` starting at one of them.
pub fn peak(mut times: Vec<u64>, window_us: u64) -> usize {
    times.sort_unstable();
    let mut best = 0;
    let mut start = 0;
    for end in 0..times.len() {
        while times[end] - times[start] >= window_us {
            start += 1;
        }
        best = best.max(end - start + 1);
    }
    best
}
