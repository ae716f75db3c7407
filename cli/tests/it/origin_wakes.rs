//! Liveness per origin wakes a group, not each of its sessions: N idle Streamable HTTP sessions
//! to one endpoint rest in their group while its answers are fresh, and the group's one timer
//! hands its probe to one of them each interval (`src/supervisor/session/origin_rest.rs`).
//! Counted through the library's test hook (`Supervisor::origin_wakes`), never by timing: the
//! heartbeat wake-ups in a window are bounded by a small number per interval plus a few per
//! probe sent, plus N for each group probe that went unanswered (that wakes every resting
//! member, on purpose). Each session waking on its own timer every interval is N per interval,
//! several times the bound.

use std::time::Duration;

use mcp_mock_server::{MockOptions, MockServer, MockTransport};
use mcp_resilient::{
    ServerConfig, Supervisor, ToolRegistry,
    config::{Heartbeat, HeartbeatScope},
};

use crate::common::{LIMIT, era_2025, fast, until};

const N: u64 = 32;
const INTERVALS: u64 = 8;

#[tokio::test]
async fn the_heartbeat_wake_ups_of_a_group_are_bounded_by_its_probes_not_its_sessions() {
    let interval = Duration::from_millis(300);
    let server = MockServer::start(MockOptions {
        transport: MockTransport::Http,
        ..Default::default()
    })
    .await
    .expect("mock server starts");
    let url = url::Url::parse(&server.http_url()).expect("a URL");
    // Own checks rare (once in 1,000 intervals); a probe timeout of most of the interval and
    // three misses to death, so that a loaded machine's slow answer ends nothing.
    let beat = Heartbeat::default()
        .interval(interval)
        .timeout(interval * 9 / 10)
        .failures(3)
        .scope(HeartbeatScope::Origin)
        .session_check_every(1000);
    let registry = ToolRegistry::new();
    let mut all = Vec::new();
    for i in 0..N {
        let config = era_2025(fast(ServerConfig::http(format!("w{i}"), server.http_url())));
        let supervisor =
            Supervisor::spawn(config.heartbeat(beat.clone()), &registry).expect("spawns");
        assert_eq!(supervisor.wait_ready(LIMIT).await.expect("ready").get(), 1);
        all.push(supervisor);
    }
    // Each session lies down after its first turn; all but the one probing for the group rest.
    until("the sessions rest in their group", || {
        Supervisor::origin_wakes(&url).2 >= N - 1
    })
    .await;
    server.faults().clear_requests();
    let (wakes_before, unanswered_before, _) = Supervisor::origin_wakes(&url);
    // A counting window, not a synchronization.
    tokio::time::sleep(interval * INTERVALS as u32).await;
    let (wakes_after, unanswered_after, _) = Supervisor::origin_wakes(&url);
    let probes = server
        .faults()
        .requests()
        .iter()
        .filter(|r| r.rpc_methods == ["ping"])
        .count() as u64;
    let wakes = wakes_after - wakes_before;
    let unanswered = unanswered_after - unanswered_before;
    assert!(wakes >= 1, "the group's timer ticked");
    assert!(probes >= 1, "the group was probed");
    // Per interval: the timer when the answer goes stale and a probe timeout later, the member
    // it hands the probe to; a slow machine adds a tick and a member per extra probe.
    let bound = 4 * (INTERVALS + 2) + 3 * probes + N * unanswered;
    assert!(
        wakes <= bound,
        "{wakes} wake-ups in {INTERVALS} intervals, bound {bound} ({probes} probes, {unanswered} unanswered)"
    );
    for supervisor in &all {
        assert_eq!(supervisor.status().generation.map(|g| g.get()), Some(1));
    }
    for supervisor in all {
        supervisor.shutdown().await;
    }
}
