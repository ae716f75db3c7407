//! The binary in stdio mode, driven by an rmcp client over the child's pipes.

use crate::common;

use std::path::PathBuf;
use std::process::Stdio;

use common::{Client, call, text, within};
use rmcp::ServiceExt;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_mcp-mock-server"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn mock server")
}

async fn connect(child: &mut Child) -> rmcp::service::RunningService<rmcp::RoleClient, Client> {
    let stdout = child.stdout.take().expect("stdout");
    let stdin = child.stdin.take().expect("stdin");
    let (client, _rx) = Client::new();
    within("stdio initialize", client.serve((stdout, stdin)))
        .await
        .expect("initialize")
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mock-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

#[tokio::test]
async fn stdio_serves_tools_in_order_and_answers_each_builtin() {
    let mut child = spawn(&["--boot-id", "b0b0", "--extra-tools", "2"]);
    let pid = child.id().expect("pid");
    let running = connect(&mut child).await;
    let info = running.peer_info().expect("peer info");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("mcp-mock-server")
    );
    assert_eq!(
        info.capabilities
            .tools
            .as_ref()
            .and_then(|t| t.list_changed),
        Some(true)
    );

    let tools = within("list", running.list_all_tools())
        .await
        .expect("list");
    let names: Vec<_> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "echo",
            "add",
            "sleep",
            "peek",
            "whoami",
            "fail",
            "crash",
            "hang",
            "set_tools",
            "block",
            "wedge",
            "confirm",
            "end_listens",
            "bump",
            "log",
            "progress",
            "extra_0",
            "extra_1"
        ]
    );

    assert_eq!(
        text(&call(&running, "echo", json!({"text": "hi"})).await),
        "hi"
    );
    assert_eq!(
        text(&call(&running, "add", json!({"a": 2, "b": 3})).await),
        "5"
    );
    assert_eq!(
        text(&call(&running, "sleep", json!({"ms": 1})).await),
        "slept 1ms"
    );
    let peek = tools.iter().find(|t| t.name == "peek").expect("peek");
    let hints = peek.annotations.as_ref().and_then(|a| a.read_only_hint);
    assert_eq!(hints, Some(true), "peek is annotated read-only");
    assert_eq!(
        text(&call(&running, "peek", json!({"ms": 1})).await),
        "b0b0"
    );
    let who = call(&running, "whoami", json!({})).await;
    let structured = who.structured_content.clone().expect("structured content");
    assert_eq!(
        structured,
        json!({
            "boot_id": "b0b0",
            "pid": pid,
            "calls": 5,
            "methods": {"initialize": 1, "tools/list": 1, "tools/call": 5},
            "counter": 0,
            "resource_subscriptions": 0,
            "log_level": null,
            "cancelled": 0
        })
    );
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&text(&who)).ok(),
        Some(structured)
    );
    let failed = call(&running, "fail", json!({"message": "nope"})).await;
    assert_eq!(
        (failed.is_error, text(&failed)),
        (Some(true), "nope".to_owned())
    );
    let failed = call(&running, "fail", json!({})).await;
    assert_eq!(text(&failed), "tool failed");

    drop(running);
    let status = within("exit after stdin EOF", child.wait())
        .await
        .expect("wait");
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn stdio_crash_exits_with_the_code_after_the_reply() {
    let mut child = spawn(&[]);
    let running = connect(&mut child).await;
    let reply = call(&running, "crash", json!({"code": 7})).await;
    assert_eq!(text(&reply), "crashing");
    let status = within("crash exit", child.wait()).await.expect("wait");
    assert_eq!(status.code(), Some(7));
}

#[tokio::test]
async fn stdio_set_tools_sends_list_changed() {
    let mut child = spawn(&[]);
    let stdout = child.stdout.take().expect("stdout");
    let stdin = child.stdin.take().expect("stdin");
    let (client, mut changed) = Client::new();
    let running = within("initialize", client.serve((stdout, stdin)))
        .await
        .expect("initialize");
    let reply = call(
        &running,
        "set_tools",
        json!({"add": ["zz"], "remove": ["add"]}),
    )
    .await;
    // One added, one removed.
    let count = mcp_mock_server::BUILTINS.len();
    assert_eq!(text(&reply), format!("ok {count}"));
    within("list_changed", changed.recv())
        .await
        .expect("notification");
    let tools = within("list", running.list_all_tools())
        .await
        .expect("list");
    assert_eq!(tools.last().map(|t| t.name.as_ref()), Some("zz"));
    assert!(tools.iter().all(|t| t.name != "add"));
    assert_eq!(
        text(&call(&running, "zz", json!({"text": "dyn"})).await),
        "dyn"
    );
}

#[tokio::test]
async fn lock_file_overlap_exits_99_and_is_recorded() {
    let dir = scratch("lock");
    let lock = dir.join("server.lock");
    let _ = std::fs::remove_file(dir.join("server.lock.overlap"));
    let lock_arg = lock.to_str().expect("utf-8 path");
    let mut first = spawn(&["--lock-file", lock_arg, "--ignore-stdin-eof"]);
    let mut stderr = BufReader::new(first.stderr.take().expect("stderr")).lines();
    let ready = within("ready line", stderr.next_line())
        .await
        .expect("read")
        .expect("line");
    assert!(ready.contains(" ready pid="), "{ready}");

    let mut second = spawn(&["--lock-file", lock_arg]);
    let second_pid = second.id().expect("pid");
    let status = within("overlap exit", second.wait()).await.expect("wait");
    assert_eq!(status.code(), Some(99));
    let overlap = std::fs::read_to_string(dir.join("server.lock.overlap")).expect("overlap file");
    assert_eq!(overlap, format!("overlap {second_pid}\n"));

    first.start_kill().expect("kill");
    within("first exit", first.wait()).await.expect("wait");
    let mut third = spawn(&["--lock-file", lock_arg]);
    drop(third.stdin.take());
    let status = within("third exit", third.wait()).await.expect("wait");
    assert_eq!(status.code(), Some(0));
}

#[tokio::test]
async fn bad_arguments_exit_2() {
    let mut child = spawn(&["--transport", "carrier-pigeon"]);
    let status = within("exit", child.wait()).await.expect("wait");
    assert_eq!(status.code(), Some(2));
}

#[tokio::test]
async fn stdio_hang_answers_nothing_and_survives_stdin_eof() {
    let mut child = spawn(&[]);
    let running = connect(&mut child).await;
    common::ping(&running).await.expect("ping before hang");
    let hang = tokio::time::timeout(
        std::time::Duration::from_millis(300),
        running.call_tool(rmcp::model::CallToolRequestParams::new("hang")),
    )
    .await;
    assert!(hang.is_err(), "hang answered: {hang:?}");
    let ping = tokio::time::timeout(
        std::time::Duration::from_millis(300),
        common::ping(&running),
    )
    .await;
    assert!(ping.is_err(), "ping answered while hung: {ping:?}");
    drop(running);
    let alive = tokio::time::timeout(std::time::Duration::from_millis(300), child.wait()).await;
    assert!(
        alive.is_err(),
        "exited after stdin EOF while hung: {alive:?}"
    );
    child.start_kill().expect("kill");
    within("killed", child.wait()).await.expect("wait");
}
