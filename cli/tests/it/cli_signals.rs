//! SIGINT and SIGTERM end every CLI command within the close sequence's bound: the servers are
//! shut down first (a stdio child reaped), and the exit code says what happened.

use std::{
    process::Stdio,
    time::{Duration, Instant},
};

use crate::common::{LIMIT, alive, mock_binary};
use nix::{
    sys::signal::{Signal, kill},
    unistd::Pid,
};
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
    sync::watch,
};

/// How long a command may take to end after the signal (debug build, loaded machine).
const EXIT: Duration = Duration::from_secs(2);

/// `mcp-resilient <args…>` with stderr kept line by line; its upstream's stderr shows at info.
fn start(args: &[&str]) -> (Child, watch::Receiver<Vec<String>>) {
    let mut child = Command::new(mock_binary())
        .args(args)
        .env("RUST_LOG", "info,mcp_resilient::stderr=info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the CLI starts");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = watch::channel(Vec::new());
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tx.send_modify(|all| all.push(line));
        }
    });
    (child, rx)
}

/// The first stderr line containing `needle` (at most [`LIMIT`]).
async fn line(log: &mut watch::Receiver<Vec<String>>, needle: &str) -> String {
    let found = tokio::time::timeout(LIMIT, async {
        let lines = log
            .wait_for(|lines| lines.iter().any(|l| l.contains(needle)))
            .await
            .expect("stderr is read");
        lines.iter().find(|l| l.contains(needle)).cloned()
    });
    match found.await {
        Ok(Some(line)) => line,
        _ => panic!("no '{needle}' on stderr: {:?}", log.borrow()),
    }
}

/// The pid in the mock server's "ready pid=N" line.
async fn upstream_pid(log: &mut watch::Receiver<Vec<String>>) -> u32 {
    let ready = line(log, "ready pid=").await;
    let digits = ready.split("ready pid=").nth(1).unwrap_or_default();
    let digits: String = digits.chars().take_while(char::is_ascii_digit).collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no pid in {ready}"))
}

/// Sends `signal` and returns the exit code and how long it took.
async fn signal_and_wait(child: &mut Child, signal: Signal) -> (Option<i32>, Duration) {
    let pid = Pid::from_raw(child.id().expect("it runs") as i32);
    kill(pid, signal).expect("signal");
    let sent = Instant::now();
    let status = tokio::time::timeout(LIMIT, child.wait())
        .await
        .expect("the CLI ended in time")
        .expect("wait");
    (status.code(), sent.elapsed())
}

fn stdio_mock<'a>(head: &[&'a str]) -> Vec<&'a str> {
    let mut args = head.to_vec();
    args.extend(["--stdio", "--", mock_binary(), "mock-server"]);
    args.extend(["--transport", "stdio"]);
    args
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_tools_while_it_retries_a_refused_connect() {
    // Port 1 refuses: with `--wait`, `tools` retries for 30 s unless told to stop.
    let (mut child, mut log) =
        start(&["tools", "--url", "http://127.0.0.1:1/mcp", "--wait", "30s"]);
    line(&mut log, "connection failed; retrying").await;
    let (code, took) = signal_and_wait(&mut child, Signal::SIGTERM).await;
    assert_eq!(code, Some(143), "128 + SIGTERM");
    assert!(took < EXIT, "took {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_ends_a_call_in_flight_and_reaps_its_server() {
    let (mut child, mut log) = start(&stdio_mock(&["call", "sleep", r#"{"ms": 60000}"#]));
    let server = upstream_pid(&mut log).await;
    line(&mut log, "connected").await;
    let (code, took) = signal_and_wait(&mut child, Signal::SIGINT).await;
    assert_eq!(code, Some(130), "128 + SIGINT");
    assert!(took < EXIT, "took {took:?}");
    assert!(!alive(server), "the server {server} outlived the command");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_watch_and_reaps_its_server() {
    let (mut child, mut log) = start(&stdio_mock(&["watch", "--json"]));
    let server = upstream_pid(&mut log).await;
    line(&mut log, "connected").await;
    // Before, only SIGINT was caught: SIGTERM killed `watch` and left the server running.
    let (code, took) = signal_and_wait(&mut child, Signal::SIGTERM).await;
    assert_eq!(code, Some(0));
    assert!(took < EXIT, "took {took:?}");
    assert!(!alive(server), "the server {server} outlived watch");
}
