//! Helpers shared by the mock server's integration tests.
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt};
use mcp_mock_server::{MockServer, MockState};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, ClientRequest, PingRequest,
    ProtocolVersion,
};
use rmcp::service::{NotificationContext, Peer, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::NeverRetry;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::sync::mpsc;

/// Every wait in these tests is bounded by this.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// Awaits `future` or panics after [`DEADLINE`].
pub async fn within<F: Future>(what: &str, future: F) -> F::Output {
    match tokio::time::timeout(DEADLINE, future).await {
        Ok(output) => output,
        Err(_) => panic!("timed out: {what}"),
    }
}

/// How often [`state_until`] looks at the server's state. Only a polling period: no outcome
/// depends on it.
const POLL: Duration = Duration::from_millis(5);

/// The server's state once `done` holds for it; panics after [`DEADLINE`].
pub async fn state_until(
    server: &MockServer,
    what: &str,
    done: impl Fn(&MockState) -> bool,
) -> MockState {
    within(what, async {
        loop {
            let state = server.faults().state().await;
            if done(&state) {
                return state;
            }
            tokio::time::sleep(POLL).await;
        }
    })
    .await
}

/// A client that reports `tools/list_changed` on a channel.
pub struct Client {
    list_changed: mpsc::UnboundedSender<()>,
}

impl Client {
    pub fn new() -> (Self, mpsc::UnboundedReceiver<()>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self { list_changed: tx }, rx)
    }
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::default().with_protocol_version(ProtocolVersion::V_2025_06_18)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.list_changed.send(());
    }
}

pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
        .build()
        .expect("reqwest client")
}

/// An rmcp Streamable HTTP session with the supervisor's settings (no reinit, no stream retry).
pub async fn connect_http(
    url: &str,
) -> (
    RunningService<RoleClient, Client>,
    mpsc::UnboundedReceiver<()>,
) {
    let mut config =
        StreamableHttpClientTransportConfig::with_uri(url).reinit_on_expired_session(false);
    config.retry_config = Arc::new(NeverRetry::default());
    let transport = StreamableHttpClientTransport::with_client(http_client(), config);
    let (client, rx) = Client::new();
    let running = within("http initialize", client.serve(transport))
        .await
        .expect("initialize");
    (running, rx)
}

pub async fn call(peer: &Peer<RoleClient>, name: &'static str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    let params = CallToolRequestParams::new(name).with_arguments(args);
    within(name, peer.call_tool(params)).await.expect(name)
}

pub fn text(result: &CallToolResult) -> String {
    let value = serde_json::to_value(&result.content).expect("content serializes");
    value[0]["text"].as_str().expect("text content").to_owned()
}

pub async fn ping(peer: &Peer<RoleClient>) -> Result<(), String> {
    peer.send_request(ClientRequest::PingRequest(PingRequest::default()))
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// One server-sent event.
#[derive(Debug, Clone, Default)]
pub struct Sse {
    pub event: String,
    pub data: String,
}

/// Parses a `text/event-stream` body into events (comments skipped); ends with the body.
pub fn sse_events(response: reqwest::Response) -> impl Stream<Item = Sse> + Unpin {
    let bytes = response.bytes_stream();
    Box::pin(futures::stream::unfold(
        (bytes, String::new()),
        |(mut bytes, mut buffer)| async move {
            loop {
                if let Some(end) = buffer.find("\n\n") {
                    let block: String = buffer.drain(..end + 2).collect();
                    let mut event = Sse::default();
                    let mut any = false;
                    for line in block.lines() {
                        if let Some(v) = line.strip_prefix("event:") {
                            event.event = v.trim_start().to_owned();
                            any = true;
                        } else if let Some(v) = line.strip_prefix("data:") {
                            if !event.data.is_empty() {
                                event.data.push('\n');
                            }
                            event.data.push_str(v.strip_prefix(' ').unwrap_or(v));
                            any = true;
                        }
                    }
                    if any {
                        return Some((event, (bytes, buffer)));
                    }
                    continue;
                }
                match bytes.next().await {
                    Some(Ok(chunk)) => buffer.push_str(&String::from_utf8_lossy(&chunk)),
                    _ => return None,
                }
            }
        },
    ))
}
