//! A `POST`'s response stream cut mid-answer by something on the path while the server lives on
//! (issue 40 item 3). On 2026-07-28 the request is lost with its stream (the server takes the
//! close as its cancellation) and is re-issued as a new request under a new id when running it
//! again is harmless (SEP-2575); otherwise the call fails "may have run". Neither ends the
//! generation. A 2025-11-25 session resumes the same stream with `Last-Event-ID`, as before.
//!
//! Behind the mock's HTTP fault proxy, which cuts that one response (after a set number of SSE
//! events, never a byte more, so no timing decides where the cut falls) and nothing else: the
//! 2026 listen stream and the 2025 standalone stream go through it untouched.

use std::time::Duration;

use crate::common::*;
use mcp_mock_server::{
    MockOptions, MockServer, MockTransport, RecordedRequest,
    proxy::{HttpFaultProxy, StreamCut},
};
use mcp_resilient::{
    CallError, ServerConfig, Supervisor, ToolRegistry,
    call::CallOptions,
    config::{Heartbeat, ProtocolChoice},
};
use serde_json::{Value, json};

/// A server, the proxy in front of it, and a supervisor of the server through the proxy.
struct Cut {
    mock: MockServer,
    proxy: HttpFaultProxy,
    server: Supervisor,
    registry: ToolRegistry,
    generation: u64,
}

impl Cut {
    async fn start(name: &str, protocol: ProtocolChoice) -> Cut {
        let mock = MockServer::start(MockOptions {
            transport: MockTransport::Http,
            ..MockOptions::default()
        })
        .await
        .expect("mock server starts");
        let proxy = HttpFaultProxy::start(&format!("http://{}", mock.addr()), None)
            .await
            .expect("proxy starts");
        // No heartbeat within the test: a generation that ends here was ended by the cut.
        let config = fast(ServerConfig::http(name, proxy.url("/mcp")))
            .protocol(protocol)
            .heartbeat(
                Heartbeat::default()
                    .interval(Duration::from_secs(600))
                    .timeout(Duration::from_secs(5))
                    .failures(1),
            );
        let registry = ToolRegistry::new();
        let server = Supervisor::spawn(config, &registry).expect("valid config");
        let generation = server.wait_ready(LIMIT).await.expect("ready").get();
        Cut {
            mock,
            proxy,
            server,
            registry,
            generation,
        }
    }

    /// Calls `tool` with `args` through the registry, asking for its progress (a 2026-07-28
    /// server sends an answer's head only with its first message: the progress a tool sends
    /// before it works opens the stream the proxy then cuts while the tool runs).
    async fn call(
        &self,
        tool: &str,
        args: Value,
    ) -> Result<rmcp::model::CallToolResult, CallError> {
        let name = format!("mcp__{}__{tool}", self.server.name());
        let handle = self.registry.handle(&name).expect("tool registered");
        let options = CallOptions::new().on_progress(|_| {});
        tokio::time::timeout(LIMIT, handle.call_with(args, options))
            .await
            .expect("the call ends within the limit")
    }

    /// The JSON-RPC ids of the `tools/call` requests for `tool` the server received, in order.
    fn call_ids(&self, tool: &str) -> Vec<Value> {
        let calls = |r: &RecordedRequest| r.rpc_methods == ["tools/call"];
        let bodies = self.mock.faults().requests().into_iter().filter(calls);
        let bodies = bodies.filter_map(|r| serde_json::from_str::<Value>(&r.body).ok());
        bodies
            .filter(|body| body["params"]["name"] == tool)
            .map(|body| body["id"].clone())
            .collect()
    }

    /// Asserts that the generation that was ready at the start still takes calls: a call after
    /// the cut, which would wait past a generation whose death was reported, is answered by it.
    async fn assert_same_generation(&self) {
        self.call("echo", json!({"text": "after"}))
            .await
            .expect("a call after the cut is answered");
        let status = self.server.status();
        assert_eq!(
            status.ready().map(u64::from),
            Some(self.generation),
            "the cut did not end the generation: {status:?}"
        );
    }

    async fn shutdown(self) {
        self.server.shutdown().await;
        self.proxy.shutdown().await;
        self.mock.shutdown().await;
    }
}

#[tokio::test]
async fn a_2026_stream_cut_mid_answer_is_reissued_under_a_new_id_on_the_same_generation() {
    init_tracing();
    let cut = Cut::start("cut2026", ProtocolChoice::V2026_07_28).await;
    // `peek` is annotated readOnlyHint: running it twice is harmless. The cut falls after its
    // progress notification, while it waits: the server is working on it.
    cut.proxy.cut_next(StreamCut::after("tools/call", 1));
    let result = cut.call("peek", json!({"ms": 2000})).await;
    assert_eq!(cut.proxy.cuts(), 1, "the proxy cut the call's stream");
    let result = result.expect("the re-issued call is answered");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let ids = cut.call_ids("peek");
    assert_eq!(ids.len(), 2, "sent, then re-issued once: {ids:?}");
    assert_ne!(ids[0], ids[1], "the re-issue has a new request id");
    // The server took the closed stream as the first request's cancellation.
    let deadline = tokio::time::Instant::now() + LIMIT;
    while cut.mock.faults().state().await.cancelled < 1 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server counted no cancelled call within {LIMIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cut.assert_same_generation().await;
    cut.shutdown().await;
}

#[tokio::test]
async fn a_2026_call_is_reissued_once_only_and_a_second_cut_fails_it_as_may_have_run() {
    init_tracing();
    let cut = Cut::start("cuttwice", ProtocolChoice::V2026_07_28).await;
    cut.proxy
        .cut_next(StreamCut::after("tools/call", 1).times(2));
    let result = cut.call("peek", json!({"ms": 2000})).await;
    assert_eq!(cut.proxy.cuts(), 2, "the proxy cut both streams");
    match result {
        Err(CallError::ConnectionLost {
            may_have_run: true,
            generation,
            ref detail,
            ..
        }) => {
            assert_eq!(generation.get(), cut.generation, "{result:?}");
            assert!(detail.contains("cut again"), "the answer says so: {detail}");
        }
        other => panic!("expected ConnectionLost {{ may_have_run: true }}, got {other:?}"),
    }
    let ids = cut.call_ids("peek");
    assert_eq!(ids.len(), 2, "issued again once, never twice: {ids:?}");
    assert_ne!(ids[0], ids[1], "the re-issue has a new request id");
    cut.assert_same_generation().await;
    cut.shutdown().await;
}

#[tokio::test]
async fn a_2026_stream_cut_under_a_tool_that_may_not_run_twice_fails_as_may_have_run_and_keeps_the_generation()
 {
    init_tracing();
    let cut = Cut::start("cutsleep", ProtocolChoice::V2026_07_28).await;
    // `sleep` carries no annotation: a second run may do twice what the first did. It sends
    // nothing before its answer, so the cut falls on the answer itself: the tool ran whole.
    cut.proxy.cut_next(StreamCut::after("tools/call", 0));
    let result = cut.call("sleep", json!({"ms": 200})).await;
    assert_eq!(cut.proxy.cuts(), 1, "the proxy cut the call's stream");
    match result {
        Err(CallError::ConnectionLost {
            may_have_run: true,
            generation,
            ref detail,
            ..
        }) => {
            assert_eq!(generation.get(), cut.generation, "{result:?}");
            assert!(
                detail.contains("stream"),
                "the answer names the cut: {detail}"
            );
        }
        other => panic!("expected ConnectionLost {{ may_have_run: true }}, got {other:?}"),
    }
    assert_eq!(cut.call_ids("sleep").len(), 1, "never re-issued");
    cut.assert_same_generation().await;
    cut.shutdown().await;
}

#[tokio::test]
async fn a_2025_stream_cut_mid_answer_is_resumed_with_last_event_id_not_reissued() {
    init_tracing();
    let cut = Cut::start("cut2025", ProtocolChoice::V2025_11_25).await;
    // After the priming event, whose id the resumption names. rmcp's server replays a request's
    // stream only while the request runs, so this one runs far longer than the client's first
    // resumption delay (`sse_retry_min`, with the mock's `retry:` of 100 ms).
    cut.proxy.cut_next(StreamCut::after("tools/call", 1));
    let result = cut.call("peek", json!({"ms": 3000})).await;
    assert_eq!(cut.proxy.cuts(), 1, "the proxy cut the call's stream");
    let result = result.expect("the resumed stream brings the answer");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert_eq!(cut.call_ids("peek").len(), 1, "resumed, not re-issued");
    let resumed = cut
        .mock
        .faults()
        .requests()
        .into_iter()
        .any(|r| r.method == "GET" && r.headers.contains_key("last-event-id"));
    assert!(resumed, "the stream was resumed with Last-Event-ID");
    cut.assert_same_generation().await;
    cut.shutdown().await;
}
