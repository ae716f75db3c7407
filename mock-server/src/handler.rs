//! The MCP server handler: one per session, all sharing one [`Shared`].

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeRequestParams, InitializeResult, JsonObject, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProtocolVersion, ServerCapabilities, ServerConfig,
    SubscriptionFilter,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::block::ANNOUNCEMENT;
use crate::confirm::{self, Retry};
use crate::crash::{self, AfterFlush};
use crate::listen::{self, PendingMarks};
use crate::shared::{SetTools, Shared};
use crate::tools::ToolKind;

/// `tools/list` page size.
const PAGE: usize = 50;
/// How long the `block` tool's progress notification may take to go out.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(2);

/// Serves one session (Streamable HTTP: one stateless request); cheap to clone, every clone
/// shares the server's state.
#[derive(Clone)]
pub(crate) struct MockHandler {
    shared: Arc<Shared>,
    /// Marks of this handler's subscriptions not yet registered (see [`crate::listen`]).
    marks: Arc<PendingMarks>,
}

#[derive(Deserialize)]
struct Echo {
    text: String,
}

#[derive(Deserialize)]
struct Add {
    a: f64,
    b: f64,
}

#[derive(Deserialize)]
struct Sleep {
    ms: u64,
}

#[derive(Deserialize)]
struct Block {
    ms: u64,
}

#[derive(Deserialize)]
struct Fail {
    message: Option<String>,
}

#[derive(Deserialize)]
struct Crash {
    code: Option<i32>,
}

#[derive(Deserialize)]
struct EndListens {
    graceful: bool,
}

fn parse<T: DeserializeOwned>(args: JsonObject) -> Result<T, ErrorData> {
    serde_json::from_value(Value::Object(args))
        .map_err(|error| ErrorData::invalid_params(format!("bad arguments: {error}"), None))
}

fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

impl MockHandler {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Self {
            shared,
            marks: Arc::default(),
        }
    }

    async fn call_builtin(
        &self,
        name: &str,
        args: JsonObject,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(match name {
            "echo" => text(parse::<Echo>(args)?.text),
            "add" => {
                let Add { a, b } = parse(args)?;
                text((a + b).to_string())
            }
            "sleep" => {
                let Sleep { ms } = parse(args)?;
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(ms)) => text(format!("slept {ms}ms")),
                    () = context.ct.cancelled() => {
                        return Err(ErrorData::internal_error("sleep cancelled", None));
                    }
                }
            }
            "whoami" => {
                let who = json!({
                    "boot_id": self.shared.boot_id,
                    "pid": self.shared.pid,
                    "calls": self.shared.calls(),
                    "methods": self.shared.methods(),
                });
                let mut result = text(who.to_string());
                result.structured_content = Some(who);
                result
            }
            "fail" => {
                let message = parse::<Fail>(args)?.message;
                CallToolResult::error(vec![ContentBlock::text(
                    message.unwrap_or_else(|| "tool failed".to_owned()),
                )])
            }
            "crash" => {
                let code = parse::<Crash>(args)?.code.unwrap_or(1);
                self.shared.crash.arm(code);
                text(crash::REPLY)
            }
            "hang" => {
                self.shared.set_hang(true);
                text("hanging")
            }
            "block" => self.block(parse(args)?, context).await?,
            "wedge" if !self.shared.stdio => {
                CallToolResult::error(vec![ContentBlock::text("wedge works in stdio mode only")])
            }
            "wedge" => {
                let wedge = crash::WEDGE_MARKER;
                self.shared.crash.arm_after(wedge, AfterFlush::Wedge);
                text(crash::WEDGE_REPLY)
            }
            "end_listens" => {
                let EndListens { graceful } = parse(args)?;
                self.shared.end_listens(graceful);
                text(format!("ended listens (graceful: {graceful})"))
            }
            _ => {
                let change: SetTools = parse(args)?;
                let count = self.shared.set_tools(&change).await;
                text(format!("ok {count}"))
            }
        })
    }
}

impl MockHandler {
    /// The `block` tool. A call that asked for progress gets the block's announcement (see
    /// [`crate::block`]) once the block has started.
    async fn block(
        &self,
        Block { ms }: Block,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let announce = async {
            let Some(token) = context.meta.get_progress_token() else {
                return;
            };
            let progress = ProgressNotificationParam::new(token, 0.0).with_message(ANNOUNCEMENT);
            let notify = context.peer.notify_progress(progress);
            if !matches!(
                tokio::time::timeout(NOTIFY_TIMEOUT, notify).await,
                Ok(Ok(()))
            ) {
                tracing::debug!("block: the announcement was not sent");
            }
        };
        let duration = Duration::from_millis(ms);
        if !self.shared.block.run(duration, &context.ct, announce).await {
            return Err(ErrorData::internal_error("block cancelled", None));
        }
        Ok(text(format!("blocked {ms}ms")))
    }
}

impl ServerHandler for MockHandler {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities).with_server_info(Implementation::new(
            "mcp-mock-server",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if self.shared.take_exit_after_list() {
            let exit = AfterFlush::Exit(0);
            self.shared.crash.arm_after(crash::LIST_MARKER, exit);
        }
        let tools = self.shared.tools().list();
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|start| *start <= tools.len())
                .ok_or_else(|| ErrorData::invalid_params("invalid cursor", None))?,
        };
        let end = tools.len().min(start + PAGE);
        let mut result = ListToolsResult::with_all_items(tools[start..end].to_vec());
        if end < tools.len() {
            result.next_cursor = Some(end.to_string());
        }
        result.ttl_ms = self.shared.list_ttl_ms();
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.shared.count_call();
        let args = request.arguments.unwrap_or_default();
        let result = match self.shared.tools().lookup(&request.name) {
            None => {
                let message = format!("tool not found: {}", request.name);
                return Err(ErrorData::invalid_params(message, None));
            }
            Some(ToolKind::Dynamic) => text(parse::<Echo>(args)?.text),
            Some(ToolKind::Builtin) if request.name == "confirm" => {
                let retry = Retry {
                    input_responses: request.input_responses,
                    request_state: request.request_state,
                };
                let nonces = &self.shared.confirms;
                return confirm::run(nonces, parse(args)?, retry, context).await;
            }
            Some(ToolKind::Builtin) => self.call_builtin(&request.name, args, context).await?,
        };
        Ok(result.into())
    }

    /// A 2026-07-28-only server (`modern_only`) advertises that version alone.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        match self.shared.modern_only() {
            true => Cow::Owned(vec![ProtocolVersion::V_2026_07_28]),
            false => Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS),
        }
    }

    /// Accepts `tools/list_changed` (the only list that changes); rmcp intersects this with the
    /// request. Takes the subscription's mark before rmcp acknowledges it.
    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.marks.push(self.shared.listens.mark());
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    /// Serves one subscription until the client cancels it (or its stream drops) or
    /// `end_listens` ends it; see [`crate::listen`].
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mark = self.marks.take();
        listen::serve(&self.shared.listens, mark, context).await
    }

    /// Registers the session for `list_changed` already at `initialize` (not at `initialized`,
    /// which the server handles asynchronously), so a client that got its initialize reply is
    /// sure to be notified.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        self.shared.add_peer(context.peer);
        self.negotiate_initialize(&request)
    }
}
