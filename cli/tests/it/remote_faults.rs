//! Remote servers behind the faults real deployments add: a gateway that answers 1 in 25 POSTs
//! itself, a path that black-holes and heals, a server that expires every session at once, and
//! a server redeployed from legacy SSE to Streamable HTTP at the same URL.

use std::time::Duration;

use crate::common::*;
use mcp_mock_server::{
    MockOptions, MockServer, MockTransport, PortHold, StatusFault,
    proxy::{GatewayFault, HttpFaultProxy, ProxyMode, TcpProxy},
};
use mcp_resilient::{
    CallError, ConnectionState, ServerConfig, Supervisor, ToolRegistry,
    config::{Heartbeat, Reconnect},
    state::{Cause, Event},
};
use serde_json::json;
use tokio::time::Instant;

async fn mock(opts: MockOptions) -> MockServer {
    MockServer::start(opts).await.expect("mock server starts")
}

fn http_mock() -> MockOptions {
    MockOptions {
        transport: MockTransport::Http,
        ..MockOptions::default()
    }
}

/// 200 calls, 10 ms apart, through one tool handle; returns how many failed.
async fn two_hundred_calls(registry: &ToolRegistry, server: &str) -> usize {
    let echo = registry
        .handle(&format!("mcp__{server}__echo"))
        .expect("echo");
    let mut failed = 0;
    for i in 0..200 {
        if let Err(e) = echo.call(json!({ "text": format!("call {i}") })).await {
            tracing::info!("call {i} failed: {e}");
            failed += 1;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    failed
}

async fn behind_a_flaky_gateway(fault: GatewayFault) -> (usize, u64, Option<u64>) {
    let mock = mock(http_mock()).await;
    let gateway = HttpFaultProxy::start(&format!("http://{}", mock.addr()), None)
        .await
        .expect("gateway starts");
    let registry = ToolRegistry::new();
    let config = fast(ServerConfig::http("gw", gateway.url("/mcp"))).heartbeat(
        Heartbeat::default()
            .interval(Duration::from_secs(2))
            .timeout(Duration::from_millis(500))
            .failures(2),
    );
    let server = Supervisor::spawn(config, &registry).unwrap();
    server.wait_ready(LIMIT).await.expect("ready");
    gateway.set_fault(Some(fault));
    let failed = two_hundred_calls(&registry, "gw").await;
    let generation = server.status().ready().map(u64::from);
    let injected = gateway.injected();
    server.shutdown().await;
    gateway.shutdown().await;
    (failed, injected, generation)
}

fn gateway_fault(status: u16, retry_after: Option<&str>) -> GatewayFault {
    GatewayFault {
        retry_after: retry_after.map(str::to_owned),
        methods: vec!["tools/call".into(), "ping".into()],
        ..GatewayFault::new(status, 25)
    }
}

#[tokio::test]
async fn a_gateway_answering_1_in_25_with_429_and_retry_after_costs_no_call() {
    init_tracing();
    let (failed, injected, generation) =
        behind_a_flaky_gateway(gateway_fault(429, Some("1"))).await;
    assert!(injected >= 8, "faults were injected: {injected}");
    assert_eq!(
        failed, 0,
        "every refused call was waited out and sent again"
    );
    assert_eq!(generation, Some(1), "the session stayed up");
}

#[tokio::test]
async fn a_gateway_answering_1_in_25_with_503_costs_at_most_the_faulted_calls() {
    init_tracing();
    let (failed, injected, generation) = behind_a_flaky_gateway(gateway_fault(503, None)).await;
    assert!(injected >= 8, "faults were injected: {injected}");
    assert!(
        failed as u64 <= injected,
        "{failed} failed calls for {injected} injected faults"
    );
    assert_eq!(generation, Some(1), "the session stayed up");
}

/// A path that black-holes (a half-open NAT entry) and heals. Each attempt may wait a full minute
/// for its handshake, longer than this test's limit: only hedging can bring the server back
/// within it.
async fn heals_after_a_black_hole(kind: &str) {
    let mock = mock(MockOptions::default()).await;
    let proxy = TcpProxy::start(mock.addr()).await.expect("proxy starts");
    let (config, max_delay) = {
        let max_delay = Duration::from_millis(500);
        let base = match kind {
            "sse" => ServerConfig::sse("hole", proxy.url("/sse")),
            _ => ServerConfig::http("hole", proxy.url("/mcp")),
        };
        let config = fast(base)
            .heartbeat(
                Heartbeat::default()
                    .interval(Duration::from_millis(300))
                    .timeout(Duration::from_millis(150))
                    .failures(2),
            )
            .reconnect(
                Reconnect::default()
                    .initial_delay(Duration::from_millis(50))
                    .max_delay(max_delay)
                    .max_attempts(1000),
            )
            .connect_timeout(Duration::from_secs(60));
        (config, max_delay)
    };
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(config, &registry).unwrap();
    server.wait_ready(LIMIT).await.expect("ready");
    let mut state = server.watch();
    let mut events = server.events();
    proxy.set_mode(ProxyMode::BlackHole);
    let lost = wait_state(&mut state, |s| !s.is_ready()).await;
    let ConnectionState::Reconnecting { death, .. } = &lost else {
        panic!("{lost:?}")
    };
    assert_eq!(death.cause, Cause::HeartbeatTimeout, "{death:?}");
    // Let a few attempts start inside the hole, so that one is stuck there when it heals.
    let accepted = proxy.accepted();
    let inside = async {
        while proxy.accepted() < accepted + 3 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(LIMIT, inside)
        .await
        .expect("attempts go on in the hole");
    proxy.set_mode(ProxyMode::Pass);
    let healed = Instant::now();
    let ready = wait_state(&mut state, |s| s.is_ready()).await;
    let after = healed.elapsed();
    tracing::info!(
        "{kind}: ready ({ready:?}) {after:?} after the heal (max_delay {max_delay:?}, bound {:?})",
        max_delay + Duration::from_secs(1)
    );
    // Abandoned attempts are named as such, and none of them is the one that became ready.
    let ConnectionState::Ready { generation, .. } = ready else {
        unreachable!()
    };
    let mut abandoned = Vec::new();
    while let Ok(Some(event)) = events.try_recv() {
        if let Event::State {
            status:
                mcp_resilient::Status {
                    state: ConnectionState::Reconnecting { death, .. },
                    generation: g,
                    ..
                },
            ..
        } = event
            && death.detail.contains("abandoned")
        {
            abandoned.extend(g);
        }
    }
    assert!(
        !abandoned.contains(&generation),
        "{abandoned:?} vs {generation}"
    );
    call(&registry, "hole", "echo", json!({"text": "back"})).await;
    server.shutdown().await;
    proxy.shutdown().await;
}

#[tokio::test]
async fn legacy_sse_heals_after_a_black_hole_without_waiting_out_stuck_attempts() {
    init_tracing();
    heals_after_a_black_hole("sse").await;
}

#[tokio::test]
async fn streamable_http_heals_after_a_black_hole_without_waiting_out_stuck_attempts() {
    init_tracing();
    heals_after_a_black_hole("http").await;
}

#[tokio::test]
async fn a_server_that_expires_every_session_at_once_meets_the_backoff() {
    init_tracing();
    let mock = mock(http_mock()).await;
    let registry = ToolRegistry::new();
    let config = era_2025(fast(ServerConfig::http("forgetful", mock.http_url())))
        .heartbeat(
            Heartbeat::default()
                .interval(Duration::from_millis(100))
                .timeout(Duration::from_millis(80))
                .failures(2),
        )
        .reconnect(
            Reconnect::default()
                .initial_delay(Duration::from_millis(50))
                .max_delay(Duration::from_secs(1))
                .jitter(0.0)
                .max_attempts(10),
        );
    let server = Supervisor::spawn(config, &registry).unwrap();
    server.wait_ready(LIMIT).await.expect("ready");
    let mut events = server.events();
    // Every probe on a session is answered 404: each generation is expired moments after it
    // became ready, and the outage starts afresh each time.
    let mut expire = StatusFault::new(404);
    expire.methods = vec!["ping".into()];
    mock.faults().set_status_fault(Some(expire)).unwrap();
    let mut delays = Vec::new();
    while delays.len() < 3 {
        let (_, death, delay) = lost(&mut events).await;
        assert_eq!(death.cause, Cause::SessionExpired, "{death:?}");
        delays.push(delay);
    }
    assert_eq!(
        delays[0],
        Duration::ZERO,
        "the first expiry is rebuilt at once"
    );
    assert!(
        delays[1] > Duration::ZERO && delays[2] > delays[1],
        "later ones back off: {delays:?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn auto_detects_again_when_a_legacy_server_is_redeployed_as_streamable_http() {
    init_tracing();
    const PATH: &str = "/endpoint";
    // Held for the whole test: between the two servers the port refuses, and stays ours.
    let hold = PortHold::new().expect("a port");
    let port = hold.port();
    let legacy = mock(MockOptions {
        transport: MockTransport::Sse,
        sse_path: PATH.into(),
        port,
        ..MockOptions::default()
    })
    .await;
    let registry = ToolRegistry::new();
    let url = format!("http://127.0.0.1:{port}{PATH}");
    let server = Supervisor::spawn(fast(ServerConfig::remote("moved", &url)), &registry).unwrap();
    server.wait_ready(LIMIT).await.expect("ready on legacy SSE");
    let mut events = server.events();
    assert!(
        legacy.faults().requests().iter().any(|r| r.method == "GET"),
        "legacy SSE was used"
    );
    legacy.shutdown().await;
    let modern = mock(MockOptions {
        transport: MockTransport::Http,
        port,
        mcp_path: PATH.into(),
        ..MockOptions::default()
    })
    .await;
    let generation = ready_generation(&mut events).await;
    assert!(generation >= 2);
    let (boot, _) = whoami(&registry, "moved").await;
    assert_eq!(boot, modern.faults().state().await.boot_id);
    server.shutdown().await;
    drop(hold);
}

#[tokio::test]
async fn a_call_the_server_did_not_run_is_sent_once_more_and_one_that_ran_never() {
    init_tracing();
    // Held for the whole test: while no server runs the port refuses, and stays ours.
    let hold = PortHold::new().expect("a port");
    let port = hold.port();
    let mock = mock_on(port).await;
    let registry = ToolRegistry::new();
    // Unknown sessions (404) are a 2025-era thing.
    let config = era_2025(fast(ServerConfig::http("restarted", mock.http_url())))
        .heartbeat(Heartbeat::disabled());
    let server = Supervisor::spawn(config, &registry).unwrap();
    server.wait_ready(LIMIT).await.expect("ready");
    mock.shutdown().await;
    // The call is made once the client has seen the death (the standalone stream's end, its
    // reopening refused), so it is held for the next generation. Made before, it could go out
    // on a pooled connection the server had just closed, and a reset there is rightly judged
    // "may have run" (the request left): another case, not this one (CI saw it once).
    let mut state = server.watch();
    wait_state(&mut state, |s| !s.is_ready()).await;
    let echo = registry.handle("mcp__restarted__echo").unwrap();
    let held = tokio::spawn(async move { echo.call(json!({"text": "held"})).await });
    let back = mock_on(port).await;
    let outcome = held.await.unwrap();
    let result = outcome.expect("the held call went to the next generation");
    assert!(format!("{result:?}").contains("held"));
    assert_eq!(back.faults().state().await.calls, 1, "sent exactly once");
    // The server restarts between two calls: the next call's session is unknown to it (404), so
    // it did not run, and it goes once to the next generation.
    let port = back.addr().port();
    back.shutdown().await;
    let back = mock_on(port).await;
    let result = call(
        &registry,
        "restarted",
        "echo",
        json!({"text": "after restart"}),
    )
    .await;
    assert!(format!("{result:?}").contains("after restart"));
    assert_eq!(back.faults().state().await.calls, 1, "sent exactly once");
    // A call that did leave (the server died while it ran) is never replayed.
    let sleeping = registry.handle("mcp__restarted__sleep").unwrap();
    let call = tokio::spawn(async move { sleeping.call(json!({"ms": 5000})).await });
    let calls = async {
        while back.faults().state().await.calls < 2 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(LIMIT, calls)
        .await
        .expect("the call arrived");
    back.faults().kill();
    let outcome = call.await.unwrap();
    assert!(
        matches!(
            outcome,
            Err(CallError::ConnectionLost {
                may_have_run: true,
                ..
            })
        ),
        "{outcome:?}"
    );
    server.shutdown().await;
    drop(hold);
}

async fn mock_on(port: u16) -> MockServer {
    mock(MockOptions {
        port,
        ..http_mock()
    })
    .await
}

#[tokio::test]
async fn a_hedged_attempt_that_wins_late_leaves_nothing_scheduled() {
    init_tracing();
    let mock = mock(http_mock()).await;
    // Every request takes 1.5 s, so the first attempt is hedged after 1 s; the gateway in front
    // refuses every later `initialize` with a 503, so each fresh attempt beside it fails at once
    // and a backoff is armed when the first one finally wins.
    mock.faults().set_slow(Duration::from_millis(1500));
    let gateway = HttpFaultProxy::start(&format!("http://{}", mock.addr()), None)
        .await
        .expect("gateway");
    let registry = ToolRegistry::new();
    // The gateway refuses `initialize`: the 2025 handshake.
    let config = era_2025(fast(ServerConfig::http("late", gateway.url("/mcp"))))
        .heartbeat(Heartbeat::disabled())
        .reconnect(
            Reconnect::default()
                .initial_delay(Duration::from_millis(50))
                .max_delay(Duration::from_millis(300))
                .max_attempts(100),
        );
    let server = Supervisor::spawn(config, &registry).unwrap();
    let first_forwarded = async {
        while gateway.forwarded() == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(LIMIT, first_forwarded)
        .await
        .expect("the first initialize reached the server");
    gateway.set_fault(Some(GatewayFault {
        methods: vec!["initialize".into()],
        ..GatewayFault::new(503, 1)
    }));
    let generation = server
        .wait_ready(LIMIT)
        .await
        .expect("the slow attempt wins");
    assert!(
        gateway.injected() > 0,
        "fresh attempts were refused meanwhile"
    );
    mock.faults().set_slow(Duration::ZERO);
    let mut events = server.events();
    // Nothing was left scheduled: no further attempt, no new generation, within several
    // backoff periods.
    let anything = tokio::time::timeout(Duration::from_millis(1500), async {
        loop {
            match events.recv().await {
                Ok(Event::State {
                    status: mcp_resilient::Status { state, .. },
                    ..
                }) => return state,
                Ok(_) => {}
                Err(e) => panic!("{e}"),
            }
        }
    })
    .await;
    assert!(
        anything.is_err(),
        "a state change after ready: {anything:?}"
    );
    assert_eq!(server.status().ready(), Some(generation));
    call(&registry, "late", "echo", json!({"text": "one generation"})).await;
    server.shutdown().await;
    gateway.shutdown().await;
}

#[tokio::test]
async fn a_slow_server_that_answers_every_step_is_never_abandoned() {
    init_tracing();
    let mock = mock(http_mock()).await;
    // Each request takes 800 ms: the handshake (initialize, initialized, tools/list) takes well
    // over the 1 s hedge interval, but every step gets its answer.
    mock.faults().set_slow(Duration::from_millis(800));
    let registry = ToolRegistry::new();
    let config = fast(ServerConfig::http("slow", mock.http_url()))
        .heartbeat(Heartbeat::disabled())
        .reconnect(
            Reconnect::default()
                .initial_delay(Duration::from_millis(50))
                .max_delay(Duration::from_millis(200))
                .max_attempts(3),
        )
        .connect_timeout(Duration::from_secs(15));
    let server = Supervisor::spawn(config, &registry).unwrap();
    let mut events = server.events();
    let generation = server
        .wait_ready(LIMIT)
        .await
        .expect("the slow server connects");
    assert_eq!(
        generation, 1,
        "the first attempt won; nothing was abandoned"
    );
    while let Ok(Some(event)) = events.try_recv() {
        assert!(
            !matches!(
                event,
                Event::State {
                    status: mcp_resilient::Status {
                        state: ConnectionState::Reconnecting { .. }
                            | ConnectionState::Failed { .. },
                        ..
                    },
                    ..
                }
            ),
            "{event:?}"
        );
    }
    server.shutdown().await;
}

#[tokio::test]
async fn giving_up_abandons_a_hedged_attempt_that_could_still_win() {
    init_tracing();
    let mock = mock(http_mock()).await;
    let gateway = HttpFaultProxy::start(&format!("http://{}", mock.addr()), None)
        .await
        .expect("gateway");
    // The first attempt's initialize is held by a hung server; every later initialize is refused
    // by the gateway, so the budget runs out while the first is still in flight.
    mock.faults().hang();
    let registry = ToolRegistry::new();
    let config = era_2025(fast(ServerConfig::http("spent", gateway.url("/mcp"))))
        .heartbeat(Heartbeat::disabled())
        .reconnect(
            Reconnect::default()
                .initial_delay(Duration::from_millis(20))
                .max_delay(Duration::from_millis(100))
                .max_attempts(3),
        );
    let server = Supervisor::spawn(config, &registry).unwrap();
    let forwarded = async {
        while gateway.forwarded() == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(LIMIT, forwarded)
        .await
        .expect("the first initialize arrived");
    gateway.set_fault(Some(GatewayFault {
        methods: vec!["initialize".into()],
        ..GatewayFault::new(503, 1)
    }));
    let mut state = server.watch();
    let failed = wait_state(&mut state, |s| matches!(s, ConnectionState::Failed { .. })).await;
    assert!(
        matches!(failed, ConnectionState::Failed { retry_in: None, .. }),
        "{failed:?}"
    );
    // The held initialize is released: an attempt still alive would now connect.
    mock.faults().unhang();
    let revived = tokio::time::timeout(
        Duration::from_millis(1500),
        state.wait_for(|s| !matches!(s.state, ConnectionState::Failed { .. })),
    )
    .await;
    assert!(
        revived.is_err(),
        "a given-up server came back: {:?}",
        server.status().state
    );
    assert!(registry.snapshot().server("spent").is_none());
    server.shutdown().await;
    gateway.shutdown().await;
}

/// A ready supervisor of a mock of `transport` whose every stream carries a keep-alive comment
/// each 50 ms (bytes that are never a message), probing every `interval` with `timeout`.
async fn chatty(
    transport: MockTransport,
    interval: Duration,
    timeout: Duration,
    failures: u32,
) -> (MockServer, Supervisor) {
    let mock = mock(MockOptions {
        transport,
        sse_keep_alive: Some(Duration::from_millis(50)),
        ..MockOptions::default()
    })
    .await;
    let config = match transport {
        MockTransport::Sse => ServerConfig::sse("chatty", mock.sse_url()),
        _ => era_2025(ServerConfig::http("chatty", mock.http_url())),
    };
    let heartbeat = Heartbeat::default()
        .interval(interval)
        .timeout(timeout)
        .failures(failures);
    let server =
        Supervisor::spawn(fast(config).heartbeat(heartbeat), &ToolRegistry::new()).expect("start");
    server.wait_ready(LIMIT).await.expect("ready");
    (mock, server)
}

/// When each of the first `n` probes (`ping`) after now reached the mock, in µs.
async fn next_pings(mock: &MockServer, n: usize) -> Vec<u64> {
    mock.faults().clear_requests();
    tokio::time::timeout(LIMIT * 2, async {
        loop {
            let pings: Vec<u64> = mock
                .faults()
                .requests()
                .iter()
                .filter(|r| r.rpc_methods == ["ping"])
                .map(|r| r.at_us)
                .collect();
            if pings.len() >= n {
                return pings;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{n} probes not seen within {:?}", LIMIT * 2))
}

/// Issue 16 item 3: bytes that arrive without a message (here SSE keep-alive comments, every
/// 50 ms) prove the connection carries data, so a probe waits for them, but one interval at
/// most: with a 400 ms interval the probes come about 800 ms apart, never 400 ms.
///
/// Legacy SSE only: on Streamable HTTP, rmcp's SSE parser (sse-stream 0.2) drops comment lines
/// before any event reaches us, so there only events and answers count as bytes.
#[tokio::test]
async fn keep_alive_bytes_put_a_probe_off_by_one_interval_at_most() {
    init_tracing();
    let transport = MockTransport::Sse;
    let interval = Duration::from_millis(400);
    let (mock, server) = chatty(transport, interval, Duration::from_millis(300), 3).await;
    let pings = next_pings(&mock, 5).await;
    let gaps: Vec<u64> = pings.windows(2).map(|w| (w[1] - w[0]) / 1000).collect();
    // Without the byte clock each gap is one interval (400 ms) plus a round trip.
    assert!(
        gaps.iter().all(|&gap| gap >= 700),
        "{transport:?}: probes {gaps:?} ms apart, wanted about 2 × {interval:?}"
    );
    assert_eq!(
        server.status().ready().map(u64::from),
        Some(1),
        "{transport:?}: no reconnect"
    );
    server.shutdown().await;
}

/// Keep-alive comments cannot keep a hung server's session alive: the server stops answering
/// (and its streams go on carrying comments each 50 ms), and the heartbeat still finds it out.
#[tokio::test]
async fn keep_alive_bytes_do_not_keep_a_hung_session_alive() {
    init_tracing();
    for transport in [MockTransport::Sse, MockTransport::Http] {
        let (interval, timeout) = (Duration::from_millis(300), Duration::from_millis(200));
        let (mock, server) = chatty(transport, interval, timeout, 2).await;
        let mut events = server.events();
        mock.faults().hang();
        let (_, death, _) = lost(&mut events).await;
        assert_eq!(
            death.cause,
            Cause::HeartbeatTimeout,
            "{transport:?}: {death:?}"
        );
        server.shutdown().await;
    }
}
