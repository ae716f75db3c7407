//! A host that speaks to `mcp-resilient proxy …` line by line, with no MCP client in between:
//! it decides when it reads the proxy's stdout (or stops reading), when it closes stdin, and
//! what the proxy's resources are (`/proc/<pid>/status`).

use std::{process::Stdio, time::Duration};

use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines},
    process::{Child, ChildStdin, ChildStdout},
    sync::watch,
};

use super::{LIMIT, mock_binary};

/// The proxy process, its stdio, and its stderr lines as they come.
pub struct RawHost {
    pub child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
    log: watch::Receiver<Vec<String>>,
}

impl RawHost {
    /// Starts `mcp-resilient proxy <args…>` with `RUST_LOG=rust_log` (the CLI's own default
    /// filter when `None`: warnings and errors).
    pub async fn start(args: &[&str], rust_log: Option<&str>) -> RawHost {
        let mut command = tokio::process::Command::new(mock_binary());
        command
            .arg("proxy")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env_remove("RUST_LOG")
            .kill_on_drop(true);
        if let Some(filter) = rust_log {
            command.env("RUST_LOG", filter);
        }
        let mut child = command.spawn().expect("the proxy starts");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, log) = watch::channel(Vec::new());
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tx.send_modify(|all| all.push(line));
            }
        });
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
        RawHost {
            child,
            stdin,
            stdout,
            log,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id().expect("the proxy runs")
    }

    /// Writes one message to the proxy's stdin.
    pub async fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        let mut line = message.to_string();
        line.push('\n');
        tokio::time::timeout(LIMIT, stdin.write_all(line.as_bytes()))
            .await
            .expect("the proxy takes its input in time")
            .expect("write to the proxy");
    }

    /// The next message from the proxy (at most [`LIMIT`]); `None` once it closed stdout.
    pub async fn read(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(LIMIT, self.stdout.next_line())
            .await
            .expect("the proxy says something in time")
            .expect("read the proxy's stdout")?;
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
    }

    /// `initialize` (2025-11-25) and `notifications/initialized`; returns what came before the
    /// answer (nothing should).
    pub async fn initialize(&mut self) -> Vec<Value> {
        self.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw-host", "version": "0.0.0"}
            }}),
        )
        .await;
        let mut before = Vec::new();
        loop {
            let message = self.read().await.expect("an initialize answer");
            if message["id"] == json!(0) {
                assert!(message.get("result").is_some(), "{message}");
                break;
            }
            before.push(message);
        }
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        before
    }

    /// A `tools/call` request.
    pub fn call(id: u64, tool: &str, arguments: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": tool, "arguments": arguments}})
    }

    /// Closes the proxy's stdin, as a host that leaves does.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Waits for the proxy to exit, at most `limit`.
    pub async fn exit_within(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        tokio::time::timeout(limit, self.child.wait())
            .await
            .ok()
            .map(|status| status.expect("wait for the proxy"))
    }

    /// Waits (at most `limit`) for a stderr line containing `needle`.
    pub async fn wait_log(&self, needle: &str, limit: Duration) {
        let mut log = self.log.clone();
        let found = |lines: &Vec<String>| lines.iter().any(|l| l.contains(needle));
        let waited = tokio::time::timeout(limit, async { log.wait_for(found).await.is_ok() });
        if waited.await != Ok(true) {
            panic!("the proxy never logged '{needle}': {:?}", self.log_lines());
        }
    }

    /// Every stderr line so far.
    pub fn log_lines(&self) -> Vec<String> {
        self.log.borrow().clone()
    }

    /// The proxy's peak resident memory so far (`VmHWM`), in bytes.
    pub fn peak_rss(&self) -> u64 {
        peak_rss(self.pid())
    }
}

/// `VmHWM` of `pid`, in bytes (0 if it cannot be read).
pub fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}
