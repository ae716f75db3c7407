//! Raw JSON-RPC helpers for the fault tests: Streamable HTTP requests without an rmcp client
//! (to see statuses and headers), a stdio child driven line by line (to see every message in
//! order), and the kernel's view of a process's pending signals.
#![allow(dead_code, unreachable_pub)]

use std::process::Stdio as Piped;
use std::time::Duration;

use futures::StreamExt;
use mcp_mock_server::{MockOptions, MockServer, MockTransport};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::common::{http_client, sse_events, within};

/// How long a test waits to be sure that something did NOT arrive (the faults it checks
/// last far longer).
pub const QUIET: Duration = Duration::from_millis(300);

pub fn initialize(id: Value) -> Value {
    let params = json!({
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}
    });
    request(id, "initialize", params)
}

pub fn request(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

pub fn ping(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

pub fn call(id: u64, tool: &str, arguments: Value) -> Value {
    request(
        json!(id),
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
}

pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A Streamable HTTP POST of `body`, with the session id when given.
pub fn post(url: &str, session: Option<&str>, body: &Value) -> reqwest::RequestBuilder {
    let request = http_client()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_string());
    match session {
        Some(session) => request.header("mcp-session-id", session),
        None => request,
    }
}

/// Initializes a Streamable HTTP session by hand and returns its id.
pub async fn open_session(url: &str) -> String {
    let init = within("initialize", post(url, None, &initialize(json!(1))).send())
        .await
        .expect("initialize");
    assert_eq!(init.status(), reqwest::StatusCode::OK);
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .expect("ascii session id")
        .to_owned();
    drop(init);
    let initialized = serde_json::from_str(INITIALIZED).expect("json");
    let sent = within(
        "initialized",
        post(url, Some(&session), &initialized).send(),
    )
    .await
    .expect("initialized");
    assert!(sent.status().is_success(), "{}", sent.status());
    session
}

/// The first JSON-RPC message of a response (an SSE stream, or a JSON body).
pub async fn first_message(response: reqwest::Response) -> Value {
    let is_sse = response
        .headers()
        .get("content-type")
        .is_some_and(|ct| ct.as_bytes().starts_with(b"text/event-stream"));
    if !is_sse {
        let text = within("json body", response.text()).await.expect("body");
        return serde_json::from_str(&text).expect("json body");
    }
    let mut events = sse_events(response);
    loop {
        let event = within("message event", events.next()).await.expect("event");
        if !event.data.is_empty() {
            return serde_json::from_str(&event.data).expect("json event");
        }
    }
}

/// POSTs `body` to `/_mock/<route>` and returns the status and JSON answer.
pub async fn admin(server: &MockServer, route: &str, body: Value) -> (reqwest::StatusCode, Value) {
    let url = format!("http://{}/_mock/{route}", server.addr());
    let response = within(route, http_client().post(url).json(&body).send())
        .await
        .expect("admin route");
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// `GET /_mock/state` as JSON.
pub async fn mock_state(server: &MockServer) -> Value {
    let url = format!("http://{}/_mock/state", server.addr());
    within("state", http_client().get(url).send())
        .await
        .expect("state")
        .json()
        .await
        .expect("json")
}

/// A header's value, if present and ASCII.
pub fn header<'a>(response: &'a reqwest::Response, name: &str) -> Option<&'a str> {
    response.headers().get(name).and_then(|v| v.to_str().ok())
}

/// An in-process server speaking `transport` on a free port.
pub async fn start(transport: MockTransport) -> MockServer {
    let opts = MockOptions {
        transport,
        ..MockOptions::default()
    };
    within("start", MockServer::start(opts))
        .await
        .expect("start")
}

/// A stdio mock server process driven line by line.
pub struct StdioChild {
    pub child: Child,
    pub stdin: ChildStdin,
    pub lines: Lines<BufReader<ChildStdout>>,
}

impl StdioChild {
    pub fn spawn(args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-mock-server"))
            .args(args)
            .stdin(Piped::piped())
            .stdout(Piped::piped())
            .stderr(Piped::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn mock server");
        let stdin = child.stdin.take().expect("stdin");
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        Self {
            child,
            stdin,
            lines,
        }
    }

    pub async fn send(&mut self, message: &Value) {
        let line = format!("{message}\n");
        within("write a message", self.stdin.write_all(line.as_bytes()))
            .await
            .expect("write");
    }

    pub async fn recv(&mut self) -> Value {
        let line = within("read a message", self.lines.next_line())
            .await
            .expect("read")
            .expect("a line before EOF");
        serde_json::from_str(&line).expect("a JSON line")
    }

    /// The next message if one arrives within [`QUIET`] (`next_line` is cancel safe).
    pub async fn recv_within_quiet(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(QUIET, self.lines.next_line())
            .await
            .ok()?;
        Some(serde_json::from_str(&line.expect("read")?).expect("a JSON line"))
    }

    /// `initialize` (id 1), its answer, then `notifications/initialized`.
    pub async fn handshake(&mut self) {
        self.send(&initialize(json!(1))).await;
        let reply = self.recv().await;
        assert_eq!(reply["id"], json!(1), "{reply}");
        self.send(&serde_json::from_str(INITIALIZED).expect("json"))
            .await;
    }

    /// SIGKILL, then reaps.
    pub async fn kill(mut self) {
        self.child.start_kill().expect("SIGKILL");
        within("killed", self.child.wait()).await.expect("wait");
    }
}

/// Whether SIGTERM is pending for the whole process `pid` (the `ShdPnd` mask of
/// `/proc/<pid>/status`): delivered, but blocked in every thread.
pub fn sigterm_pending(pid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|line| line.strip_prefix("ShdPnd:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (libc_sigterm() - 1)) != 0)
}

fn libc_sigterm() -> u32 {
    nix::sys::signal::Signal::SIGTERM as u32
}

/// Sends SIGTERM to `pid`, then waits (bounded) until the kernel shows it pending.
pub async fn sigterm_and_see_it_pending(pid: u32) {
    let target = nix::unistd::Pid::from_raw(i32::try_from(pid).expect("pid fits i32"));
    nix::sys::signal::kill(target, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    within("SIGTERM pending", async {
        while !sigterm_pending(pid) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
}
