//! Progress reaches its call before the call's answer does, on every transport, even on a
//! runtime too busy to run rmcp's notification tasks promptly.
//!
//! rmcp hands each notification to a task of its own but a response straight to the waiting
//! call, so a call can see its answer before the tasks carrying its last progress have run. A
//! host (and `serve`, which ends a host's POST stream with the answer) must nevertheless get
//! every progress notification the server sent ahead of the answer.

use std::sync::{
    Arc,
    atomic::{AtomicBool, AtomicU32, Ordering},
};

use mcp_mock_server::{MockOptions, MockServer, MockTransport};
use mcp_resilient::{ServerConfig, Supervisor, ToolRegistry, call::CallOptions, config::Heartbeat};
use serde_json::json;

use crate::common::{self, LIMIT};

/// Calls per transport; each sends [`STEPS`] progress notifications right before its answer.
const CALLS: u32 = 150;
const STEPS: u32 = 4;
/// Tasks that keep the runtime's queues full while the calls run.
const BUSY_TASKS: usize = 16;

async fn mock(transport: MockTransport) -> MockServer {
    MockServer::start(MockOptions {
        transport,
        port: 0,
        ..Default::default()
    })
    .await
    .expect("mock server starts")
}

/// Makes `CALLS` calls of `progress` (no wait between steps) and returns, per call, how many of
/// its notifications had reached the callback when the call returned.
async fn calls_with_progress(config: ServerConfig) -> Vec<u32> {
    let config = common::fast(config).heartbeat(Heartbeat::disabled());
    let name = config.name().to_owned();
    let registry = ToolRegistry::new();
    let supervisor = Supervisor::spawn(config, &registry).expect("supervisor starts");
    supervisor.wait_ready(LIMIT).await.expect("ready");
    let handle = registry
        .handle(&format!("mcp__{name}__progress"))
        .expect("progress is registered");

    let stop = Arc::new(AtomicBool::new(false));
    let busy: Vec<_> = (0..BUSY_TASKS)
        .map(|_| {
            let stop = stop.clone();
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();

    let mut seen_at_answer = Vec::new();
    for _ in 0..CALLS {
        let seen = Arc::new(AtomicU32::new(0));
        let counter = seen.clone();
        let options = CallOptions::new().on_progress(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        let result = tokio::time::timeout(
            LIMIT,
            handle.call_with(json!({"steps": STEPS, "ms": 0}), options),
        )
        .await
        .expect("the call answers in time")
        .expect("the call succeeds");
        assert!(
            format!("{:?}", result.content).contains(&format!("progressed {STEPS} steps")),
            "{result:?}"
        );
        seen_at_answer.push(seen.load(Ordering::SeqCst));
    }

    stop.store(true, Ordering::Relaxed);
    for task in busy {
        tokio::time::timeout(LIMIT, task)
            .await
            .expect("a busy task stops")
            .expect("a busy task ends cleanly");
    }
    supervisor.shutdown().await;
    seen_at_answer
}

fn assert_all_delivered(transport: &str, seen: &[u32]) {
    let short: Vec<(usize, u32)> = seen
        .iter()
        .copied()
        .enumerate()
        .filter(|&(_, n)| n != STEPS)
        .collect();
    assert_eq!(seen.len(), CALLS as usize, "{transport}: every call made");
    assert!(
        short.is_empty(),
        "{transport}: calls whose answer came before all {STEPS} progress notifications \
         (call, seen): {short:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reaches_the_call_before_its_answer_over_stdio() {
    let seen = calls_with_progress(common::stdio_mock("progress-stdio", &[])).await;
    assert_all_delivered("stdio", &seen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reaches_the_call_before_its_answer_over_streamable_http_both_eras() {
    let server = mock(MockTransport::Http).await;
    let url = server.http_url();
    let seen = calls_with_progress(ServerConfig::http("progress-http", &url)).await;
    assert_all_delivered("http 2026-07-28", &seen);
    let seen = calls_with_progress(common::era_2025(ServerConfig::http(
        "progress-http25",
        &url,
    )))
    .await;
    assert_all_delivered("http 2025-11-25", &seen);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reaches_the_call_before_its_answer_over_legacy_sse() {
    let server = mock(MockTransport::Sse).await;
    let seen = calls_with_progress(ServerConfig::sse("progress-sse", server.sse_url())).await;
    assert_all_delivered("sse", &seen);
    server.shutdown().await;
}
