//! The remote mock server as a separate process: started on 127.0.0.1, SIGKILLed, restarted on
//! the same port, and steered through its `/_mock/` admin routes.
//!
//! The port is held ([`PortHold`]) from before the first start until the handle is dropped:
//! while the process is killed, a connection to it is refused, and no other test's server can
//! take the port before the restart.

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use mcp_mock_server::PortHold;
use serde_json::Value;
use tokio::process::Child;

use super::{LIMIT, mock_binary};

/// The limit of each wait on the process: its start, its exit, one admin request. The
/// benchmark's, which starts mocks beside thousands of connections.
pub const PROCESS_LIMIT: Duration = Duration::from_secs(30);

/// One mock server process (`sse` or `http`), or a handle on one this process did not start.
pub struct MockProcess {
    child: Option<Child>,
    pub kind: &'static str,
    pub port: u16,
    /// Extra flags of every start (`--modern-only`, say).
    flags: Vec<&'static str>,
    http: reqwest::Client,
    /// The port, for the life of a process this handle started.
    hold: Option<PortHold>,
}

impl MockProcess {
    /// Starts `mcp-resilient mock-server --transport KIND --port 0`.
    pub async fn start(kind: &'static str) -> MockProcess {
        Self::start_with(kind, &[]).await
    }

    /// Starts it with extra flags, kept for every restart.
    pub async fn start_with(kind: &'static str, flags: &[&'static str]) -> MockProcess {
        Self::try_start_with(kind, flags)
            .await
            .unwrap_or_else(|why| panic!("the mock server starts: {why}"))
    }

    /// [`start`](Self::start), or why the mock did not report its port in time.
    pub async fn try_start(kind: &'static str) -> Result<MockProcess, String> {
        Self::try_start_with(kind, &[]).await
    }

    /// [`start_with`](Self::start_with), or why the mock did not report its port in time.
    pub async fn try_start_with(
        kind: &'static str,
        flags: &[&'static str],
    ) -> Result<MockProcess, String> {
        let hold = PortHold::new().map_err(|e| format!("hold a port: {e}"))?;
        let mut process = Self::attach(kind, hold.port());
        process.flags = flags.to_vec();
        process.hold = Some(hold);
        process.try_spawn().await?;
        Ok(process)
    }

    /// A handle on a mock (or a proxy in front of one) that this process did not start: it can
    /// build URLs and use the admin routes, not kill.
    pub fn attach(kind: &'static str, port: u16) -> MockProcess {
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("a reqwest client without a proxy");
        MockProcess {
            child: None,
            kind,
            port,
            flags: Vec::new(),
            http,
            hold: None,
        }
    }

    /// Spawns the process; returns the moment its `LISTENING` line was read (it listens at
    /// most that much earlier: the line is printed right after the bind).
    async fn try_spawn(&mut self) -> Result<Instant, String> {
        let mut prefix = vec!["mock-server"];
        prefix.extend(&self.flags);
        let (child, port) = mcp_mock_server::spawn_process(
            mock_binary(),
            &prefix,
            self.kind,
            self.port,
            PROCESS_LIMIT,
        )
        .await
        .map_err(|e| format!("spawn mock: {e}"))?;
        let listening = Instant::now();
        self.port = port;
        self.child = Some(child);
        Ok(listening)
    }

    /// The MCP URL of this server.
    pub fn url(&self) -> String {
        match self.kind {
            "sse" => format!("http://127.0.0.1:{}/sse", self.port),
            _ => format!("http://127.0.0.1:{}/mcp", self.port),
        }
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    /// SIGKILLs the process and reaps it (nothing when it is not running).
    pub async fn kill(&mut self) {
        if self.child.is_some() {
            self.try_kill().await.unwrap_or_else(|why| panic!("{why}"));
        }
    }

    /// SIGKILLs the process; returns the moment the signal was sent. Reaps it before returning.
    pub async fn try_kill(&mut self) -> Result<Instant, String> {
        let mut child = self.child.take().ok_or("mock not running")?;
        child.start_kill().map_err(|e| format!("kill mock: {e}"))?;
        let at = Instant::now();
        tokio::time::timeout(PROCESS_LIMIT, child.wait())
            .await
            .map_err(|_| "mock not reaped in time")?
            .map_err(|e| format!("wait for mock: {e}"))?;
        Ok(at)
    }

    /// Starts a new process on the same port.
    pub async fn restart(&mut self) {
        self.try_restart()
            .await
            .unwrap_or_else(|why| panic!("restart: {why}"));
    }

    /// Starts a new process on the same port (killing the running one first); returns when it
    /// listens.
    pub async fn try_restart(&mut self) -> Result<Instant, String> {
        if self.child.is_some() {
            self.try_kill().await?;
        }
        self.try_spawn().await
    }

    /// POSTs a JSON body to `/_mock/<path>`.
    pub async fn admin(&self, path: &str, body: Value) -> Value {
        self.try_admin(path, body)
            .await
            .unwrap_or_else(|why| panic!("{why}"))
    }

    /// POSTs a JSON body to `/_mock/<path>`; an answer that is not a success is an error.
    pub async fn try_admin(&self, path: &str, body: Value) -> Result<Value, String> {
        let url = format!("http://127.0.0.1:{}/_mock/{path}", self.port);
        let response = tokio::time::timeout(PROCESS_LIMIT, self.http.post(url).json(&body).send())
            .await
            .map_err(|_| format!("admin {path} timed out"))?
            .map_err(|e| format!("admin {path}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("admin {path}: {}", response.status()));
        }
        response
            .json()
            .await
            .map_err(|e| format!("admin {path}: {e}"))
    }

    /// GETs `/_mock/<path>`.
    pub async fn admin_get(&self, path: &str) -> Value {
        self.try_admin_get(path)
            .await
            .unwrap_or_else(|why| panic!("{why}"))
    }

    /// GETs `/_mock/<path>`.
    pub async fn try_admin_get(&self, path: &str) -> Result<Value, String> {
        let url = format!("http://127.0.0.1:{}/_mock/{path}", self.port);
        let response = tokio::time::timeout(PROCESS_LIMIT, self.http.get(url).send())
            .await
            .map_err(|_| format!("admin {path} timed out"))?
            .map_err(|e| format!("admin {path}: {e}"))?;
        response
            .json()
            .await
            .map_err(|e| format!("admin {path}: {e}"))
    }

    /// Empties the mock's request log.
    pub async fn try_clear_requests(&self) -> Result<(), String> {
        self.try_admin("requests/clear", serde_json::json!({}))
            .await
            .map(drop)
    }

    /// The mock's request log.
    pub async fn try_requests(&self) -> Result<Vec<Value>, String> {
        match self.try_admin_get("requests").await? {
            Value::Array(list) => Ok(list),
            other => Err(format!("requests: {other}")),
        }
    }

    /// How many requests of each JSON-RPC method the server received since it started.
    pub async fn try_methods(&self) -> Result<BTreeMap<String, u64>, String> {
        let state = self.try_admin_get("state").await?;
        serde_json::from_value(state["methods"].clone()).map_err(|e| format!("state.methods: {e}"))
    }

    /// Waits (bounded) until the server has received `count` requests of `method`: a call
    /// counted there is in the server's hands.
    pub async fn wait_requests(&self, method: &str, count: u64) {
        let wait = async {
            loop {
                let methods = self
                    .try_methods()
                    .await
                    .unwrap_or_else(|why| panic!("{why}"));
                if methods.get(method).copied().unwrap_or(0) >= count {
                    return;
                }
                tokio::task::yield_now().await;
            }
        };
        tokio::time::timeout(LIMIT, wait)
            .await
            .unwrap_or_else(|_| panic!("{count} {method} requests not seen within {LIMIT:?}"));
    }

    /// Waits (bounded) until the server holds `count` open notification streams (SSE streams,
    /// or 2026-07-28 `subscriptions/listen` requests), so notifications have a way to travel.
    pub async fn wait_streams(&self, count: u64) {
        let wait = async {
            loop {
                let state = self.admin_get("state").await;
                let open =
                    state["streams"].as_u64().unwrap_or(0) + state["listens"].as_u64().unwrap_or(0);
                if open >= count {
                    return;
                }
                tokio::task::yield_now().await;
            }
        };
        tokio::time::timeout(LIMIT, wait)
            .await
            .expect("streams open in time");
    }
}
