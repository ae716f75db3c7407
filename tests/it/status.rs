//! One status that never contradicts itself: the status, the events and the calls of a server
//! agree while it is restarted, killed and shut down in a loop on a multi-thread runtime.
//!
//! Readers run on other worker threads than the driver and check, for every change:
//! - the events: sequence numbers only grow, a status announced by an event is already visible
//!   to `status()` (same or newer `seq`), and a status visible before a subscription is never
//!   announced to it;
//! - the tools: a tool set is announced only after the status says its generation is ready;
//! - the calls: a call never fails `Unavailable` with a `ready` state;
//! - `wait_ready`: it never returns a generation whose death was already reported.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Duration,
};

use mcp_mock_server::{MockOptions, MockServer, MockTransport};
use mcp_resilient::state::RecvError;
use mcp_resilient::{
    CallError, ConnectionState, ServerConfig, Status, Supervisor, ToolRegistry,
    config::{Heartbeat, ProtocolChoice, Reconnect},
    state::{Event, Generation},
};
use serde_json::json;

use crate::common::LIMIT;

/// Rounds of one supervisor each, and operations per round: 1,000 in all.
const ROUNDS: usize = 20;
const OPS: usize = 50;

/// Even rounds speak 2026-07-28 (a dropped listen stream ends a generation), odd rounds
/// 2025-11-25 (an expired session does).
fn config(url: String, round: usize) -> ServerConfig {
    let protocol = if round.is_multiple_of(2) {
        ProtocolChoice::V2026_07_28
    } else {
        ProtocolChoice::V2025_11_25
    };
    ServerConfig::http("status", url)
        .protocol(protocol)
        .reconnect(
            Reconnect::default()
                .initial_delay(Duration::from_millis(1))
                .max_delay(Duration::from_millis(20))
                .max_attempts(1000),
        )
        .heartbeat(Heartbeat::disabled())
        // Calls fail at once during an outage: the property below is about those failures.
        .call_wait(Duration::ZERO)
        .call_timeout(Duration::from_secs(10))
        .connect_timeout(Duration::from_secs(10))
        .close_timeout(Duration::from_secs(10))
}

/// What the readers counted, to show they saw something.
#[derive(Default)]
struct Seen {
    states: AtomicU64,
    tool_sets: AtomicU64,
    calls_ok: AtomicU64,
    calls_unavailable: AtomicU64,
    waits: AtomicU64,
}

/// Follows the events of one supervisor until `stopped`, checking them against `status()`.
async fn check_events(server: Supervisor, seen: Arc<Seen>) {
    // A status visible before the subscription is never announced to it again.
    let visible = server.status().seq;
    let mut events = server.events();
    let mut last_seq: Option<u64> = None;
    let mut last_state: Option<Status> = None;
    loop {
        let event = match tokio::time::timeout(LIMIT, events.recv()).await {
            Ok(Ok(event)) => event,
            // Lagging loses events, not order: start again from the status now.
            Ok(Err(RecvError::Lagged(_))) => {
                last_state = None;
                last_seq = None;
                continue;
            }
            Ok(Err(RecvError::Closed)) => return,
            Err(_) => panic!("no event within {LIMIT:?}; status {:?}", server.status()),
        };
        match event {
            Event::State { status, .. } => {
                let now = server.status();
                assert!(
                    now.seq >= status.seq,
                    "an event announced seq {} but status() still reads seq {}: {status:?} vs {now:?}",
                    status.seq,
                    now.seq
                );
                assert!(
                    status.seq > visible,
                    "seq {} was visible before the subscription, and announced to it",
                    status.seq
                );
                if let Some(last) = last_seq {
                    assert!(status.seq > last, "seq went from {last} to {}", status.seq);
                }
                last_seq = Some(status.seq);
                seen.states.fetch_add(1, Ordering::Relaxed);
                let stopped = matches!(status.state, ConnectionState::Stopped);
                last_state = Some(status);
                if stopped {
                    return;
                }
            }
            Event::Tools(change) if !change.tools.is_empty() => {
                if let Some(state) = &last_state {
                    assert_eq!(
                        state.ready(),
                        Some(change.generation),
                        "tools of generation {} announced while the status was {state:?}",
                        change.generation
                    );
                }
                seen.tool_sets.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
    }
}

/// Calls `echo` until told to stop: no call fails `Unavailable` while naming a `ready` state.
async fn check_calls(registry: ToolRegistry, stop: Arc<AtomicBool>, seen: Arc<Seen>) {
    let Ok(echo) = registry.handle("mcp__status__echo") else {
        panic!("echo is registered before the callers start");
    };
    while !stop.load(Ordering::Relaxed) {
        match echo.call(json!({"text": "x"})).await {
            Ok(_) => {
                seen.calls_ok.fetch_add(1, Ordering::Relaxed);
            }
            Err(CallError::Unavailable { state, .. }) => {
                assert!(!state.is_ready(), "unavailable while {state:?}");
                seen.calls_unavailable.fetch_add(1, Ordering::Relaxed);
                tokio::task::yield_now().await;
            }
            // A call lost with its generation, or sent to one just closed: both are honest.
            Err(_) => tokio::task::yield_now().await,
        }
    }
}

/// Drives one round: `OPS` operations that each end the ready generation.
async fn drive(server: &Supervisor, mock: &MockServer, round: usize, seen: &Seen) {
    let mut generation = server.wait_ready(LIMIT).await.expect("ready");
    for op in 0..OPS {
        match op % 3 {
            0 => server.restart().await,
            1 => assert!(
                server.report_failure(generation, "status test"),
                "generation {generation}, just returned by wait_ready, was not current"
            ),
            // The server ends the listen stream (2026) or forgets the session (2025): the
            // client finds out by itself.
            _ if round.is_multiple_of(2) => mock.faults().end_listens(false),
            _ => mock.faults().expire_sessions().await,
        }
        let next = wait_past(server, generation).await;
        seen.waits.fetch_add(1, Ordering::Relaxed);
        generation = next;
    }
}

/// Waits for a ready generation after `old`. `wait_ready` may return `old` itself only while
/// its death has not been reported (a dropped stream takes a moment to be noticed): then the
/// status must still read `old` as ready.
async fn wait_past(server: &Supervisor, old: Generation) -> Generation {
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let generation = match server.wait_ready(left).await {
            Ok(generation) => generation,
            Err(status) => panic!("not ready again after generation {old}: {status:?}"),
        };
        let now = server.status();
        assert!(
            now.generation.is_some_and(|g| g >= generation),
            "wait_ready returned generation {generation} but the status is about an older one: {now:?}"
        );
        if generation > old {
            return generation;
        }
        // Not yet noticed: wait for the status to move on.
        let mut watch = server.watch();
        let moved = tokio::time::timeout_at(deadline, watch.wait_for(|s| s.seq > now.seq)).await;
        assert!(moved.is_ok(), "generation {old} never ended");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn status_events_and_calls_agree_through_a_thousand_restarts_kills_and_shutdowns() {
    crate::common::init_tracing();
    let mock = MockServer::start(MockOptions {
        transport: MockTransport::Http,
        ..Default::default()
    })
    .await
    .expect("mock server starts");
    let seen = Arc::new(Seen::default());
    for round in 0..ROUNDS {
        let registry = ToolRegistry::new();
        let server = Supervisor::spawn(config(mock.http_url(), round), &registry).expect("spawn");
        let events = tokio::spawn(check_events(server.clone(), seen.clone()));
        server.wait_ready(LIMIT).await.expect("ready");
        let stop = Arc::new(AtomicBool::new(false));
        let callers: Vec<_> = (0..2)
            .map(|_| tokio::spawn(check_calls(registry.clone(), stop.clone(), seen.clone())))
            .collect();
        drive(&server, &mock, round, &seen).await;
        // Shut down while the callers still call: they see `stopping` and `stopped`, never
        // `ready`.
        server.shutdown().await;
        assert_eq!(server.status().state, ConnectionState::Stopped);
        stop.store(true, Ordering::Relaxed);
        for caller in callers {
            tokio::time::timeout(LIMIT, caller)
                .await
                .expect("callers stop")
                .expect("no caller saw a contradiction");
        }
        tokio::time::timeout(LIMIT, events)
            .await
            .expect("the event reader reaches `stopped`")
            .expect("no event contradicted the status");
    }
    mock.shutdown().await;
    let waits = seen.waits.load(Ordering::Relaxed);
    assert_eq!(
        waits,
        (ROUNDS * OPS) as u64,
        "every operation was followed through"
    );
    eprintln!(
        "{waits} operations; {} states, {} tool sets, {} calls answered, {} unavailable",
        seen.states.load(Ordering::Relaxed),
        seen.tool_sets.load(Ordering::Relaxed),
        seen.calls_ok.load(Ordering::Relaxed),
        seen.calls_unavailable.load(Ordering::Relaxed),
    );
    assert!(
        seen.calls_ok.load(Ordering::Relaxed) > 0,
        "the callers reached the server"
    );
    assert!(
        seen.tool_sets.load(Ordering::Relaxed) >= ROUNDS as u64,
        "tools were announced"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_ready_never_returns_a_generation_whose_death_was_reported() {
    crate::common::init_tracing();
    let mock = MockServer::start(MockOptions {
        transport: MockTransport::Http,
        ..Default::default()
    })
    .await
    .expect("mock server starts");
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(config(mock.http_url(), 0), &registry).expect("spawn");
    let mut generation = server.wait_ready(LIMIT).await.expect("ready");
    for _ in 0..100 {
        assert!(server.report_failure(generation, "test"));
        // Asked at once, before the supervisor took the death in: never the dead generation.
        let next = server.wait_ready(LIMIT).await.expect("ready again");
        assert!(
            next > generation,
            "wait_ready returned {next} after {generation} died"
        );
        generation = next;
    }
    server.shutdown().await;
    mock.shutdown().await;
}
