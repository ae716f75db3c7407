//! A host that reads nothing while its upstream floods it: the gateway's memory stays bounded
//! (the host's outbox drops log messages past its bound, counted and reported), and another
//! host's calls go on.

use serde_json::json;

use super::{
    gateway::Gateway,
    raw::{Raw, answer},
};
use crate::common::{LIMIT, mock_binary, raw::peak_rss};

/// The most the gateway may hold while 48 MiB of log messages go to a host that reads nothing.
const PEAK_RSS: u64 = 64 * 1024 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_reads_nothing_during_a_flood_does_not_grow_the_gateway_or_slow_others() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("servers.json");
    let flood = [
        "mock-server",
        "--transport",
        "stdio",
        "--hostile",
        "flood",
        "--flood-count",
        "3000",
        "--flood-bytes",
        "16384",
    ];
    let servers = json!({"mcpServers": {
        "flood": {"command": mock_binary(), "args": flood, "sessions": "per_host"},
        "mock": {"command": mock_binary(), "args": ["mock-server", "--transport", "stdio"]},
    }});
    std::fs::write(&config, servers.to_string()).expect("config");
    let config = config.display().to_string();
    // The upstreams' stderr at info says when the flood has ended.
    let env = [("RUST_LOG", "warn,mcp_resilient::stderr=info")];
    let gateway = Gateway::start_env(&["--config", &config], &env).await;
    let raw = Raw::new(&gateway.url());
    // The slow host: a session (its own flooding upstream) whose stream it never reads.
    let id = raw.session().await;
    let stream = tokio::time::timeout(
        LIMIT,
        raw.http
            .get(&raw.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &id)
            .header("mcp-protocol-version", "2025-11-25")
            .send(),
    )
    .await
    .expect("in time")
    .expect("the standalone stream");
    // A 2026-07-28 host (no session, so no flood of its own) keeps calling meanwhile.
    let pid = gateway.child.id().expect("running");
    let ended = |lines: &[String]| lines.iter().any(|l| l.contains("flood ended:"));
    let mut calls = 0u64;
    let deadline = tokio::time::Instant::now() + 6 * LIMIT;
    while !ended(&gateway.log()) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the flood never ended"
        );
        calls += 1;
        let call = json!({"name": "mcp__mock__echo", "arguments": {"text": calls.to_string()}});
        let reply = answer(raw.modern(calls, "tools/call", call).await, calls).await;
        assert_eq!(
            reply["result"]["content"][0]["text"],
            json!(calls.to_string()),
            "another host's call during the flood: {reply}"
        );
    }
    let peak = peak_rss(pid);
    assert!(
        peak < PEAK_RSS,
        "the gateway grew to {} MiB for a host that reads nothing",
        peak >> 20
    );
    let dropped = gateway.log();
    assert!(
        dropped.iter().any(|l| l.contains("for a slow host")),
        "the drops were not reported: {dropped:?}"
    );
    eprintln!(
        "{calls} calls of another host answered during the flood; peak {} MiB",
        peak >> 20
    );
    drop(stream);
    let status = gateway.stop().await;
    assert!(status.success(), "{status}");
}
