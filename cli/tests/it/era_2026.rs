//! Protocol 2026-07-28: era negotiation against every mode of the mock, and what supervision means
//! on a server without sessions — the `server/discover` probe (never `ping`), the listen stream
//! whose end is death, list changes on it, recovery after a kill, and multi-round tool calls.

use std::time::Duration;

use crate::common::{process::MockProcess, *};
use mcp_mock_server::{MockOptions, MockServer, MockTransport, Whoami};
use mcp_resilient::{
    CallError, ConnectionState, ServerConfig, Supervisor, ToolRegistry,
    config::{Heartbeat, ProtocolChoice},
    host::{Ask, HostHandlers},
    state::{Cause, Event},
};
use serde_json::json;

const MODERN: &str = "2026-07-28";

async fn mock(transport: MockTransport) -> MockServer {
    MockServer::start(MockOptions {
        transport,
        ..MockOptions::default()
    })
    .await
    .expect("mock server starts")
}

fn probing(config: ServerConfig) -> ServerConfig {
    fast(config).heartbeat(
        Heartbeat::default()
            .interval(Duration::from_millis(200))
            .timeout(Duration::from_millis(100))
            .failures(2),
    )
}

async fn ready(config: ServerConfig) -> (Supervisor, ToolRegistry, String) {
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(config, &registry).expect("valid config");
    server.wait_ready(LIMIT).await.expect("ready");
    let protocol = server
        .status()
        .protocol()
        .expect("a ready generation has a protocol")
        .to_owned();
    (server, registry, protocol)
}

async fn methods(registry: &ToolRegistry, server: &str) -> Whoami {
    let result = call(registry, server, "whoami", json!({})).await;
    Whoami::from_result(&result).expect("a whoami result")
}

#[tokio::test]
async fn auto_negotiates_the_era_every_mock_mode_speaks() {
    init_tracing();
    let dual = mock(MockTransport::Both).await;
    let modern_only = mock(MockTransport::Http).await;
    modern_only.faults().set_modern_only(true);
    let cases = [
        (ServerConfig::http("dual", dual.http_url()), MODERN),
        (ServerConfig::remote("auto", dual.http_url()), MODERN),
        (ServerConfig::http("only", modern_only.http_url()), MODERN),
        (ServerConfig::sse("sse", dual.sse_url()), "2024-11-05"),
        (
            ServerConfig::http("pinned", dual.http_url()).protocol(ProtocolChoice::V2025_11_25),
            "2025-11-25",
        ),
        (stdio_mock("child", &[]), MODERN),
        (stdio_mock("childonly", &["--modern-only"]), MODERN),
        (
            stdio_mock("childold", &[]).protocol(ProtocolChoice::V2025_11_25),
            "2025-11-25",
        ),
    ];
    for (config, expected) in cases {
        let name = config.name().to_owned();
        let (server, registry, protocol) = ready(fast(config)).await;
        assert_eq!(protocol, expected, "{name}");
        let echoed = call(&registry, &name, "echo", json!({"text": "hi"})).await;
        assert!(format!("{echoed:?}").contains("hi"), "{name}");
        server.shutdown().await;
    }
}

#[tokio::test]
async fn a_2026_generation_is_probed_with_discover_and_never_pinged() {
    init_tracing();
    let modern_only = mock(MockTransport::Http).await;
    modern_only.faults().set_modern_only(true);
    for config in [
        probing(ServerConfig::http("idle", modern_only.http_url())),
        probing(stdio_mock("idle", &["--modern-only"])),
    ] {
        let (server, registry, protocol) = ready(config).await;
        assert_eq!(protocol, MODERN);
        // Stay idle until the heartbeat has probed a few times.
        let probed = async {
            loop {
                let who = methods(&registry, "idle").await;
                if who.methods.get("server/discover").copied().unwrap_or(0) >= 4 {
                    return who;
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        };
        let who = tokio::time::timeout(LIMIT, probed)
            .await
            .expect("the heartbeat probes");
        assert_eq!(who.methods.get("ping"), None, "no ping: {:?}", who.methods);
        assert_eq!(who.methods.get("initialize"), None, "{:?}", who.methods);
        assert_eq!(server.status().ready().map(u64::from), Some(1));
        server.shutdown().await;
    }
}

#[tokio::test]
async fn a_hung_2026_server_is_caught_by_the_discover_probe() {
    init_tracing();
    let server_side = mock(MockTransport::Http).await;
    let (server, _registry, protocol) =
        ready(probing(ServerConfig::http("hung", server_side.http_url()))).await;
    assert_eq!(protocol, MODERN);
    let mut events = server.events();
    server_side.faults().hang();
    let (_, death, _) = lost(&mut events).await;
    assert_eq!(death.cause, Cause::HeartbeatTimeout, "{death:?}");
    server_side.faults().unhang();
    assert!(ready_generation(&mut events).await >= 2);
    let methods = &server_side.faults().state().await.methods;
    assert_eq!(methods.get("ping"), None, "{methods:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn a_killed_2026_server_is_noticed_by_its_listen_stream_and_recovered() {
    init_tracing();
    let mut process = MockProcess::start_with("http", &["--modern-only"]).await;
    let config = fast(ServerConfig::http("gone", process.url())).heartbeat(Heartbeat::disabled());
    let (server, registry, _) = ready(config).await;
    let (boot1, _) = whoami(&registry, "gone").await;
    let mut events = server.events();
    process.kill().await;
    // No heartbeat: only the listen stream can tell.
    let (_, death, _) = lost(&mut events).await;
    assert_eq!(death.cause, Cause::StreamClosed, "{death:?}");
    process.restart().await;
    assert!(ready_generation(&mut events).await >= 2);
    let (boot2, _) = whoami(&registry, "gone").await;
    assert_ne!(boot1, boot2, "a new server process answers");
    assert_eq!(
        server.status().protocol().map(str::to_owned).as_deref(),
        Some(MODERN)
    );
    server.shutdown().await;
    process.kill().await;
}

/// rmcp's server answers `subscriptions/listen` with -32601 unless its handler implements
/// `accepted_subscription_filter`, even while it declares `listChanged`: such a server is used
/// without the stream, not refused on every attempt.
#[tokio::test]
async fn a_2026_server_that_refuses_subscriptions_listen_is_ready_and_answers_calls() {
    init_tracing();
    let server_side = mock(MockTransport::Http).await;
    server_side.faults().set_refuse_listen(true);
    let (server, registry, protocol) =
        ready(fast(ServerConfig::http("nolisten", server_side.http_url()))).await;
    assert_eq!(protocol, MODERN);
    let who = methods(&registry, "nolisten").await;
    assert_eq!(
        who.methods.get("subscriptions/listen").copied(),
        Some(1),
        "asked once, refused: {:?}",
        who.methods
    );
    assert_eq!(server_side.faults().state().await.listens, 0);
    assert_eq!(
        server.status().ready().map(u64::from),
        Some(1),
        "the first generation serves: the refusal cost no attempt"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn the_listen_stream_ending_without_its_final_response_is_death_and_a_graceful_end_is_not() {
    init_tracing();
    let server_side = mock(MockTransport::Http).await;
    let config = fast(ServerConfig::http("listening", server_side.http_url()))
        .heartbeat(Heartbeat::disabled());
    let (server, registry, _) = ready(config).await;
    let mut events = server.events();
    // A graceful end: the server closed the subscription in good order; subscribe again.
    server_side.faults().end_listens(true);
    let resubscribed = async {
        while server_side.faults().state().await.listens < 1 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(LIMIT, resubscribed)
        .await
        .expect("subscribed again");
    assert_eq!(
        server.status().ready().map(u64::from),
        Some(1),
        "a graceful end is not death"
    );
    call(&registry, "listening", "echo", json!({"text": "still"})).await;
    // An abrupt end: death, and the next generation subscribes again.
    server_side.faults().end_listens(false);
    let (_, death, _) = lost(&mut events).await;
    assert_eq!(death.cause, Cause::StreamClosed, "{death:?}");
    assert!(ready_generation(&mut events).await >= 2);
    assert!(server_side.faults().state().await.listens >= 1);
    server.shutdown().await;
}

#[tokio::test]
async fn a_list_change_on_the_listen_stream_resyncs_the_tools() {
    init_tracing();
    let server_side = mock(MockTransport::Http).await;
    let (server, registry, _) =
        ready(fast(ServerConfig::http("changing", server_side.http_url()))).await;
    let generation = server.status().ready().expect("ready");
    let mut events = server.events();
    server_side
        .faults()
        .set_tools(mcp_mock_server::SetTools {
            add: vec!["fresh".into()],
            ..Default::default()
        })
        .await;
    let change = wait_event(&mut events, |e| matches!(e, Event::Tools(_))).await;
    let Event::Tools(change) = change else {
        unreachable!()
    };
    assert_eq!(
        (change.generation, change.added),
        (generation, vec!["fresh".to_owned()])
    );
    assert!(registry.snapshot().get("mcp__changing__fresh").is_some());
    server.shutdown().await;
}

#[tokio::test]
async fn a_tool_that_needs_input_is_answered_by_the_host_in_both_eras() {
    init_tracing();
    let server_side = mock(MockTransport::Http).await;
    for protocol in [ProtocolChoice::Auto, ProtocolChoice::V2025_11_25] {
        let config = fast(ServerConfig::http("asking", server_side.http_url()))
            .protocol(protocol)
            .handlers(HostHandlers::new().accept_elicitation_defaults());
        let (server, registry, _) = ready(config).await;
        let answer = call(
            &registry,
            "asking",
            "confirm",
            json!({"question": "ship it?"}),
        )
        .await;
        assert!(
            format!("{answer:?}").contains("confirmed: true (ok)"),
            "{protocol}: {answer:?}"
        );
        server.shutdown().await;
    }
    // Without a handler the call says what the server asked for.
    let config = fast(ServerConfig::http("unanswered", server_side.http_url()));
    let (server, registry, protocol) = ready(config).await;
    assert_eq!(protocol, MODERN);
    let outcome = registry
        .handle("mcp__unanswered__confirm")
        .unwrap()
        .call(json!({"question": "ship it?"}))
        .await;
    match outcome {
        Err(CallError::InputRequired { asked, .. }) => assert_eq!(asked, Ask::Elicitation),
        // The mock answers a client without the capability with a tool error instead.
        Ok(result) => assert_eq!(result.is_error, Some(true), "{result:?}"),
        other => panic!("{other:?}"),
    }
    server.shutdown().await;
}

#[tokio::test]
async fn auto_asks_again_when_a_remembered_legacy_server_is_upgraded() {
    init_tracing();
    let server_side = mock(MockTransport::Http).await;
    // A 2025-only server: `server/discover` is answered 400, so `auto` falls back to `initialize`
    // and remembers the server as legacy.
    let mut legacy = mcp_mock_server::StatusFault::new(400);
    legacy.methods = vec!["server/discover".into()];
    server_side.faults().set_status_fault(Some(legacy)).unwrap();
    let config = fast(ServerConfig::http("upgraded", server_side.http_url()))
        .heartbeat(Heartbeat::disabled());
    let (server, registry, protocol) = ready(config).await;
    assert_eq!(protocol, "2025-11-25");
    // The server is upgraded to 2026-07-28 only, and forgets its sessions.
    server_side.faults().set_status_fault(None).unwrap();
    server_side.faults().set_modern_only(true);
    server_side.faults().expire_sessions().await;
    let mut events = server.events();
    // The next call finds its session gone; the remembered era is refused (-32022), forgotten,
    // and asked again.
    let answered = call(&registry, "upgraded", "echo", json!({"text": "after"})).await;
    assert!(format!("{answered:?}").contains("after"));
    let generation = ready_generation(&mut events).await;
    assert!(generation >= 2);
    let state = server.status().state;
    assert!(
        matches!(&state, ConnectionState::Ready { protocol, .. } if protocol == MODERN),
        "{state:?}"
    );
    server.shutdown().await;
}

/// Every POST carries `Mcp-Method` naming its JSON-RPC method (a `tools/call` also `Mcp-Name`),
/// in both eras and `initialize` included, and `MCP-Protocol-Version` naming the era once it is
/// known (2025: after `initialize`; 2026: on every request).
#[tokio::test]
async fn every_post_names_its_method_and_version_in_both_eras() {
    init_tracing();
    let cases = [
        (
            ProtocolChoice::Auto,
            MODERN,
            &["server/discover", "subscriptions/listen"][..],
        ),
        (
            ProtocolChoice::V2025_11_25,
            "2025-11-25",
            &["initialize", "notifications/initialized"][..],
        ),
    ];
    for (choice, version, handshake) in cases {
        let server_side = mock(MockTransport::Http).await;
        let config = ServerConfig::http("named", server_side.http_url()).protocol(choice);
        let (server, registry, protocol) = ready(fast(config)).await;
        assert_eq!(protocol, version);
        call(&registry, "named", "echo", json!({"text": "hi"})).await;
        server.shutdown().await;
        let posts: Vec<_> = server_side
            .faults()
            .requests()
            .into_iter()
            .filter(|r| r.method == "POST")
            .collect();
        let mut seen = Vec::new();
        for post in &posts {
            let [method] = &post.rpc_methods[..] else {
                panic!("one message per POST: {post:?}");
            };
            let header = |name: &str| post.headers.get(name).map(String::as_str);
            assert_eq!(header("mcp-method"), Some(method.as_str()), "{post:?}");
            if method == "tools/call" {
                assert_eq!(header("mcp-name"), Some("echo"), "{post:?}");
            }
            if method != "initialize" {
                assert_eq!(header("mcp-protocol-version"), Some(version), "{post:?}");
            }
            seen.push(method.clone());
        }
        for method in handshake.iter().chain(&["tools/list", "tools/call"]) {
            assert!(
                seen.iter().any(|m| m == method),
                "{version}: no {method} in {seen:?}"
            );
        }
    }
}

/// A list's `ttlMs` is a promise to list again: a change the server never announces reaches the
/// registry when the list expires, within the same generation.
#[tokio::test]
async fn a_list_ttl_refreshes_the_tools_without_a_notification() {
    init_tracing();
    let server_side = mock(MockTransport::Http).await;
    server_side
        .faults()
        .set_list_ttl(Some(Duration::from_millis(1000)));
    let (server, registry, protocol) =
        ready(fast(ServerConfig::http("cached", server_side.http_url()))).await;
    assert_eq!(protocol, MODERN);
    let generation = server.status().ready().expect("ready");
    let mut events = server.events();
    server_side
        .faults()
        .set_tools(mcp_mock_server::SetTools {
            add: vec!["quiet".into()],
            notify: false,
            ..Default::default()
        })
        .await;
    let change = wait_event(&mut events, |e| matches!(e, Event::Tools(_))).await;
    let Event::Tools(change) = change else {
        unreachable!()
    };
    assert_eq!(
        (change.generation, change.added),
        (generation, vec!["quiet".to_owned()])
    );
    assert!(registry.snapshot().get("mcp__cached__quiet").is_some());
    assert_eq!(server.status().ready(), Some(generation));
    server.shutdown().await;
}
