//! `mcp-resilient serve` as a real child process on 127.0.0.1, and hosts that reach it over
//! Streamable HTTP: rmcp clients of the session era that record what they are told and answer
//! elicitations, without re-initializing on their own (a lost session shows as an error).
// Helpers of the gateway tests: not every test uses every one.
#![allow(dead_code)]
// Logging is deprecated by SEP-2577, and `ClientInfo` is `ClientConfig` now; hosts of the session
// era still send and use both.
#![allow(deprecated)]

use std::{
    process::{ExitStatus, Stdio},
    sync::{Arc, Mutex, PoisonError},
};

use rmcp::{
    ErrorData, RoleClient, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResult, ClientInfo, ElicitRequestParams, ElicitResult,
        ElicitationAction, LoggingMessageNotificationParam, ProgressNotificationParam,
        ResourceUpdatedNotificationParam,
    },
    service::{NotificationContext, RequestContext, RunningService},
    transport::{
        StreamableHttpClientTransport, streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
use serde_json::{Value, json};
use tokio::{process::Child, sync::watch};

pub use crate::common::serve::{capture_stderr, serving_url};
use crate::common::{LIMIT, mock_binary};

/// Fast supervision for the gateway's upstreams: failures noticed and retried in milliseconds.
pub const FAST: [&str; 8] = [
    "--heartbeat-interval",
    "400ms",
    "--heartbeat-timeout",
    "150ms",
    "--reconnect-initial",
    "20ms",
    "--reconnect-max",
    "200ms",
];

/// One `serve` process, and the lines it wrote on stderr.
pub struct Gateway {
    pub child: Child,
    /// `http://127.0.0.1:PORT`
    pub base: String,
    log: watch::Receiver<Vec<String>>,
}

impl Gateway {
    /// Starts `mcp-resilient serve --listen 127.0.0.1:0 <args…>` and waits for its address.
    pub async fn start(args: &[&str]) -> Gateway {
        Self::start_env(args, &[]).await
    }

    /// Like [`start`](Self::start), with these variables in its environment.
    pub async fn start_env(args: &[&str], env: &[(&str, &str)]) -> Gateway {
        let mut child = tokio::process::Command::new(mock_binary())
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("serve starts");
        let mut log = capture_stderr(&mut child, "serve");
        let url = serving_url(&mut log).await;
        let base = url.trim_end_matches("/mcp").to_owned();
        Gateway { child, base, log }
    }

    /// The MCP endpoint.
    pub fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// What it wrote on stderr so far.
    pub fn log(&self) -> Vec<String> {
        self.log.borrow().clone()
    }

    /// A host of the session era (2025-11-25, elicitation declared).
    pub async fn host(&self) -> HttpHost {
        HttpHost::connect(&self.url(), None).await
    }

    /// SIGTERM, then waits (bounded) for the exit.
    pub async fn stop(mut self) -> ExitStatus {
        let pid = self.child.id().expect("running") as i32;
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        )
        .expect("SIGTERM");
        tokio::time::timeout(LIMIT, self.child.wait())
            .await
            .expect("serve exits in time after SIGTERM")
            .expect("wait")
    }
}

/// Runs `mcp-resilient serve <args…>` that is expected to refuse and exit by itself: its
/// output, within [`LIMIT`]; killed if it is still running then.
pub async fn refused(args: &[&str]) -> std::process::Output {
    let run = tokio::process::Command::new(mock_binary())
        .arg("serve")
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    tokio::time::timeout(LIMIT, run)
        .await
        .expect("serve exits in time")
        .expect("serve runs")
}

/// What a host was told.
#[derive(Debug, Default)]
pub struct Told {
    pub tools_changed: usize,
    pub logs: Vec<LoggingMessageNotificationParam>,
    pub updated: Vec<String>,
    pub elicitations: Vec<ElicitRequestParams>,
    pub progress: Vec<ProgressNotificationParam>,
}

/// The host's handler: records, and accepts every elicitation with `{"confirmed": true}`.
#[derive(Clone)]
pub struct Teller {
    told: Arc<Mutex<Told>>,
    changed: Arc<watch::Sender<u64>>,
    info: ClientInfo,
}

impl Teller {
    fn record(&self, f: impl FnOnce(&mut Told)) {
        f(&mut self.told.lock().unwrap_or_else(PoisonError::into_inner));
        self.changed.send_modify(|n| *n += 1);
    }
}

impl rmcp::ClientHandler for Teller {
    fn get_info(&self) -> ClientInfo {
        self.info.clone()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.record(|told| told.elicitations.push(request));
        let mut answer = ElicitResult::new(ElicitationAction::Accept);
        answer.content = Some(json!({"confirmed": true}));
        Ok(answer)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.record(|told| told.tools_changed += 1);
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.record(|told| told.logs.push(params));
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.record(|told| told.progress.push(params));
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.record(|told| told.updated.push(params.uri));
    }
}

/// One host session with the gateway.
pub struct HttpHost {
    pub session: RunningService<RoleClient, Teller>,
    told: Arc<Mutex<Told>>,
    changed: watch::Receiver<u64>,
}

impl HttpHost {
    /// Initializes a session at `url` (with `Authorization: Bearer token` when given).
    pub async fn connect(url: &str, token: Option<&str>) -> HttpHost {
        Self::try_connect(url, token)
            .await
            .unwrap_or_else(|e| panic!("a session with the gateway: {e}"))
    }

    /// Like [`connect`](Self::connect), returning the failure.
    pub async fn try_connect(url: &str, token: Option<&str>) -> Result<HttpHost, String> {
        let mut config =
            StreamableHttpClientTransportConfig::with_uri(url).reinit_on_expired_session(false);
        if let Some(token) = token {
            config = config.auth_header(token.to_owned());
        }
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("reqwest client");
        let transport = StreamableHttpClientTransport::with_client(http, config);
        let info: ClientInfo = serde_json::from_value(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "test-http-host", "version": "0.0.0"}
        }))
        .expect("client info");
        let told = Arc::new(Mutex::new(Told::default()));
        let (tx, changed) = watch::channel(0);
        let teller = Teller {
            told: told.clone(),
            changed: Arc::new(tx),
            info,
        };
        let session = tokio::time::timeout(LIMIT, teller.serve(transport))
            .await
            .map_err(|_| format!("no initialize answer within {LIMIT:?}"))?
            .map_err(|e| e.to_string())?;
        Ok(HttpHost {
            session,
            told,
            changed,
        })
    }

    /// Calls `tool`, bounded by [`LIMIT`].
    pub async fn try_call(&self, tool: &str, args: Value) -> Result<CallToolResult, String> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(args) = args {
            params = params.with_arguments(args);
        }
        tokio::time::timeout(LIMIT, self.session.peer().call_tool(params))
            .await
            .map_err(|_| format!("no answer within {LIMIT:?}"))?
            .map_err(|e| e.to_string())
    }

    /// Calls `tool`; panics on anything but a result.
    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        self.try_call(tool, args)
            .await
            .unwrap_or_else(|e| panic!("{tool}: {e}"))
    }

    /// The names `tools/list` shows now.
    pub async fn tool_names(&self) -> Vec<String> {
        let tools = tokio::time::timeout(LIMIT, self.session.peer().list_all_tools())
            .await
            .expect("tools/list answered in time")
            .expect("tools/list");
        tools.into_iter().map(|t| t.name.into_owned()).collect()
    }

    /// A copy of part of what the host was told.
    pub fn told<T>(&self, f: impl FnOnce(&Told) -> T) -> T {
        f(&self.told.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Waits (at most [`LIMIT`]) until what the host was told satisfies `want`.
    pub async fn wait_told(&self, what: &str, mut want: impl FnMut(&Told) -> bool) {
        let mut changed = self.changed.clone();
        let told = self.told.clone();
        let waited = tokio::time::timeout(LIMIT, async {
            loop {
                if want(&told.lock().unwrap_or_else(PoisonError::into_inner)) {
                    return;
                }
                changed.changed().await.expect("the teller lives");
            }
        })
        .await;
        assert!(
            waited.is_ok(),
            "the host was not told {what} within {LIMIT:?}"
        );
    }

    /// Ends the session (`DELETE`).
    pub async fn close(self) {
        let _ = tokio::time::timeout(LIMIT, self.session.cancel()).await;
    }
}
