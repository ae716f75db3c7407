//! Hostile legacy SSE servers against the client: each bad shape of bytes has a bound, and
//! each test measures it: time to the verdict (in-process supervisor), CPU and peak memory
//! of the client process (`mcp-resilient watch` as a child, from `/proc/PID/stat` and
//! `/proc/PID/status`). The hostile server runs in this process, so its own work never
//! counts as the client's. Margins are for a debug build on a loaded 2-core machine; each
//! says what the code before the linear parser (eventsource-stream behind our framer) did.

use std::process::Stdio;
use std::time::{Duration, Instant};

use mcp_mock_server::hostile::sse::{HostileSseOptions, HostileSseServer, SseHostility, Trigger};
use mcp_resilient::{
    ServerConfig, Supervisor, ToolRegistry,
    config::Heartbeat,
    state::{Cause, Reason},
};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};

use crate::common::{LIMIT, fast, lost, mock_binary};

async fn hostile(kind: SseHostility, bytes: usize, pace: Duration) -> HostileSseServer {
    let opts = HostileSseOptions {
        bytes,
        pace,
        trigger: Trigger::Manual,
        ..HostileSseOptions::new(kind)
    };
    HostileSseServer::start(opts)
        .await
        .expect("hostile server starts")
}

/// A supervised legacy SSE client without heartbeat: only the stream can tell.
async fn supervise(server: &HostileSseServer) -> (Supervisor, ToolRegistry) {
    let config =
        fast(ServerConfig::sse("hostile", server.sse_url())).heartbeat(Heartbeat::disabled());
    let registry = ToolRegistry::new();
    let supervisor = Supervisor::spawn(config, &registry).expect("supervisor starts");
    if let Err(state) = supervisor.wait_ready(LIMIT).await {
        panic!("not ready within {LIMIT:?}: {state:?}");
    }
    (supervisor, registry)
}

/// Triggers the server and returns the death that follows and how long after the first
/// hostile byte it was reported.
async fn death_after_trigger(
    server: &HostileSseServer,
    supervisor: &Supervisor,
) -> (mcp_resilient::state::Death, Duration) {
    let mut events = supervisor.events();
    assert_eq!(server.trigger(), 1, "one open session");
    let (reason, death, _) = lost(&mut events).await;
    let seen = Instant::now();
    assert_eq!(reason, Reason::ConnectionLost, "{death:?}");
    let sent = server.burst_started().expect("the burst was sent");
    let after = seen.saturating_duration_since(sent);
    eprintln!(
        "death {after:?} after the first hostile byte: {}",
        death.detail
    );
    (death, after)
}

#[tokio::test]
async fn invalid_utf8_ends_the_stream_at_once_with_a_cause_that_names_it() {
    let server = hostile(SseHostility::InvalidUtf8, 0, Duration::ZERO).await;
    let (supervisor, _registry) = supervise(&server).await;
    let (death, after) = death_after_trigger(&server, &supervisor).await;
    assert_eq!(death.cause, Cause::TransportError, "{death:?}");
    assert!(
        death.detail.contains("invalid UTF-8 at stream offset"),
        "{}",
        death.detail
    );
    // Target 100 ms; measured 1.5 ms. Before: never (the bad byte jammed the stream: no
    // message was delivered again, and only a heartbeat timeout, disabled here, ended it).
    assert!(
        after < Duration::from_secs(2),
        "death {after:?} after the byte"
    );
    supervisor.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn malformed_json_in_a_message_event_ends_the_stream_at_once() {
    let server = hostile(SseHostility::MalformedJson, 0, Duration::ZERO).await;
    let (supervisor, _registry) = supervise(&server).await;
    let (death, after) = death_after_trigger(&server, &supervisor).await;
    assert_eq!(death.cause, Cause::TransportError, "{death:?}");
    assert!(death.detail.contains("is not JSON"), "{}", death.detail);
    // Measured 1-15 ms. Before: never (the event was skipped with a warning).
    assert!(
        after < Duration::from_secs(2),
        "death {after:?} after the event"
    );
    supervisor.shutdown().await;
    server.shutdown().await;
}

/// `mcp-resilient watch --json` on `url`, with a heartbeat too slow to matter.
fn watch(url: &str) -> (Child, Lines<BufReader<ChildStdout>>) {
    let mut child = Command::new(mock_binary())
        .args([
            "watch",
            "--json",
            "--transport",
            "sse",
            "--name",
            "hostile",
            "--url",
            url,
        ])
        .args(["--heartbeat-interval", "60s", "--heartbeat-timeout", "10s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("watch starts");
    let stdout = child.stdout.take().expect("stdout is piped");
    (child, BufReader::new(stdout).lines())
}

/// The next `watch --json` state line that is `state` (bounded).
async fn next_state(lines: &mut Lines<BufReader<ChildStdout>>, state: &str) -> Value {
    let found = tokio::time::timeout(LIMIT, async {
        while let Ok(Some(line)) = lines.next_line().await {
            let event: Value = serde_json::from_str(&line).expect("a JSON line");
            if event["event"] == "state" && event["state"] == state {
                return event;
            }
        }
        panic!("watch ended before {state}");
    })
    .await;
    found.unwrap_or_else(|_| panic!("no {state} within {LIMIT:?}"))
}

/// CPU seconds (user + system) the process has used.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the process lives");
    let rest = stat.rsplit(')').next().unwrap_or_default();
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the command: the state is field 3; utime is 14, stime 15.
    let ticks = |i: usize| {
        fields
            .get(i - 3)
            .and_then(|f| f.parse::<u64>().ok())
            .expect("a tick count")
    };
    (ticks(14) + ticks(15)) as f64 / clock_ticks()
}

fn clock_ticks() -> f64 {
    let out = std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output();
    out.ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// Peak resident memory of the process, in MiB.
fn peak_rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the process lives");
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmHWM line");
    kib / 1024.0
}

/// Runs `watch` until ready, triggers the server, waits for the loss; returns the loss line and
/// the client's CPU seconds and peak memory growth (MiB) across the burst.
async fn watch_burst(server: &HostileSseServer) -> (Value, f64, f64) {
    watch_until(server, "reconnecting").await
}

/// As [`watch_burst`], until the state `end` (`failed` for a bound passed: a limit verdict).
async fn watch_until(server: &HostileSseServer, end: &str) -> (Value, f64, f64) {
    let (mut child, mut lines) = watch(&server.sse_url());
    let pid = child.id().expect("a pid");
    next_state(&mut lines, "ready").await;
    let (cpu, rss) = (cpu_seconds(pid), peak_rss_mib(pid));
    assert_eq!(server.trigger(), 1, "one open session");
    let lost = next_state(&mut lines, end).await;
    let (cpu, rss) = (cpu_seconds(pid) - cpu, peak_rss_mib(pid) - rss);
    eprintln!("client: {cpu:.2} s of CPU, peak RSS +{rss:.1} MiB; {lost}");
    let _ = child.start_kill();
    let _ = tokio::time::timeout(LIMIT, child.wait()).await;
    (lost, cpu, rss)
}

#[tokio::test]
async fn a_newline_flood_costs_client_cpu_linear_in_its_bytes() {
    const FLOOD: usize = 16 << 20;
    let server = hostile(SseHostility::NewlineFlood, FLOOD, Duration::ZERO).await;
    let (lost, cpu, _) = watch_burst(&server).await;
    // Bare newlines are legal (blank lines, no event): the stream is read to its end.
    assert_eq!(lost["cause"], "stream_closed", "{lost}");
    assert_eq!(
        server.hostile_bytes(),
        FLOOD as u64,
        "the whole flood was sent"
    );
    // Measured 0.64 s for the whole debug-build client, HTTP included (release: see the
    // benchmark). Before: ~0.5 µs per byte in release (27 MB in 20 s, 13 s of CPU), so 16 MiB
    // would cost ~8 s, more in debug, and would not end within the limit.
    assert!(
        cpu < 3.0,
        "{cpu:.2} s of client CPU for {FLOOD} bare newlines"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn an_endless_line_is_cut_at_the_line_bound_with_linear_cpu_and_bounded_memory() {
    const LINE: usize = 20 << 20;
    const BOUND_MIB: f64 = 16.0;
    // 8 KiB chunks, one per millisecond: every chunk reaches the client on its own.
    let server = hostile(SseHostility::EndlessLine, LINE, Duration::from_millis(1)).await;
    let (lost, cpu, rss) = watch_until(&server, "failed").await;
    assert_eq!(lost["cause"], "limit_exceeded", "{lost}");
    let detail = lost["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("limits.max_sse_line_bytes (16777216 bytes)"),
        "{detail}"
    );
    assert!(
        server.hostile_bytes() < LINE as u64,
        "the client hung up before the line's end"
    );
    // Measured 0.64 s for the whole debug-build client. Before: the framer rescanned the partial line on every
    // chunk (12.4 s of CPU in release for a 16 MiB line).
    assert!(cpu < 3.0, "{cpu:.2} s of client CPU for a 16 MiB line");
    // The line is held up to its bound, never more (measured +15.8 MiB).
    assert!(rss < BOUND_MIB + 24.0, "peak RSS grew {rss:.1} MiB");
    server.shutdown().await;
}
