//! No URL credential in any output: `tools`, `call` and `watch --json` against a URL carrying
//! `user:PASS987@` and `?api_key=SECRET123&x=1`, at `RUST_LOG=trace`, on a refused port and
//! against the mock on both remote transports. Before, reqwest's error text (`error sending
//! request for url (…?api_key=SECRET123&x=1)`) and our own `GET {url} failed` carried them to
//! stderr and into `watch --json` details.

use std::process::Stdio;

use mcp_mock_server::PortHold;
use serde_json::Value;
use tokio::{
    io::{AsyncBufReadExt, AsyncReadExt, BufReader},
    process::Command,
};

use super::{
    common::{LIMIT, mock_binary, process::MockProcess},
    run_with,
};

/// What must never be printed: the password, the query value, and the password as it travels
/// in a Basic `Authorization` header (`user:PASS987` in base64).
const SECRETS: [&str; 3] = ["PASS987", "SECRET123", "dXNlcjpQQVNTOTg3"];

const TRACE: [(&str, &str); 1] = [("RUST_LOG", "trace")];

fn with_credentials(base: &str) -> String {
    let (scheme, rest) = base.split_once("://").expect("a URL");
    format!("{scheme}://user:PASS987@{rest}?api_key=SECRET123&x=1")
}

#[track_caller]
fn assert_clean(what: &str, output: &str) {
    for secret in SECRETS {
        assert!(
            !output.contains(secret),
            "{what}: `{secret}` printed:\n{output}"
        );
    }
}

/// `tools` and `call echo` against `url` (with `transport`); both outputs must be clean.
async fn one_shots(url: &str, transport: &str, expect_code: i32) {
    let commands: [&[&str]; 2] = [&["tools"], &["call", "echo", r#"{"text":"hi"}"#]];
    for command in commands {
        let mut args = command.to_vec();
        args.extend([
            "--url",
            url,
            "--transport",
            transport,
            "--connect-timeout",
            "1s",
        ]);
        let (code, stdout, stderr) = run_with(&args, &TRACE).await;
        assert_eq!(code, expect_code, "{command:?} {url}: {stderr}");
        assert!(!stderr.is_empty(), "trace logs were written");
        assert_clean(
            &format!("{command:?} on {transport}"),
            &format!("{stdout}\n{stderr}"),
        );
    }
}

/// `watch --json` against `url` until a line satisfies `enough`, then SIGINT; every line must
/// be JSON and the whole output clean.
async fn watch_briefly(url: &str, transport: &str, enough: impl Fn(&Value) -> bool) {
    let mut child = Command::new(mock_binary())
        .args(["watch", "--json", "--url", url, "--transport", transport])
        .args(["--reconnect-initial", "50ms", "--reconnect-max", "200ms"])
        .envs(TRACE)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("watch runs");
    let mut stderr = child.stderr.take().expect("stderr");
    let errors = tokio::spawn(async move {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text).await;
        text
    });
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut seen = Vec::new();
    let reached = tokio::time::timeout(LIMIT, async {
        while let Some(line) = lines.next_line().await.expect("read") {
            let event: Value = serde_json::from_str(&line).expect("a JSON line");
            seen.push(line);
            if enough(&event) {
                return;
            }
        }
        panic!("watch ended early: {seen:?}");
    })
    .await;
    reached.unwrap_or_else(|_| panic!("watch reached the wanted event in time: {seen:?}"));
    let pid = nix::unistd::Pid::from_raw(child.id().expect("pid") as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).expect("interrupt");
    let rest = tokio::time::timeout(LIMIT, async {
        let mut rest = Vec::new();
        while let Some(line) = lines.next_line().await.expect("read") {
            rest.push(line);
        }
        rest
    })
    .await
    .expect("watch stopped in time");
    let status = tokio::time::timeout(LIMIT, child.wait())
        .await
        .expect("watch exited in time")
        .expect("wait");
    assert_eq!(status.code(), Some(0));
    let stderr = tokio::time::timeout(LIMIT, errors)
        .await
        .expect("stderr read in time")
        .expect("stderr task");
    let all = format!("{}\n{}\n{stderr}", seen.join("\n"), rest.join("\n"));
    assert_clean(&format!("watch --json on {transport}"), &all);
}

/// A port where nothing listens, refusing every connection for as long as the hold lives (a port
/// that was merely free a moment ago may be taken by a parallel test's server).
fn refusing_port() -> PortHold {
    PortHold::new().expect("a port")
}

#[tokio::test]
async fn a_refused_url_with_credentials_prints_none_of_them() {
    let hold = refusing_port();
    let port = hold.port();
    for (transport, path) in [("http", "mcp"), ("sse", "sse"), ("auto", "mcp")] {
        let url = with_credentials(&format!("http://127.0.0.1:{port}/{path}"));
        one_shots(&url, transport, 3).await;
        let reconnecting = |e: &Value| e["state"] == "reconnecting";
        watch_briefly(&url, transport, reconnecting).await;
    }
}

#[tokio::test]
async fn a_live_server_behind_a_url_with_credentials_prints_none_of_them() {
    for kind in ["http", "sse"] {
        let mock = MockProcess::start(kind).await;
        let url = with_credentials(&mock.url());
        one_shots(&url, kind, 0).await;
        watch_briefly(&url, kind, |e| e["state"] == "ready").await;
    }
}

#[tokio::test]
async fn the_redacted_url_keeps_what_makes_the_message_useful() {
    let hold = refusing_port();
    let port = hold.port();
    let url = with_credentials(&format!("http://127.0.0.1:{port}/sse"));
    let args = [
        "tools",
        "--url",
        &url,
        "--transport",
        "sse",
        "--connect-timeout",
        "1s",
    ];
    let (code, _, stderr) = run_with(&args, &[]).await;
    assert_eq!(code, 3, "{stderr}");
    let shown = format!("http://REDACTED@127.0.0.1:{port}/sse?api_key=REDACTED&x=REDACTED");
    assert!(stderr.contains(&shown), "{stderr}");
}
