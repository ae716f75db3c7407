//! The remote mock server as a separate process: started on 127.0.0.1, SIGKILLed, restarted on
//! the same port, and steered through its `/_mock/` admin routes.

use serde_json::Value;
use tokio::process::Child;

use super::{LIMIT, mock_binary};

/// One mock server process (`sse` or `http`).
pub struct MockProcess {
    child: Option<Child>,
    pub kind: &'static str,
    pub port: u16,
    /// Extra flags of every start (`--modern-only`, say).
    flags: Vec<&'static str>,
    http: reqwest::Client,
}

impl MockProcess {
    /// Starts `mcp-resilient mock-server --transport KIND --port 0`.
    pub async fn start(kind: &'static str) -> MockProcess {
        Self::start_with(kind, &[]).await
    }

    /// Starts it with extra flags, kept for every restart.
    pub async fn start_with(kind: &'static str, flags: &[&'static str]) -> MockProcess {
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("reqwest client");
        let mut process = MockProcess {
            child: None,
            kind,
            port: 0,
            flags: flags.to_vec(),
            http,
        };
        process.spawn().await;
        process
    }

    async fn spawn(&mut self) {
        let mut prefix = vec!["mock-server"];
        prefix.extend(&self.flags);
        let (child, port) =
            mcp_mock_server::spawn_process(mock_binary(), &prefix, self.kind, self.port, LIMIT)
                .await
                .expect("the mock server starts and reports its port");
        self.port = port;
        self.child = Some(child);
    }

    /// The MCP URL of this server.
    pub fn url(&self) -> String {
        match self.kind {
            "sse" => format!("http://127.0.0.1:{}/sse", self.port),
            _ => format!("http://127.0.0.1:{}/mcp", self.port),
        }
    }

    /// SIGKILLs the process and reaps it.
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.start_kill().expect("kill");
            tokio::time::timeout(LIMIT, child.wait())
                .await
                .expect("reaped in time")
                .expect("wait");
        }
    }

    /// Starts a new process on the same port.
    pub async fn restart(&mut self) {
        self.kill().await;
        self.spawn().await;
    }

    /// POSTs a JSON body to `/_mock/<path>`.
    pub async fn admin(&self, path: &str, body: Value) -> Value {
        let url = format!("http://127.0.0.1:{}/_mock/{path}", self.port);
        let response = tokio::time::timeout(LIMIT, self.http.post(url).json(&body).send())
            .await
            .expect("admin answered in time")
            .expect("admin request");
        assert!(
            response.status().is_success(),
            "admin {path}: {}",
            response.status()
        );
        response.json().await.expect("admin json")
    }

    /// GETs `/_mock/<path>`.
    pub async fn admin_get(&self, path: &str) -> Value {
        let url = format!("http://127.0.0.1:{}/_mock/{path}", self.port);
        let response = tokio::time::timeout(LIMIT, self.http.get(url).send())
            .await
            .expect("admin answered in time")
            .expect("admin request");
        response.json().await.expect("admin json")
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
