//! No duration flag or key can panic: each at `u64::MAX` seconds is a usage error (exit 2)
//! naming the flag or key. Before the bound, `call --call-timeout 18446744073709551615s` and a
//! config `"timeout": 18446744073709551615` panicked ("overflow when adding duration to
//! instant", exit 101), and `--connect-timeout` at that value made `tools` retry forever.

use super::{run, with_mock};

const HUGE: &str = "18446744073709551615s";

#[tokio::test]
async fn every_duration_flag_at_u64_max_seconds_is_a_usage_error_naming_the_flag() {
    let server_flags = [
        "--call-timeout",
        "--connect-timeout",
        "--heartbeat-interval",
        "--heartbeat-timeout",
        "--reconnect-initial",
        "--reconnect-max",
    ];
    for flag in server_flags {
        for command in [&["call", "echo", "{}"][..], &["tools"], &["watch"]] {
            let mut head = command.to_vec();
            head.extend([flag, HUGE]);
            let (code, _, stderr) = run(&with_mock(&head, &[])).await;
            assert_eq!(code, 2, "{command:?} {flag}: {stderr}");
            assert!(
                stderr.contains(flag) && stderr.contains("at most 24h"),
                "{command:?} {flag}: {stderr}"
            );
        }
    }
    let proxy = [("proxy", "--startup-wait"), ("proxy", "--call-wait")];
    for (command, flag) in proxy {
        let (code, _, stderr) = run(&with_mock(&[command, flag, HUGE], &[])).await;
        assert_eq!(code, 2, "{flag}: {stderr}");
        assert!(stderr.contains(flag), "{flag}: {stderr}");
    }
    let (code, _, stderr) = run(&[
        "login",
        "x",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--wait",
        HUGE,
    ])
    .await;
    assert_eq!(code, 2, "--wait: {stderr}");
    assert!(stderr.contains("--wait"), "{stderr}");
}

#[tokio::test]
async fn a_config_key_at_u64_max_is_a_usage_error_naming_the_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = [
        ("timeout", "18446744073709551615"),
        ("callTimeout", "18446744073709551615"),
        ("connectTimeout", "\"18446744073709551615s\""),
    ];
    for (key, value) in cases {
        let path = dir.path().join(format!("{key}.json"));
        let json = format!(
            r#"{{"mcpServers": {{"s": {{"command": "{}", "args": ["mock-server", "--transport", "stdio"], "{key}": {value}}}}}}}"#,
            super::mock_binary()
        );
        std::fs::write(&path, json).expect("write the config");
        let file = path.to_string_lossy().into_owned();
        let (code, _, stderr) =
            run(&["call", "echo", "{}", "--config", &file, "--server", "s"]).await;
        assert_eq!(code, 2, "{key}: {stderr}");
        assert!(
            stderr.contains(&format!("mcpServers.s.{key}")) && stderr.contains("at most 24h"),
            "{key}: {stderr}"
        );
    }
}

#[tokio::test]
async fn twenty_four_hours_is_accepted_by_every_flag() {
    let (code, stdout, stderr) = run(&with_mock(
        &[
            "call",
            "echo",
            r#"{"text":"ok"}"#,
            "--call-timeout",
            "24h",
            "--connect-timeout",
            "24h",
            "--reconnect-max",
            "24h",
        ],
        &[],
    ))
    .await;
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("ok"), "{stdout}");
}

/// A library host's own numbers are not checked by `resolve()`: a per-call timeout of
/// `Duration::MAX` means "no deadline" (the deadline saturates), not a panic. Before, the call
/// computed `Instant::now() + timeout` and panicked.
#[tokio::test]
async fn a_per_call_timeout_of_duration_max_is_no_deadline_not_a_panic() {
    use mcp_resilient::{Supervisor, ToolRegistry};
    let registry = ToolRegistry::new();
    let config = crate::common::stdio_mock("big", &[]).call_wait(std::time::Duration::MAX);
    assert!(
        Supervisor::spawn(config, &registry).is_err(),
        "a config's call_wait is bounded at resolve"
    );
    let server =
        Supervisor::spawn(crate::common::stdio_mock("big", &[]), &registry).expect("starts");
    server
        .wait_ready(crate::common::LIMIT)
        .await
        .expect("ready");
    let echo = registry.handle("mcp__big__echo").expect("a handle");
    let args = serde_json::json!({"text": "forever"});
    let result = echo
        .call_with(
            args,
            mcp_resilient::call::CallOptions::new().timeout(std::time::Duration::MAX),
        )
        .await
        .expect("answered");
    assert_eq!(
        result.content[0].as_text().map(|t| t.text.as_str()),
        Some("forever")
    );
    server.shutdown().await;
}
