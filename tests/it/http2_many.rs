//! Streamable HTTP over HTTP/2 with more sessions on one origin than 64 connections at the
//! server's stream limit hold: the origin's set opens as many connections as the sessions'
//! streams need (within the process's descriptor budget, far above them here), every session
//! comes up and answers. Counted by the mock, as in `http2.rs`.

use mcp_resilient::{Supervisor, ToolRegistry};

use crate::{
    common::LIMIT,
    http2::{config, echo, mock, shutdown},
};

/// 150 sessions of 2025 each hold one standalone `GET` for life; at two streams per connection
/// they need 75 connections at least, more than the 64 the set once stopped at. Opening a
/// hundred connections in a debug build takes a while, and a session whose `initialize` waited
/// through two hedge intervals meanwhile comes up on its second generation: what is asserted is
/// that every session comes up and answers, not on which generation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_sessions_than_64_connections_hold_all_come_up_and_answer() {
    const SESSIONS: usize = 150;
    let server = mock(Some(2), false).await;
    let registry = ToolRegistry::new();
    let supervisors: Vec<Supervisor> = (0..SESSIONS)
        .map(|i| Supervisor::spawn(config(&format!("s{i}"), &server), &registry).expect("spawns"))
        .collect();
    for supervisor in &supervisors {
        supervisor.wait_ready(LIMIT).await.expect("ready");
    }
    for i in 0..SESSIONS {
        echo(&registry, &format!("s{i}"), "many").await;
    }
    let wire = server.faults().wire();
    assert!(
        wire.http2_connections >= (SESSIONS / 2) as u64,
        "{SESSIONS} standalone streams at two per connection: {wire:?}"
    );
    assert!(wire.http2_connections > 64, "{wire:?}");
    assert_eq!(wire.http1_requests, 0, "{wire:?}");
    assert_eq!(wire.refused_streams, 0, "{wire:?}");
    shutdown(supervisors).await;
}
