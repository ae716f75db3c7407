//! `mcp-resilient proxy` against hosts and upstreams that misbehave: a flood toward a host that
//! does not read, signals with stdin held open, a hung upstream at exit, a SIGKILL. Each test
//! asserts the bound (peak memory, time to exit, no process left), with what the code before the
//! bounds measured in a comment.

use std::{
    collections::HashSet,
    time::{Duration, Instant},
};

use crate::common::{LIMIT, alive, mock_binary, process::MockProcess, raw::RawHost};
use nix::{
    sys::signal::{Signal, kill, killpg},
    unistd::Pid,
};
use serde_json::{Value, json};

/// The proxy's peak RSS allowed while a host reads nothing (debug build). Bounded, it stays
/// near 38 MiB; before the outbox, the 48 MiB flood below took it to 99 MiB.
const PEAK_RSS: u64 = 64 * 1024 * 1024;
/// How long the proxy may take to exit (SIGTERM, or stdin closed); hosts kill it after 2 s.
const EXIT: Duration = Duration::from_secs(2);

/// The stdio mock server as the proxy's upstream, with extra flags.
fn stdio_upstream(extra: &[&'static str]) -> Vec<&'static str> {
    let mut args = vec!["--stdio", "--", mock_binary(), "mock-server"];
    args.extend(["--transport", "stdio"]);
    args.extend_from_slice(extra);
    args
}

/// Reads until the answer to `id`, passing every other message to `other`.
async fn answer(host: &mut RawHost, id: u64, mut other: impl FnMut(&Value)) -> Value {
    loop {
        let message = host.read().await.expect("the proxy is still talking");
        if message["id"] == json!(id) {
            return message;
        }
        other(&message);
    }
}

/// The pid of the stdio upstream, from its `whoami`.
async fn upstream_pid(host: &mut RawHost) -> u32 {
    host.send(RawHost::call(900, "whoami", json!({}))).await;
    let reply = answer(host, 900, |_| {}).await;
    let result = serde_json::from_value(reply["result"].clone()).expect("a tool result");
    mcp_mock_server::Whoami::from_result(&result)
        .expect("a whoami result")
        .pid
}

/// The counts the proxy reported in its "dropped …" lines, summed: (log messages, progress).
fn dropped(lines: &[String]) -> (u64, u64) {
    let mut sum = (0, 0);
    for line in lines.iter().filter(|l| l.contains("for a slow host")) {
        let Some((_, rest)) = line.split_once("dropped ") else {
            continue;
        };
        let words: Vec<&str> = rest.split(' ').collect();
        // "N log messages and M progress notifications …"
        let number = |at: usize| words.get(at).and_then(|w| w.parse::<u64>().ok());
        sum.0 += number(0).unwrap_or_else(|| panic!("no count in {line}"));
        sum.1 += number(4).unwrap_or_else(|| panic!("no count in {line}"));
    }
    sum
}

/// Kills `pid` when dropped if it is still alive, so a failing test leaves no process behind.
struct Reap(u32);

impl Drop for Reap {
    fn drop(&mut self) {
        if alive(self.0) {
            let _ = kill(Pid::from_raw(self.0 as i32), Signal::SIGKILL);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_reads_nothing_during_a_flood_does_not_grow_the_proxy_and_loses_no_answer() {
    const FLOOD: u64 = 3000;
    let upstream = stdio_upstream(&[
        "--hostile",
        "flood",
        "--flood-count",
        "3000",
        "--flood-bytes",
        "16384",
    ]);
    // The upstream's stderr at info says when its flood has ended.
    let mut host = RawHost::start(&upstream, Some("warn,mcp_resilient::stderr=info")).await;
    let early = host.initialize().await;
    assert!(early.is_empty(), "before the initialize answer: {early:?}");
    // The host asks for answers, then reads nothing while 48 MiB of log messages go by.
    for id in 1..=20 {
        host.send(RawHost::call(id, "echo", json!({"text": id.to_string()})))
            .await;
    }
    host.wait_log("flood ended: 3000 messages", 6 * LIMIT).await;
    let peak = host.peak_rss();
    assert!(
        peak < PEAK_RSS,
        "the proxy grew to {} MiB for a host that reads nothing",
        peak >> 20
    );
    // The host reads again: every answer arrives, and each message at most once (rmcp hands
    // each upstream notification to a task of its own, so two may swap places).
    let (mut logs, mut ended, mut answers) = (HashSet::new(), false, Vec::new());
    let mut log = |message: &Value| {
        let index = message["params"]["data"]["flood"]
            .as_u64()
            .expect("an index");
        assert!(
            index < FLOOD && logs.insert(index),
            "again or unknown: {index}"
        );
    };
    while answers.len() < 20 || !ended {
        let message = host.read().await.expect("the proxy is still talking");
        match message["method"].as_str() {
            Some("notifications/message") => log(&message),
            Some("notifications/resources/list_changed") => ended = true,
            _ => answers.push(message["id"].as_u64().expect("an answer")),
        }
    }
    answers.sort_unstable();
    assert_eq!(answers, (1..=20).collect::<Vec<_>>(), "every answer, once");
    host.close_stdin();
    while let Some(message) = host.read().await {
        if message["method"] == "notifications/message" {
            log(&message);
        }
    }
    let logs = logs.len() as u64;
    let status = host.exit_within(LIMIT).await.expect("the proxy exits");
    assert!(status.success(), "{status}");
    // Every message the upstream sent either reached the host or was counted as dropped.
    let (dropped_logs, _) = dropped(&host.log_lines());
    assert!(dropped_logs > 0, "{:?}", host.log_lines());
    assert_eq!(
        logs + dropped_logs,
        FLOOD,
        "delivered {logs}, dropped {dropped_logs}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_past_the_bound_is_dropped_for_a_slow_host_and_the_result_still_arrives() {
    const STEPS: u64 = 5000;
    let mut host = RawHost::start(&stdio_upstream(&[]), None).await;
    host.initialize().await;
    host.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "progress", "arguments": {"steps": STEPS, "ms": 0},
            "_meta": {"progressToken": "host-token"}
        }}),
    )
    .await;
    // The host reads nothing until the proxy has dropped progress for it.
    host.wait_log("progress notifications for a slow host", LIMIT)
        .await;
    let mut progress = HashSet::new();
    let reply = answer(&mut host, 1, |message| {
        assert_eq!(message["method"], "notifications/progress", "{message}");
        assert_eq!(message["params"]["progressToken"], "host-token");
        let step = message["params"]["progress"].as_f64().expect("a number");
        assert!(progress.insert(step as u64), "step {step} twice");
    })
    .await;
    assert!(reply["result"]["isError"] != json!(true), "{reply}");
    assert!(host.peak_rss() < PEAK_RSS, "{} MiB", host.peak_rss() >> 20);
    host.close_stdin();
    while host.read().await.is_some() {}
    host.exit_within(LIMIT).await.expect("the proxy exits");
    let (_, dropped_progress) = dropped(&host.log_lines());
    let delivered = progress.len() as u64;
    assert!(
        dropped_progress > 0 && delivered < STEPS,
        "{delivered} delivered"
    );
    assert!(delivered + dropped_progress <= STEPS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_the_proxy_within_two_seconds_with_stdin_open_and_its_child_is_reaped() {
    let mut host = RawHost::start(&stdio_upstream(&[]), None).await;
    host.initialize().await;
    let child = upstream_pid(&mut host).await;
    let _reap = Reap(child);
    kill(Pid::from_raw(host.pid() as i32), Signal::SIGTERM).expect("SIGTERM");
    let sent = Instant::now();
    // Before, it stayed alive (a thread blocked reading stdin): still running after 30 s.
    let status = host.exit_within(EXIT).await;
    let status = status.unwrap_or_else(|| panic!("still running {EXIT:?} after SIGTERM"));
    assert!(status.success(), "{status} after {:?}", sent.elapsed());
    assert!(!alive(child), "the upstream {child} outlived the proxy");
    let group = killpg(Pid::from_raw(child as i32), None);
    assert!(group.is_err(), "a process is left in the upstream's group");
}

/// A 2025-11-25 upstream on Streamable HTTP that hangs; the host closes stdin, with a call in
/// flight or not.
async fn exit_with_a_hung_upstream(call_in_flight: bool) -> Duration {
    let mock = MockProcess::start("http").await;
    let url = mock.url();
    let args = ["--name", "mock", "--protocol", "2025-11-25", "--url", &url];
    let mut host = RawHost::start(&args, None).await;
    host.initialize().await;
    host.send(RawHost::call(1, "echo", json!({"text": "up"})))
        .await;
    answer(&mut host, 1, |_| {}).await;
    mock.admin("hang", json!({})).await;
    if call_in_flight {
        host.send(RawHost::call(2, "echo", json!({"text": "never"})))
            .await;
    }
    host.close_stdin();
    let closed = Instant::now();
    let status = host.exit_within(LIMIT).await.expect("the proxy exits");
    assert!(status.success(), "{status}");
    closed.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_eof_ends_the_proxy_within_two_seconds_with_a_hung_2025_upstream() {
    // Before: 5.0 s (rmcp's own DELETE timeout).
    let idle = exit_with_a_hung_upstream(false).await;
    assert!(idle < EXIT, "exited {idle:?} after stdin closed");
    // Before: 8.1 s (5 s draining the call, then the DELETE and the stop).
    let busy = exit_with_a_hung_upstream(true).await;
    assert!(
        busy < EXIT,
        "with a call in flight: exited {busy:?} after stdin closed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkilled_proxy_leaves_no_stdio_child_alive() {
    // The upstream ignores its stdin's end, so only its death signal can end it.
    let mut host = RawHost::start(&stdio_upstream(&["--ignore-stdin-eof"]), None).await;
    host.initialize().await;
    let child = upstream_pid(&mut host).await;
    let _reap = Reap(child);
    assert!(alive(child));
    host.child.start_kill().expect("SIGKILL");
    host.exit_within(LIMIT).await.expect("the proxy is gone");
    // Before: the upstream lived on as an orphan (its own process group).
    let deadline = Instant::now() + LIMIT;
    while alive(child) {
        assert!(
            Instant::now() < deadline,
            "the upstream {child} outlived a SIGKILLed proxy"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
