//! Helpers for the protocol-era tests: rmcp clients in either lifecycle (2026-07-28 `Discover`,
//! or `initialize`), over Streamable HTTP or a stdio child, with a handler that can answer
//! elicitations.
#![allow(dead_code, unreachable_pub)]

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ErrorCode, ProtocolVersion, SubscriptionFilter,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, RequestContext, RunningService, ServiceError,
    Subscription,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::NeverRetry;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{Value, json};
use tokio::process::{Child, Command};

use crate::common::{http_client, within};

/// Which lifecycle a client uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `server/discover` and per-request `_meta` (2026-07-28).
    Modern,
    /// `initialize` (2025-11-25).
    Legacy,
}

impl Era {
    fn lifecycle(self) -> ClientLifecycleMode {
        match self {
            Era::Modern => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
            Era::Legacy => ClientLifecycleMode::Initialize,
        }
    }
}

/// A client that answers every elicitation with `answer` (when it declares the capability)
/// and keeps the requests it was asked.
#[derive(Clone)]
pub struct Asker {
    elicits: bool,
    answer: Value,
    pub asked: Arc<Mutex<Vec<ElicitRequestParams>>>,
}

impl Asker {
    /// Declares elicitation and accepts with `answer` as the content.
    pub fn answering(answer: Value) -> Self {
        Self {
            elicits: true,
            answer,
            asked: Arc::default(),
        }
    }

    /// Declares no capability at all.
    pub fn mute() -> Self {
        Self {
            elicits: false,
            answer: Value::Null,
            asked: Arc::default(),
        }
    }

    /// The messages of the elicitations asked so far.
    pub fn questions(&self) -> Vec<Value> {
        let asked = self.asked.lock().expect("not poisoned");
        asked
            .iter()
            .map(|params| serde_json::to_value(params).expect("serializes"))
            .collect()
    }
}

impl ClientHandler for Asker {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities = match self.elicits {
            true => serde_json::from_value(json!({"elicitation": {"form": {}}})).expect("caps"),
            false => ClientCapabilities::default(),
        };
        ClientConfig::new(capabilities, Default::default())
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.lock().expect("not poisoned").push(request);
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(self.answer.clone()))
    }
}

pub type Running = RunningService<RoleClient, Asker>;

/// An rmcp client over Streamable HTTP (no stream retries, no re-initialize).
pub async fn connect_http<H: ClientHandler>(
    url: &str,
    era: Era,
    handler: H,
) -> RunningService<RoleClient, H> {
    let mut config =
        StreamableHttpClientTransportConfig::with_uri(url).reinit_on_expired_session(false);
    config.retry_config = Arc::new(NeverRetry::default());
    let transport = StreamableHttpClientTransport::with_client(http_client(), config);
    let started = within(
        "connect over http",
        handler.serve_with_lifecycle(transport, era.lifecycle()),
    );
    started.await.expect("the client starts")
}

/// The stdio mock server binary with `args`, its pipes ready for a client.
pub fn spawn_stdio(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_mcp-mock-server"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn mock server")
}

/// An rmcp client over the pipes of `child`.
pub async fn connect_stdio<H: ClientHandler>(
    child: &mut Child,
    era: Era,
    handler: H,
) -> RunningService<RoleClient, H> {
    let stdout = child.stdout.take().expect("stdout");
    let stdin = child.stdin.take().expect("stdin");
    let started = within(
        "connect over stdio",
        handler.serve_with_lifecycle((stdout, stdin), era.lifecycle()),
    );
    started.await.expect("the client starts")
}

/// `tools/call name args` with the MRTR rounds driven by the client handler.
pub fn params(name: &'static str, args: Value) -> CallToolRequestParams {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    CallToolRequestParams::new(name).with_arguments(args)
}

/// The JSON-RPC error code of a failed request.
pub fn error_code(result: Result<impl std::fmt::Debug, ServiceError>) -> ErrorCode {
    match result {
        Err(ServiceError::McpError(error)) => error.code,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// A subscription to tools `list_changed`.
pub async fn listen_tools<H: ClientHandler>(
    running: &RunningService<RoleClient, H>,
) -> Subscription {
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    within("listen", running.listen(filter))
        .await
        .expect("the subscription is acknowledged")
}
