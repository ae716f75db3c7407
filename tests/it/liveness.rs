//! Liveness per origin (`HeartbeatScope::Origin`) against the in-process mock: many sessions to
//! one endpoint share one probe per interval; a session the server lost while it answers the
//! others is found by its next call and by its own bounded check, and rebuilt alone; a killed
//! server is seen dead by every session; a session whose stream ended probes for itself; the
//! sessions riding one HTTP/2 connection are kept alive by one `PING` per connection, and one
//! that holds its stream there checks itself less often.
//!
//! Counts are the mock's (its request log), and every bound asserted is loose: what the
//! per-session path would send is many times what is allowed here.

use std::{collections::BTreeSet, time::Duration};

use mcp_mock_server::{MockOptions, MockServer, MockTransport, RecordedRequest};
use mcp_resilient::{
    ServerConfig, Supervisor, ToolRegistry,
    config::{Heartbeat, HeartbeatScope, Http2},
};
use serde_json::json;

use crate::common::{LIMIT, call, era_2025, fast, until};

async fn mock(port: u16) -> MockServer {
    let options = MockOptions {
        transport: MockTransport::Http,
        port,
        ..Default::default()
    };
    MockServer::start(options)
        .await
        .expect("mock server starts")
}

/// A 2025 session (a session id, a standalone stream, `ping` probes) with `heartbeat`.
fn config(name: &str, server: &MockServer, heartbeat: Heartbeat) -> ServerConfig {
    let config = era_2025(fast(ServerConfig::http(name, server.http_url())));
    config.heartbeat(heartbeat)
}

/// A heartbeat of `interval` in `scope`, each session checking itself once in `check_every`
/// intervals. The probe timeout is most of the interval, and three misses are death: a loaded
/// machine's slow answer must not end a generation these tests expect to keep.
fn heartbeat(interval: Duration, scope: HeartbeatScope, check_every: u32) -> Heartbeat {
    Heartbeat::default()
        .interval(interval)
        .timeout(interval * 9 / 10)
        .failures(3)
        .scope(scope)
        .session_check_every(check_every)
}

/// Spawns the sessions `names` to `server`, waits until each is ready on generation 1, and
/// returns each with the `Mcp-Session-Id` the server gave it (read from the mock's log: each
/// is spawned alone).
async fn sessions(
    server: &MockServer,
    registry: &ToolRegistry,
    names: &[String],
    heartbeat: &Heartbeat,
) -> Vec<(Supervisor, String)> {
    let mut out = Vec::new();
    for name in names {
        let known: BTreeSet<String> = session_ids(&server.faults().requests());
        let config = config(name, server, heartbeat.clone());
        let supervisor = Supervisor::spawn(config, registry).expect("spawns");
        let generation = supervisor.wait_ready(LIMIT).await.expect("ready");
        assert_eq!(generation.get(), 1);
        let ids = session_ids(&server.faults().requests());
        let new: Vec<String> = ids.difference(&known).cloned().collect();
        assert_eq!(new.len(), 1, "one new session id: {new:?}");
        out.push((supervisor, new[0].clone()));
    }
    out
}

fn session_ids(requests: &[RecordedRequest]) -> BTreeSet<String> {
    requests
        .iter()
        .filter_map(|r| r.headers.get("mcp-session-id").cloned())
        .collect()
}

/// The sessions that sent a `ping` among `requests`, by id.
fn pinged(requests: &[RecordedRequest]) -> BTreeSet<String> {
    let pings = requests.iter().filter(|r| r.rpc_methods == ["ping"]);
    session_ids(&pings.cloned().collect::<Vec<_>>())
}

fn pings(requests: &[RecordedRequest]) -> usize {
    requests
        .iter()
        .filter(|r| r.rpc_methods == ["ping"])
        .count()
}

fn generation(supervisor: &Supervisor) -> Option<u64> {
    supervisor.status().generation.map(|g| g.get())
}

async fn shutdown(sessions: Vec<(Supervisor, String)>) {
    for (supervisor, _) in sessions {
        supervisor.shutdown().await;
    }
}

#[tokio::test]
async fn a_session_lost_while_its_origin_answers_is_rebuilt_by_its_own_bounded_check_alone() {
    let server = mock(0).await;
    let registry = ToolRegistry::new();
    // Each session checks itself once in 3 intervals, whatever the group's answers say.
    let beat = heartbeat(Duration::from_millis(500), HeartbeatScope::Origin, 3);
    let all = sessions(&server, &registry, &names("a", 4), &beat).await;
    let lost = &all[0];
    server.faults().clear_requests();
    server.faults().lose_session(&lost.1);
    // No call, no stream end: only the lost session's own probe can find it.
    until("the lost session rebuilt", || {
        generation(&lost.0) == Some(2)
    })
    .await;
    lost.0.wait_ready(LIMIT).await.expect("ready again");
    // The others' own checks were answered meanwhile (or will be: wait for each): they stay on
    // their first generation.
    until("every other session checked itself", || {
        let pinged = pinged(&server.faults().requests());
        all[1..].iter().all(|(_, id)| pinged.contains(id))
    })
    .await;
    for (supervisor, _) in &all[1..] {
        assert_eq!(generation(supervisor), Some(1), "{:?}", supervisor.status());
    }
    shutdown(all).await;
}

#[tokio::test]
async fn a_call_on_a_session_lost_while_its_origin_answers_goes_to_its_next_generation() {
    let server = mock(0).await;
    let registry = ToolRegistry::new();
    // Checks too rare to come during the test: the call alone finds the loss.
    let beat = heartbeat(Duration::from_secs(2), HeartbeatScope::Origin, 1000);
    let all = sessions(&server, &registry, &names("a", 3), &beat).await;
    server.faults().lose_session(&all[0].1);
    let answer = call(&registry, "a0", "echo", json!({ "text": "after the loss" })).await;
    let text = serde_json::to_string(&answer.content).expect("serializes");
    assert!(text.contains("after the loss"), "{text}");
    assert_eq!(generation(&all[0].0), Some(2), "rebuilt by the call's 404");
    for (supervisor, _) in &all[1..] {
        assert_eq!(generation(supervisor), Some(1), "{:?}", supervisor.status());
    }
    shutdown(all).await;
}

#[tokio::test]
async fn many_sessions_to_one_origin_send_about_one_probe_per_interval() {
    const N: usize = 16;
    const INTERVALS: u32 = 8;
    let interval = Duration::from_millis(250);
    let registry = ToolRegistry::new();
    let origin = mock(0).await;
    let beat = heartbeat(interval, HeartbeatScope::Origin, 1000);
    let grouped = sessions(&origin, &registry, &names("s", N), &beat).await;
    let apart = mock(0).await;
    let beat = heartbeat(interval, HeartbeatScope::Session, 1000);
    let alone = sessions(&apart, &registry, &names("t", N), &beat).await;
    origin.faults().clear_requests();
    apart.faults().clear_requests();
    // A counting window, not a synchronization: INTERVALS intervals in which each idle session
    // of the per-session path probes about INTERVALS times.
    tokio::time::sleep(interval * INTERVALS).await;
    let per_origin = pings(&origin.faults().requests());
    let per_session = pinged(&apart.faults().requests());
    // Every session of the per-session path probed for itself in the window...
    assert_eq!(per_session.len(), N, "{per_session:?}");
    // ...while the group sent far fewer than one probe per session per interval (about one per
    // interval; its first probes included).
    let bound = N * INTERVALS as usize / 2;
    assert!(per_origin < bound, "{per_origin} probes, bound {bound}");
    for (supervisor, _) in grouped.iter().chain(&alone) {
        assert_eq!(generation(supervisor), Some(1), "{:?}", supervisor.status());
    }
    shutdown(grouped).await;
    shutdown(alone).await;
}

/// `n` server names: `prefix0`, `prefix1`, …
fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

#[tokio::test]
async fn a_killed_origin_is_seen_dead_by_every_session_and_all_come_back() {
    let server = mock(0).await;
    let port = server.addr().port();
    let registry = ToolRegistry::new();
    let beat = heartbeat(Duration::from_millis(500), HeartbeatScope::Origin, 1000);
    let all = sessions(&server, &registry, &names("a", 5), &beat).await;
    server.faults().kill();
    until("every session saw the death", || {
        all.iter().all(|(s, _)| !s.status().is_ready())
    })
    .await;
    let _restarted = mock(port).await;
    for (supervisor, _) in &all {
        let generation = supervisor.wait_ready(LIMIT).await.expect("ready again");
        assert!(generation.get() >= 2, "{generation:?}");
    }
    shutdown(all).await;
}

/// A session whose stream ended checks itself at once, by opening its stream again on its own
/// session (an answer is life, a 404 or a refusal its death): no turn of the group stands in
/// for it. (A stream that must wait before it opens again, after `retry:` or a backoff, makes
/// the session probe for itself meanwhile.)
#[tokio::test]
async fn a_session_whose_stream_ended_checks_itself_at_once_by_its_stream() {
    let server = mock(0).await;
    let registry = ToolRegistry::new();
    // An interval longer than the test's limit: no turn of the heartbeat comes during it, so
    // any check is one a session made for itself.
    let beat = Heartbeat::default()
        .interval(LIMIT * 2)
        .scope(HeartbeatScope::Origin);
    let all = sessions(&server, &registry, &names("a", 3), &beat).await;
    server.faults().wait_streams(3).await;
    server.faults().clear_requests();
    // Ends every standalone stream and keeps the sessions.
    server.faults().cut_streams();
    until(
        "every session opened its stream again on its own session",
        || {
            let requests = server.faults().requests();
            let gets: Vec<_> = requests.into_iter().filter(|r| r.method == "GET").collect();
            let reopened = session_ids(&gets);
            all.iter().all(|(_, id)| reopened.contains(id))
        },
    )
    .await;
    server.faults().wait_streams(3).await;
    for (supervisor, _) in &all {
        assert_eq!(generation(supervisor), Some(1), "{:?}", supervisor.status());
    }
    shutdown(all).await;
}

#[tokio::test]
async fn sessions_sharing_an_http2_connection_are_kept_alive_by_one_ping_per_connection() {
    const N: usize = 16;
    const INTERVALS: u32 = 8;
    let interval = Duration::from_millis(250);
    let server = mock(0).await;
    let registry = ToolRegistry::new();
    let beat = heartbeat(interval, HeartbeatScope::Origin, 1000);
    let mut all = Vec::new();
    for name in names("h", N) {
        let config = config(&name, &server, beat.clone()).http2(Http2::PriorKnowledge);
        let supervisor = Supervisor::spawn(config, &registry).expect("spawns");
        assert_eq!(supervisor.wait_ready(LIMIT).await.expect("ready").get(), 1);
        all.push((supervisor, String::new()));
    }
    let before = server.faults().wire();
    // A counting window, as above.
    tokio::time::sleep(interval * INTERVALS).await;
    let after = server.faults().wire();
    let pings = after.pings - before.pings;
    assert!(
        pings >= 1,
        "no HTTP/2 PING in {INTERVALS} intervals: {after:?}"
    );
    // At most one per connection per interval (hyper's keep-alive: a PING after an interval
    // without a frame from the server), where one per session would be N per interval.
    let bound = after.http2_connections * u64::from(INTERVALS + 2);
    assert!(pings <= bound, "{pings} PINGs, bound {bound}: {after:?}");
    assert_eq!(after.http1_requests, 0, "{after:?}");
    shutdown(all).await;
}

/// A session whose standalone stream is held on a `PING`ed HTTP/2 connection checks itself
/// four times less often than one on HTTP/1.1: two groups alike but for the protocol, side by
/// side, counted while the HTTP/1.1 group sends a set number of probes (so load slows both
/// alike).
#[tokio::test]
async fn a_session_holding_its_stream_on_http2_checks_itself_less_often() {
    const N: usize = 6;
    // Each HTTP/1.1 session checks itself every 2 intervals; the group probes once in each.
    let interval = Duration::from_millis(200);
    let beat = heartbeat(interval, HeartbeatScope::Origin, 2);
    let registry = ToolRegistry::new();
    let (h1, h2) = (mock(0).await, mock(0).await);
    let mut all = sessions(&h1, &registry, &names("one", N), &beat).await;
    for name in names("two", N) {
        let config = config(&name, &h2, beat.clone()).http2(Http2::PriorKnowledge);
        let supervisor = Supervisor::spawn(config, &registry).expect("spawns");
        assert_eq!(supervisor.wait_ready(LIMIT).await.expect("ready").get(), 1);
        all.push((supervisor, String::new()));
    }
    tokio::time::timeout(LIMIT, h2.faults().wait_streams(N))
        .await
        .expect("every HTTP/2 session holds its stream");
    h1.faults().clear_requests();
    h2.faults().clear_requests();
    // On HTTP/1.1 about N/2 own checks and the group's probe an interval (4); on HTTP/2 the
    // group's probe alone, whose turn (once in N intervals a member) comes before a held
    // stream's own check (once in 8).
    let counted = 12 * N;
    until("the HTTP/1.1 group sent its probes", || {
        pings(&h1.faults().requests()) >= counted
    })
    .await;
    let held = pings(&h2.faults().requests());
    let wire = h2.faults().wire();
    assert_eq!(wire.http1_requests, 0, "{wire:?}");
    // About 1 against 4 an interval: the per-session rule would send as many as HTTP/1.1.
    assert!(
        held * 2 < counted,
        "{held} probes on HTTP/2 against {counted}"
    );
    assert!(held > 0, "the HTTP/2 group still probes");
    for (supervisor, _) in &all {
        assert_eq!(generation(supervisor), Some(1), "{:?}", supervisor.status());
    }
    shutdown(all).await;
}
