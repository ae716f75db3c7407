//! What the test binaries (`it`, `telemetry`, `soak`) and the benchmark share: the mock server
//! as a real child process ([`process::MockProcess`]) and a bounded wait for a supervisor's
//! state. Each includes this folder with `#[path]` (the tests through `it/common/`); there is
//! no test-helper crate because everything here runs this package's own binary.
//!
//! Every operation comes twice: `try_…` returns what went wrong, for the benchmark, which reports
//! a failed section and goes on; the plain one panics with it, for a test.
#![allow(dead_code, unreachable_pub)]

pub mod process;

use std::time::{Duration, Instant};

use mcp_resilient::{ConnectionState, StatusWatch};

/// The limit of every wait in the tests: generous, so a loaded 2-core CI machine passes; a hang
/// still fails the test instead of the whole run.
pub const LIMIT: Duration = Duration::from_secs(20);

/// The CLI binary of this package, whose hidden `mock-server` subcommand runs the mock server.
pub fn mock_binary() -> &'static str {
    env!("CARGO_BIN_EXE_mcp-resilient")
}

/// Waits until the state satisfies `want`, at most `limit`; returns it and when it was seen.
pub async fn try_wait_state(
    rx: &mut StatusWatch,
    limit: Duration,
    mut want: impl FnMut(&ConnectionState) -> bool,
) -> Result<(ConnectionState, Instant), String> {
    let seen = tokio::time::timeout(limit, rx.wait_for(|status| want(&status.state))).await;
    match seen {
        Ok(Some(status)) => Ok((status.state, Instant::now())),
        Ok(None) => Err("stopped before the state was reached".into()),
        Err(_) => Err(format!(
            "state not reached within {limit:?}; last: {:?}",
            rx.status()
        )),
    }
}

/// Waits until the state satisfies `want`, at most [`LIMIT`].
pub async fn wait_state(
    rx: &mut StatusWatch,
    want: impl FnMut(&ConnectionState) -> bool,
) -> ConnectionState {
    match try_wait_state(rx, LIMIT, want).await {
        Ok((state, _)) => state,
        Err(why) => panic!("{why}"),
    }
}
