//! The command-line contract: output shapes and exit codes, with real child processes.

use crate::common;
use std::process::Stdio;

use crate::common::{LIMIT, mock_binary};
use serde_json::Value;
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::Command,
};

/// Runs the CLI with `args`: its exit code, stdout and stderr.
pub async fn run(args: &[&str]) -> (i32, String, String) {
    let output = tokio::time::timeout(
        LIMIT,
        Command::new(mock_binary())
            .args(args)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the CLI finished in time")
    .expect("the CLI ran");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `head` followed by `--stdio -- <the mock server on stdio>`.
pub fn with_mock<'a>(head: &[&'a str]) -> Vec<&'a str> {
    let mut args = head.to_vec();
    args.extend([
        "--stdio",
        "--",
        mock_binary(),
        "mock-server",
        "--transport",
        "stdio",
    ]);
    args
}

#[tokio::test]
async fn call_prints_the_result_as_one_json_line_and_exits_0() {
    let (code, stdout, stderr) = run(&with_mock(&["call", "echo", r#"{"text":"hi"}"#])).await;
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    let result: Value = serde_json::from_str(lines[0]).expect("json");
    assert_eq!(result["content"][0]["text"], "hi");
}

#[tokio::test]
async fn a_tool_error_exits_1() {
    let (code, stdout, _) = run(&with_mock(&["call", "fail", r#"{"message":"nope"}"#])).await;
    assert_eq!(code, 1);
    let result: Value = serde_json::from_str(stdout.trim()).expect("json");
    assert_eq!(result["isError"], true);
}

#[tokio::test]
async fn usage_and_config_errors_exit_2() {
    assert_eq!(run(&with_mock(&["call", "echo", "not json"])).await.0, 2);
    assert_eq!(run(&["call", "echo"]).await.0, 2, "no server named");
    let (code, _, stderr) = run(&with_mock(&[
        "call",
        "echo",
        "{}",
        "--heartbeat-interval",
        "0s",
    ]))
    .await;
    assert_eq!(code, 2);
    assert!(stderr.contains("heartbeat.interval"), "{stderr}");
    assert_eq!(run(&with_mock(&["call", "no_such_tool", "{}"])).await.0, 2);
}

#[tokio::test]
async fn a_server_that_cannot_start_exits_3() {
    let (code, _, stderr) = run(&[
        "call",
        "echo",
        "{}",
        "--max-attempts",
        "2",
        "--reconnect-initial",
        "10ms",
        "--stdio",
        "--",
        "/nonexistent/server",
    ])
    .await;
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("could not connect"), "{stderr}");
}

#[tokio::test]
async fn tools_json_lists_public_names() {
    let (code, stdout, stderr) = run(&with_mock(&["tools", "--json", "--name", "mock"])).await;
    assert_eq!(code, 0, "{stderr}");
    let tools: Value = serde_json::from_str(stdout.trim()).expect("json");
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["public_name"].as_str())
        .collect();
    assert!(names.contains(&"mcp__mock__echo"), "{names:?}");
}

#[tokio::test]
async fn watch_json_prints_state_lines_and_stops_on_interrupt() {
    let mut child = Command::new(mock_binary())
        .args(with_mock(&["watch", "--json"]))
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("watch");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    // The tools are announced once the generation that listed them is ready.
    let ready = tokio::time::timeout(LIMIT, async {
        let mut ready = false;
        while let Some(line) = lines.next_line().await.expect("read") {
            let event: Value = serde_json::from_str(&line).expect("a JSON line");
            assert!(
                event["ts"].is_u64() && event["server"].is_string(),
                "{line}"
            );
            ready |= event["event"] == "state" && event["state"] == "ready";
            let tools = event["event"] == "tools"
                && event["tools"].as_array().is_some_and(|t| !t.is_empty());
            assert!(!tools || ready, "tools announced before ready: {line}");
            seen.push(event);
            if tools {
                return;
            }
        }
        panic!("watch ended before ready and its tools");
    })
    .await;
    ready.expect("ready and tools within the limit");
    // The state read at start names no generation it does not know (it said 0, then the
    // attempt's event said 1), and the first attempt is told once.
    assert!(
        seen.iter().all(|e| e["generation"] != 0),
        "no line claims generation 0: {seen:?}"
    );
    let connecting = seen.iter().filter(|e| e["state"] == "connecting").count();
    assert!(connecting <= 1, "one connecting line at most: {seen:?}");
    let pid = nix::unistd::Pid::from_raw(child.id().expect("pid") as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).expect("interrupt");
    let rest = tokio::time::timeout(LIMIT, async {
        let mut rest = Vec::new();
        while let Some(line) = lines.next_line().await.expect("read") {
            rest.push(serde_json::from_str::<Value>(&line).expect("json"));
        }
        rest
    })
    .await
    .expect("watch stopped in time");
    assert!(rest.iter().any(|e| e["state"] == "stopped"), "{rest:?}");
    let status = tokio::time::timeout(LIMIT, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
}

/// `tools --url URL` against a remote mock steered into refusing us; also how many requests the
/// mock refused meanwhile.
async fn tools_against(mock: &common::process::MockProcess, url: &str) -> (i32, String) {
    let injected = || async {
        mock.admin_get("state").await["faults_injected"]
            .as_u64()
            .unwrap_or(0)
    };
    let before = injected().await;
    let (code, _, stderr) = run(&["tools", "--url", url]).await;
    let refused = injected().await - before;
    (code, format!("{stderr}\n[faults injected: {refused}]"))
}

#[tokio::test]
async fn permanent_refusals_exit_3_at_once_with_the_cause() {
    let mock = common::process::MockProcess::start("http").await;
    let url = mock.url();
    for (status, cause) in [(401, "unauthorized"), (403, "rejected")] {
        mock.admin("status-fault", serde_json::json!({ "status": status }))
            .await;
        let (code, stderr) = tools_against(&mock, &url).await;
        assert_eq!(code, 3, "{stderr}");
        assert!(stderr.contains(cause), "{stderr}");
        assert!(
            stderr.contains("[faults injected: 1]"),
            "one refused request, no retry loop: {stderr}"
        );
        mock.admin("status-fault/clear", serde_json::json!({}))
            .await;
    }
    let wrong = format!("http://127.0.0.1:{}/no-such-path", mock.port);
    let (code, _, stderr) = run(&["tools", "--url", &wrong]).await;
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains("rejected") && stderr.contains("404"),
        "{stderr}"
    );
    mock.admin("modern-only", serde_json::json!({ "on": true }))
        .await;
    let (code, _, stderr) = run(&["tools", "--url", &url, "--protocol", "2025-11-25"]).await;
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("2026-07-28"), "{stderr}");
}

/// `--transport sse` at a Streamable HTTP endpoint is refused at the first answer, which names
/// the transport to use, instead of being retried until the connect timeout (30 s).
#[tokio::test]
async fn legacy_sse_asked_of_a_streamable_http_endpoint_is_refused_with_the_transport_to_use() {
    let mock = common::process::MockProcess::start("http").await;
    let (code, _, stderr) = run(&["tools", "--url", &mock.url(), "--transport", "sse"]).await;
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains("rejected")
            && stderr.contains("streamable HTTP endpoint")
            && stderr.contains("--transport http")
            && stderr.contains("`auto`"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("retrying"),
        "refused at the first answer: {stderr}"
    );
}

/// A refused connection ends `tools` at once (`cli_wait.rs`) unless `--wait` asks to wait for
/// the server: then it is retried only within that wait.
#[tokio::test]
async fn a_refused_port_is_retried_only_within_the_wait() {
    // Bound, never listening: every connection is refused while it is held.
    let refusing = tokio::net::TcpSocket::new_v4().expect("a socket");
    refusing.bind(([127, 0, 0, 1], 0).into()).expect("bound");
    let port = refusing.local_addr().expect("its address").port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (code, _, stderr) = run(&["tools", "--url", &url, "--wait", "1s"]).await;
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "nothing accepted connections at 127.0.0.1:{port} within 1 s (connection refused)"
        )),
        "{stderr}"
    );
}

#[tokio::test]
async fn falling_back_to_legacy_sse_prints_no_error() {
    let mock = common::process::MockProcess::start("sse").await;
    let (code, stdout, stderr) = run(&["tools", "--url", &mock.url()]).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("mcp__server__echo"), "{stdout}");
    assert!(
        !stderr.contains("ERROR") && !stderr.contains("worker quit"),
        "the fallback is not an error: {stderr}"
    );
}

#[tokio::test]
async fn tools_lists_a_2026_only_server() {
    let mock = common::process::MockProcess::start_with("http", &["--modern-only"]).await;
    let (code, stdout, stderr) = run(&["tools", "--json", "--url", &mock.url()]).await;
    assert_eq!(code, 0, "{stderr}");
    let tools: Value = serde_json::from_str(stdout.trim()).expect("json");
    let tools = tools.as_array().expect("an array");
    assert!(
        tools
            .iter()
            .any(|t| t["public_name"] == "mcp__server__echo"),
        "{stdout}"
    );
    assert!(
        tools.iter().all(|t| t["protocol"] == "2026-07-28"),
        "{stdout}"
    );
}

/// Reads `watch --json` lines until one satisfies `want` (bounded).
async fn watch_until(
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    what: &str,
    want: impl Fn(&Value) -> bool,
) -> Value {
    let found = tokio::time::timeout(LIMIT, async {
        while let Some(line) = lines.next_line().await.expect("read") {
            let event: Value = serde_json::from_str(&line).expect("a JSON line");
            if want(&event) {
                return event;
            }
        }
        panic!("watch ended before {what}");
    })
    .await;
    found.unwrap_or_else(|_| panic!("no {what} within the limit"))
}

#[tokio::test]
async fn watch_on_a_2026_only_server_survives_a_kill_a_restart_and_a_hang() {
    let mut mock = common::process::MockProcess::start_with("http", &["--modern-only"]).await;
    let url = mock.url();
    let mut child = Command::new(mock_binary())
        .args([
            "watch",
            "--json",
            "--url",
            &url,
            "--heartbeat-interval",
            "300ms",
            "--heartbeat-timeout",
            "150ms",
            "--reconnect-initial",
            "50ms",
            "--reconnect-max",
            "500ms",
            "--max-attempts",
            "100",
        ])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("watch");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = |e: &Value| e["state"] == "ready";
    let first = watch_until(&mut lines, "ready", ready).await;
    assert_eq!(first["protocol"], "2026-07-28", "{first}");
    mock.kill().await;
    let lost = watch_until(&mut lines, "the loss", |e| e["state"] == "reconnecting").await;
    assert_eq!(lost["cause"], "stream_closed", "{lost}");
    mock.restart().await;
    watch_until(&mut lines, "ready again", ready).await;
    mock.admin("hang", serde_json::json!({})).await;
    let hung = watch_until(&mut lines, "the hang", |e| {
        e["state"] == "reconnecting" && e["reason"] == "connection_lost"
    })
    .await;
    assert_eq!(hung["cause"], "heartbeat_timeout", "{hung}");
    mock.admin("unhang", serde_json::json!({})).await;
    watch_until(&mut lines, "ready after the hang", ready).await;
    let methods = &mock.admin_get("state").await["methods"];
    assert!(
        methods.get("ping").is_none(),
        "the mock counted pings: {methods}"
    );
    assert!(
        methods["server/discover"].as_u64().unwrap_or(0) >= 1,
        "{methods}"
    );
    let pid = nix::unistd::Pid::from_raw(child.id().expect("pid") as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).expect("interrupt");
    let status = tokio::time::timeout(LIMIT, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    mock.kill().await;
}
