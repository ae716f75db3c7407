//! `protocol: auto` against a slow stdio server: one that answers `server/discover` only after
//! the client gave up waiting for it (rmcp's `Auto` waits 10 s) and fell back to `initialize`.
//! The mock holds its answer to the discover request until `initialize` arrives and sends it
//! just before `initialize`'s own answer (`--discover-late`), so the late answer is always in
//! the window, whatever the machine's load.
//!
//! What the old code did, for the record: the late answer reached rmcp's handshake, which
//! failed the attempt on it ("server/discover failed: conflict initialized response id: expected
//! 1, got 0" for a result, "uncorrelated error response" for an error); the next attempt, which
//! asks `initialize` at once, connected. Reported against a Python server on a loaded machine.

use std::time::Duration;

use crate::common::{call, stdio_mock};
use mcp_mock_server::Whoami;
use mcp_resilient::{ConnectionState, Supervisor, ToolRegistry};
use serde_json::json;

/// How long the first attempt may take to end one way or the other: rmcp's 10 s discover
/// timeout plus the rest of the handshake and the listing, with room for a loaded machine. It
/// bounds a hang; the outcome is read from the state, not from the time.
const FIRST_ATTEMPT: Duration = Duration::from_secs(90);

/// The first attempt of a supervisor on a server that answers `server/discover` late with
/// `shape` becomes ready on 2025-11-25, on the child that was asked both.
async fn first_attempt_survives_a_late_discover_answer(shape: &str) {
    let config = stdio_mock("late", &["--discover-refusal", shape, "--discover-late"])
        .connect_timeout(FIRST_ATTEMPT);
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(config, &registry).expect("valid config");
    let mut watch = server.watch();
    let seen = tokio::time::timeout(
        FIRST_ATTEMPT,
        watch.wait_for(|status| !matches!(status.state, ConnectionState::Connecting { .. })),
    )
    .await
    .unwrap_or_else(|_| panic!("{shape}: the first attempt did not end within {FIRST_ATTEMPT:?}"))
    .expect("the supervisor runs");
    let state = seen.state;
    assert!(
        matches!(state, ConnectionState::Ready { generation, ref protocol }
            if generation == 1 && protocol == "2025-11-25"),
        "{shape}: the first attempt must connect: {state:?}"
    );
    let result = call(&registry, "late", "whoami", json!({})).await;
    let who = Whoami::from_result(&result).expect("a whoami result");
    let count = |m: &str| who.methods.get(m).copied().unwrap_or(0);
    assert_eq!(
        (count("server/discover"), count("initialize")),
        (1, 1),
        "{shape}: one child asked once and fell back once: {:?}",
        who.methods
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_late_empty_result_to_discover_does_not_fail_the_fallback() {
    first_attempt_survives_a_late_discover_answer("empty-result").await;
}

#[tokio::test]
async fn a_late_method_not_found_to_discover_does_not_fail_the_fallback() {
    first_attempt_survives_a_late_discover_answer("error:-32601").await;
}
