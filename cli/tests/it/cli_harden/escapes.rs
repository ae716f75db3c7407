//! Server text that tries to drive the terminal is shown, not obeyed: against the hostile mock
//! (`--hostile escapes`: title-set, clear screen, OSC 52, C1 CSI, BEL, CR in tool titles,
//! descriptions, names, results, errors, instructions and the child's stderr), the human output
//! of `tools`, `call` and `watch` holds no ESC, no BEL and no U+009B; `--json` output still
//! parses and gives back the original strings. Before, `tools` printed descriptions as they
//! were, and the stderr tail of a dead child went through the same path.

use std::process::Stdio;

use mcp_mock_server::hostile::escapes::{ESCAPES, NAMED};
use serde_json::Value;
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::Command,
};

use super::{
    common::{LIMIT, mock_binary, process::MockProcess},
    run_with, with_mock,
};

const HOSTILE: [&str; 2] = ["--hostile", "escapes"];
/// Every log line, our library's and rmcp's, and a child's stderr lines (logged at info).
const LOUD: [(&str, &str); 1] = [("RUST_LOG", "trace")];

/// Fails if `output` (stdout and stderr of one command) could drive a terminal.
#[track_caller]
fn assert_inert(what: &str, output: &str) {
    for (byte, name) in [
        ('\u{1b}', "ESC"),
        ('\u{7}', "BEL"),
        ('\u{9b}', "CSI (U+009B)"),
    ] {
        assert!(!output.contains(byte), "{what}: {name} printed:\n{output}");
    }
}

#[tokio::test]
async fn tools_prints_hostile_names_and_descriptions_escaped() {
    let (code, stdout, stderr) = run_with(&with_mock(&["tools"], &HOSTILE), &LOUD).await;
    assert_eq!(code, 0, "{stderr}");
    assert_inert("tools", &format!("{stdout}{stderr}"));
    let row = stdout
        .lines()
        .find(|l| l.starts_with("mcp__server__escapes "))
        .unwrap_or_else(|| panic!("no escapes row: {stdout}"));
    assert!(
        row.contains(r"title\u{1b}]0;pwned\u{7} clear\u{1b}[2J") && row.contains(r"csi\u{9b}31m"),
        "the description is shown, escaped: {row}"
    );
    assert_eq!(stdout.lines().count(), stdout.matches('\n').count());
}

#[tokio::test]
async fn tools_json_round_trips_the_original_strings() {
    let (code, stdout, stderr) = run_with(&with_mock(&["tools", "--json"], &HOSTILE), &[]).await;
    assert_eq!(code, 0, "{stderr}");
    assert_inert("tools --json", &stdout);
    let tools: Value = serde_json::from_str(stdout.trim()).expect("tools --json is JSON");
    let tools = tools.as_array().expect("an array");
    let escapes = tools
        .iter()
        .find(|t| t["name"] == "escapes")
        .expect("the escapes tool");
    assert_eq!(escapes["definition"]["description"], ESCAPES);
    assert_eq!(escapes["definition"]["title"], ESCAPES);
    assert!(tools.iter().any(|t| t["name"] == NAMED), "{stdout}");
}

#[tokio::test]
async fn call_results_stay_json_and_errors_are_escaped() {
    let (code, stdout, stderr) = run_with(&with_mock(&["call", "escapes"], &HOSTILE), &LOUD).await;
    assert_eq!(code, 0, "{stderr}");
    assert_inert("call escapes", &format!("{stdout}{stderr}"));
    let result: Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(result["content"][0]["text"], ESCAPES);

    let (code, stdout, stderr) =
        run_with(&with_mock(&["call", "escapes_error"], &HOSTILE), &LOUD).await;
    assert_eq!(code, 1, "a server error exits 1: {stderr}");
    assert_inert("call escapes_error", &format!("{stdout}{stderr}"));
    assert!(stderr.contains(r"refused: title\u{1b}]0;pwned"), "{stderr}");
}

#[tokio::test]
async fn a_dying_childs_stderr_is_escaped_wherever_it_is_shown() {
    let (code, stdout, stderr) =
        run_with(&with_mock(&["call", "escapes_die"], &HOSTILE), &LOUD).await;
    assert_eq!(code, 3, "{stderr}");
    assert_inert("call escapes_die", &format!("{stdout}{stderr}"));

    let exit = ["--hostile", "escapes-exit"];
    let head = ["tools", "--connect-timeout", "1s"];
    let (code, stdout, stderr) = run_with(&with_mock(&head, &exit), &LOUD).await;
    assert_eq!(code, 3, "{stderr}");
    assert_inert("tools on a dying child", &format!("{stdout}{stderr}"));
    assert!(
        stderr.contains(r"last stderr line: title\u{1b}]0;pwned"),
        "the tail is shown, escaped: {stderr}"
    );
}

#[tokio::test]
async fn watch_lines_quote_a_dying_childs_stderr_escaped() {
    let args = with_mock(
        &["watch", "--reconnect-initial", "50ms"],
        &["--hostile", "escapes-exit"],
    );
    let mut child = Command::new(mock_binary())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("watch runs");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let line = tokio::time::timeout(LIMIT, async {
        while let Some(line) = lines.next_line().await.expect("read") {
            if line.contains("last stderr line") {
                return line;
            }
        }
        panic!("watch ended before a death was reported");
    })
    .await
    .expect("a death reported in time");
    assert_inert("watch", &line);
    assert!(line.contains(r"\u{1b}[2J"), "{line}");
    let pid = nix::unistd::Pid::from_raw(child.id().expect("pid") as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).expect("interrupt");
    let rest = tokio::time::timeout(LIMIT, async {
        let mut rest = String::new();
        while let Some(line) = lines.next_line().await.expect("read") {
            rest.push_str(&line);
            rest.push('\n');
        }
        rest
    })
    .await
    .expect("watch stopped in time");
    assert_inert("watch", &rest);
    let status = tokio::time::timeout(LIMIT, child.wait()).await;
    assert_eq!(
        status.expect("exited in time").expect("wait").code(),
        Some(0)
    );
}

#[tokio::test]
async fn a_remote_server_gets_the_same_treatment() {
    let mock = MockProcess::start_with("http", &["--hostile", "escapes"]).await;
    let url = mock.url();
    let (code, stdout, stderr) = run_with(&["tools", "--url", &url], &LOUD).await;
    assert_eq!(code, 0, "{stderr}");
    assert_inert("tools --url", &format!("{stdout}{stderr}"));
    assert!(stdout.contains(r"\u{1b}]52;c;"), "{stdout}");
    let (code, _, stderr) = run_with(&["call", "escapes_error", "--url", &url], &LOUD).await;
    assert_eq!(code, 1, "{stderr}");
    assert_inert("call --url", &stderr);
}
