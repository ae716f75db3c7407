//! The MCP server handler: one per session, all sharing one [`Shared`]. It serves the tools
//! (built-ins in [`builtins`]), resources ([`crate::resources`], [`crate::subscribers`]),
//! prompts ([`crate::prompts`]), completions ([`crate::complete`]), logging
//! ([`crate::logging`]) and `subscriptions/listen` ([`crate::listen`]).

mod builtins;
mod params;

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, InitializeRequestParams,
    InitializeResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::confirm::{self, Retry};
use crate::crash::{self, AfterFlush};
use crate::hostile::escapes;
use crate::listen::{self, PendingMarks};
use crate::shared::Shared;
use crate::tools::ToolKind;
use crate::{complete, prompts, resources, withdraw};
use params::{Echo, parse, text};

/// `tools/list` and `resources/list` page size.
const PAGE: usize = 50;

/// Serves one session (Streamable HTTP: one stateless request); cheap to clone, every clone
/// shares the server's state.
#[derive(Clone)]
pub(crate) struct MockHandler {
    shared: Arc<Shared>,
    /// Tells this session's initialize-era resource subscriptions from others'.
    session: u64,
    /// Marks of this handler's subscriptions not yet registered (see [`crate::listen`]).
    marks: Arc<PendingMarks>,
}

impl MockHandler {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Self {
            session: shared.next_session(),
            shared,
            marks: Arc::default(),
        }
    }
}

impl ServerHandler for MockHandler {
    /// Tools (`listChanged`), resources (`subscribe`, `listChanged`), prompts, completions and
    /// logging.
    #[allow(deprecated)] // logging: see `crate::logging`
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        let config = ServerConfig::new(capabilities).with_server_info(Implementation::new(
            "mcp-mock-server",
            env!("CARGO_PKG_VERSION"),
        ));
        match self.shared.escapes() {
            true => config.with_instructions(escapes::ESCAPES),
            false => config,
        }
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
        let mut tools = self.shared.tools().list();
        if self.shared.escapes() {
            tools.extend(escapes::tools());
        }
        let (tools, next_cursor) = page(&tools, request)?;
        let mut result = ListToolsResult::with_all_items(tools);
        result.next_cursor = next_cursor;
        result.ttl_ms = self.shared.list_ttl_ms();
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.shared.count_call();
        let traceparent = request.meta.as_ref().and_then(|m| m.get_traceparent());
        self.shared
            .note_traceparent(traceparent.or_else(|| context.meta.get_traceparent()));
        let args = request.arguments.unwrap_or_default();
        if self.shared.escapes()
            && let Some(answer) = escapes::call(&self.shared, &request.name)
        {
            return answer.map(Into::into);
        }
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
                let asked: confirm::Confirm = parse(args)?;
                if asked.withdraw {
                    return withdraw::run(&self.shared, asked, context)
                        .await
                        .map(Into::into);
                }
                return confirm::run(&self.shared.confirms, asked, retry, context).await;
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

    /// Accepts tools and resources `list_changed` and updates of every requested resource that
    /// exists; rmcp intersects this with the request. Takes the subscription's mark before rmcp
    /// acknowledges it. `None` (rmcp answers `-32601`) while `refuse_listen` is on.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        if self.shared.refuse_listen() {
            return None;
        }
        self.marks.push(self.shared.listens.mark());
        let uris = requested.resource_subscriptions.iter().flatten();
        let uris = uris.filter(|uri| resources::exists(uri));
        let accepted = SubscriptionFilter::builder()
            .tools_list_changed()
            .resources_list_changed()
            .resource_subscriptions(uris.cloned());
        Some(accepted.build())
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

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let (resources, next_cursor) = page(&resources::list(), request)?;
        let mut result = ListResourcesResult::with_all_items(resources);
        result.next_cursor = next_cursor;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        resources::read(&request.uri, self.shared.counter()).map(Into::into)
    }

    /// Initialize era: records the subscription (an unknown URI is resource-not-found).
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if !resources::exists(&request.uri) {
            let message = format!("no such resource: {}", request.uri);
            return Err(ErrorData::resource_not_found(message, None));
        }
        let subscribers = &self.shared.subscribers;
        subscribers.subscribe(self.session, &request.uri, context.peer);
        Ok(())
    }

    /// Initialize era: forgets the subscription (none is not an error).
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.shared
            .subscribers
            .unsubscribe(self.session, &request.uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        prompts::get(&request.name, request.arguments.as_ref()).map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        complete::complete(&request)
    }

    /// Records the level (both eras); see [`crate::logging`].
    #[allow(deprecated)] // logging: see `crate::logging`
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.shared.log_level.set(&request);
        Ok(())
    }
}

/// One page of `items` from `cursor` (an index; absent = 0), and the next page's cursor.
fn page<T: Clone>(
    items: &[T],
    request: Option<PaginatedRequestParams>,
) -> Result<(Vec<T>, Option<String>), ErrorData> {
    let start = match request.and_then(|r| r.cursor) {
        None => 0,
        Some(cursor) => cursor
            .parse::<usize>()
            .ok()
            .filter(|start| *start <= items.len())
            .ok_or_else(|| ErrorData::invalid_params("invalid cursor", None))?,
    };
    let end = items.len().min(start + PAGE);
    let next = (end < items.len()).then(|| end.to_string());
    Ok((items[start..end].to_vec(), next))
}
