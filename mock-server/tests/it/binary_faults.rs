//! The remote fault flags of the binary: `--fail-status` and companions, `--modern-only`,
//! `--redirect` and `--ignore-sigterm`.

use crate::common;
use crate::raw;

use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;

use common::{http_client, within};
use mcp_mock_server::spawn_process;
use raw::{initialize, open_session, ping, post, sigterm_and_see_it_pending};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::process::{Child, Command};

const BINARY: &str = env!("CARGO_BIN_EXE_mcp-mock-server");

/// `--transport http` plus `flags`; returns the child and its `/mcp` URL.
async fn spawn_http(flags: &[&str]) -> (Child, String) {
    let (child, port) = within(
        "listening",
        spawn_process(BINARY, flags, "http", 0, common::DEADLINE),
    )
    .await
    .expect("spawn");
    (child, format!("http://127.0.0.1:{port}/mcp"))
}

async fn sigkill(mut child: Child) {
    child.start_kill().expect("SIGKILL");
    let status = within("killed", child.wait()).await.expect("wait");
    assert_eq!(status.signal(), Some(9));
}

#[tokio::test]
async fn fail_status_flags_answer_every_second_ping() {
    let flags = [
        "--fail-status",
        "503",
        "--fail-every",
        "2",
        "--retry-after",
        "3",
        "--fail-methods",
        "ping,tools/call",
    ];
    let (child, url) = spawn_http(&flags).await;
    let session = open_session(&url).await;
    let mut statuses = Vec::new();
    for id in 1..=4 {
        let answer = within("ping", post(&url, Some(&session), &ping(id)).send())
            .await
            .expect("ping");
        let retry_after = answer.headers().get("retry-after").cloned();
        statuses.push((answer.status(), retry_after.is_some_and(|v| v == "3")));
    }
    let ok = (StatusCode::OK, false);
    let failed = (StatusCode::SERVICE_UNAVAILABLE, true);
    assert_eq!(statuses, [ok, failed, ok, failed]);
    sigkill(child).await;
}

#[tokio::test]
async fn modern_only_and_redirect_flags_answer_initialize() {
    let (child, url) = spawn_http(&["--modern-only"]).await;
    let answer = within("initialize", post(&url, None, &initialize(json!(1))).send())
        .await
        .expect("post");
    assert_eq!(answer.status(), StatusCode::BAD_REQUEST);
    let body: Value = within("body", answer.json()).await.expect("json");
    assert_eq!(body["error"]["code"], json!(-32022));
    sigkill(child).await;

    let location = "http://127.0.0.1:9/mcp";
    let (child, url) = spawn_http(&["--redirect", location]).await;
    let no_follow = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let answer = within(
        "initialize",
        no_follow
            .post(&url)
            .body(initialize(json!(1)).to_string())
            .send(),
    )
    .await
    .expect("post");
    assert_eq!(answer.status(), StatusCode::TEMPORARY_REDIRECT);
    assert_eq!(answer.headers()["location"], location);
    sigkill(child).await;
}

#[tokio::test]
async fn an_unusable_fault_flag_exits_2() {
    for flags in [
        &["--transport", "http", "--fail-status", "42"][..],
        &[
            "--transport",
            "http",
            "--fail-status",
            "503",
            "--retry-after",
            "a\u{7f}b",
        ],
        &["--transport", "stdio", "--stateless"],
    ] {
        let mut child = Command::new(BINARY)
            .args(flags)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn");
        let status = within("exit", child.wait()).await.expect("wait");
        assert_eq!(status.code(), Some(2), "{flags:?}");
    }
}

#[tokio::test]
async fn ignore_sigterm_keeps_the_http_server_serving_until_sigkill() {
    let (child, url) = spawn_http(&["--ignore-sigterm"]).await;
    let pid = child.id().expect("pid");
    sigterm_and_see_it_pending(pid).await;
    let state = url.replace("/mcp", "/_mock/state");
    let state: Value = within("state", http_client().get(state).send())
        .await
        .expect("still serving after SIGTERM")
        .json()
        .await
        .expect("json");
    assert_eq!(state["pid"], json!(pid));
    sigkill(child).await;
}
