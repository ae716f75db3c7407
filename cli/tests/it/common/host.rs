//! A stand-in MCP host: `mcp-resilient proxy …` as a real child process, driven over its stdio by
//! an rmcp client that records what the proxy tells it and answers elicitations.

// Logging is deprecated by SEP-2577, and `ClientInfo` is `ClientConfig` now; hosts of the session
// era still send and use both.
#![allow(deprecated)]

use std::{
    process::Stdio,
    sync::{Arc, Mutex, PoisonError},
};

use rmcp::{
    ErrorData, RoleClient, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResult, ClientInfo, ClientRequest, ElicitRequestParams,
        ElicitResult, ElicitationAction, LoggingMessageNotificationParam,
        ProgressNotificationParam, ProgressToken, ResourceUpdatedNotificationParam,
    },
    service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService},
};
use serde_json::{Value, json};
use tokio::{process::Child, sync::watch};

use super::{LIMIT, mock_binary};

/// What the host was told, in order of arrival per kind.
#[derive(Debug, Default)]
pub struct Seen {
    pub tools_changed: usize,
    pub resources_updated: Vec<String>,
    pub logs: Vec<LoggingMessageNotificationParam>,
    pub progress: Vec<ProgressNotificationParam>,
    pub elicitations: Vec<ElicitRequestParams>,
}

/// The host's client handler: records, and accepts every elicitation with
/// `{"confirmed": true, "note": "from the host"}`.
#[derive(Clone)]
pub struct Recorder {
    seen: Arc<Mutex<Seen>>,
    changed: Arc<watch::Sender<u64>>,
    info: ClientInfo,
}

impl Recorder {
    fn record(&self, f: impl FnOnce(&mut Seen)) {
        f(&mut self.seen.lock().unwrap_or_else(PoisonError::into_inner));
        self.changed.send_modify(|n| *n += 1);
    }
}

impl rmcp::ClientHandler for Recorder {
    fn get_info(&self) -> ClientInfo {
        self.info.clone()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.record(|seen| seen.elicitations.push(request));
        let mut answer = ElicitResult::new(ElicitationAction::Accept);
        answer.content = Some(json!({"confirmed": true, "note": "from the host"}));
        Ok(answer)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.record(|seen| seen.tools_changed += 1);
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.record(|seen| seen.resources_updated.push(params.uri));
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.record(|seen| seen.logs.push(params));
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.record(|seen| seen.progress.push(params));
    }
}

/// The proxy process and the host's session with it.
pub struct Host {
    pub child: Child,
    pub session: RunningService<RoleClient, Recorder>,
    seen: Arc<Mutex<Seen>>,
    changed: watch::Receiver<u64>,
    /// The proxy's stderr lines, when started with [`Host::start_logged`].
    log: Option<watch::Receiver<Vec<String>>>,
}

impl Host {
    /// Starts `mcp-resilient proxy <args…>` and initializes a session with it (protocol
    /// 2025-11-25, elicitation declared), as a host does.
    pub async fn start(args: &[&str]) -> Host {
        Self::spawn(args, false, &[]).await
    }

    /// Like [`start`](Self::start), with these variables in the proxy's environment.
    pub async fn start_env(args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Host {
        Self::spawn(args, false, env).await
    }

    /// Like [`start`](Self::start), keeping the proxy's stderr (its default log: warnings and
    /// errors) for [`wait_log`](Self::wait_log).
    pub async fn start_logged(args: &[&str]) -> Host {
        Self::spawn(args, true, &[]).await
    }

    async fn spawn(args: &[&str], logged: bool, env: &[(&str, &std::ffi::OsStr)]) -> Host {
        let mut command = tokio::process::Command::new(mock_binary());
        command
            .arg("proxy")
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        // The proxy logs to stderr; show it only when asked (MCP_PROXY_TEST_STDERR=1).
        if logged {
            command.stderr(Stdio::piped()).env_remove("RUST_LOG");
        } else if std::env::var_os("MCP_PROXY_TEST_STDERR").is_some() {
            command.stderr(Stdio::inherit()).env("RUST_LOG", "debug");
        } else {
            command.stderr(Stdio::null());
        }
        let mut child = command.spawn().expect("the proxy starts");
        let log = child.stderr.take().map(|stderr| {
            let (tx, rx) = watch::channel(Vec::new());
            tokio::spawn(async move {
                use tokio::io::AsyncBufReadExt;
                let mut lines = tokio::io::BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tx.send_modify(|all| all.push(line));
                }
            });
            rx
        });
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take().expect("stdin");
        let info: ClientInfo = serde_json::from_value(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "test-host", "version": "0.0.0"}
        }))
        .expect("client info");
        let seen = Arc::new(Mutex::new(Seen::default()));
        let (tx, changed) = watch::channel(0);
        let recorder = Recorder {
            seen: seen.clone(),
            changed: Arc::new(tx),
            info,
        };
        let session = tokio::time::timeout(LIMIT, recorder.serve((stdout, stdin)))
            .await
            .expect("the proxy answered initialize in time")
            .expect("the proxy initialized");
        Host {
            child,
            session,
            seen,
            changed,
            log,
        }
    }

    /// Waits (at most [`LIMIT`]) for the `count`th stderr line that contains `needle`.
    pub async fn wait_log(&self, needle: &str, count: usize) {
        let mut log = self.log.clone().expect("started with start_logged");
        let found =
            |lines: &Vec<String>| lines.iter().filter(|l| l.contains(needle)).count() >= count;
        let waited = tokio::time::timeout(LIMIT, async { log.wait_for(found).await.is_ok() }).await;
        if waited != Ok(true) {
            panic!(
                "the proxy never logged '{needle}' {count} time(s): {:?}",
                self.log.as_ref().map(|l| l.borrow().clone())
            );
        }
    }

    /// A copy of one part of what the host saw.
    pub fn seen<T>(&self, f: impl FnOnce(&Seen) -> T) -> T {
        f(&self.seen.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Waits (at most [`LIMIT`]) until what the host saw satisfies `want`.
    pub async fn wait_seen(&mut self, what: &str, mut want: impl FnMut(&Seen) -> bool) {
        let seen = self.seen.clone();
        let waited = tokio::time::timeout(LIMIT, async {
            loop {
                if want(&seen.lock().unwrap_or_else(PoisonError::into_inner)) {
                    return;
                }
                self.changed.changed().await.expect("the recorder lives");
            }
        })
        .await;
        if waited.is_err() {
            panic!(
                "the host did not see {what} within {LIMIT:?}: {:?}",
                self.seen(|s| format!("{s:?}"))
            );
        }
    }

    /// Calls `tool` and returns the result (tool errors included); panics on a JSON-RPC error.
    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        self.try_call(tool, args)
            .await
            .unwrap_or_else(|e| panic!("{tool}: {e}"))
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

    /// Sends `request` and returns its progress token with the pending answer.
    pub async fn send(
        &self,
        request: ClientRequest,
    ) -> (ProgressToken, rmcp::service::RequestHandle<RoleClient>) {
        let handle = self
            .session
            .peer()
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .expect("request sent");
        (handle.progress_token.clone(), handle)
    }

    /// The names `tools/list` shows now.
    pub async fn tool_names(&self) -> Vec<String> {
        let tools = tokio::time::timeout(LIMIT, self.session.peer().list_all_tools())
            .await
            .expect("tools/list answered in time")
            .expect("tools/list");
        tools.into_iter().map(|t| t.name.into_owned()).collect()
    }

    /// Closes the host's side (the proxy's stdin) and waits for the proxy to exit.
    pub async fn close(mut self) -> std::process::ExitStatus {
        let _ = tokio::time::timeout(LIMIT, self.session.cancel()).await;
        tokio::time::timeout(LIMIT, self.child.wait())
            .await
            .expect("the proxy exits within the limit after its stdin closed")
            .expect("wait")
    }
}

/// The text of a tool result's first content block.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default()
}
