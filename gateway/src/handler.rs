//! The MCP server the host talks to: `initialize` starts the upstreams, every request is answered
//! from the registry or sent to the upstream that owns it. The tool call is `call`, the requests
//! that name a resource, a prompt or a completion (and the log level) are `requests`.
//!
//! Over 300 lines: it is one concept, rmcp's `ServerHandler` for the host, a short method per
//! MCP request whose work lives in the files named above.

// Logging, roots and resource subscriptions are deprecated by SEP-2577 / the 2026-07-28 listen
// stream, but the host side of the proxy speaks the session era, where they are how it works.
#![allow(deprecated)]

use std::{borrow::Cow, sync::Arc};

use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, ClientRequest, CompleteRequestParams,
        CompleteResult, DiscoverResult, GetPromptRequest, GetPromptRequestParams,
        GetPromptResponse, GetPromptResult, InitializeRequestParams, InitializeResult,
        ListPromptsRequest, ListPromptsResult, ListResourceTemplatesRequest,
        ListResourceTemplatesResult, ListResourcesRequest, ListResourcesResult, ListToolsResult,
        PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
        SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter, Tool,
        UnsubscribeRequestParams,
    },
    service::{RequestContext, SubscriptionContext},
};

use super::{
    capabilities::everything,
    forward::{self, ask},
    front::Front,
    revision::{self, ForHost},
    shared::Shared,
};

/// The MCP server the host talks to. Built by [`Proxy::serve`](super::Proxy::serve).
#[derive(Debug, Clone)]
pub struct ProxyHandler {
    pub(super) shared: Arc<Shared>,
    /// The front's hooks; none for stdio.
    pub(super) front: Option<Arc<dyn Front>>,
}

impl ProxyHandler {
    pub(super) fn new(shared: Arc<Shared>) -> Self {
        Self {
            shared,
            front: None,
        }
    }

    /// A handler for one host of `front`.
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(crate) fn with_front(shared: Arc<Shared>, front: Arc<dyn Front>) -> Self {
        Self {
            shared,
            front: Some(front),
        }
    }
}

impl ServerHandler for ProxyHandler {
    fn get_info(&self) -> InitializeResult {
        if let Some(info) = self.shared.info.get() {
            return info.clone();
        }
        match self.shared.common.is_some() {
            // A host that does not initialize (2026-07-28) sees the common upstreams as they are.
            true => self.shared.describe(),
            false => InitializeResult::new(everything()),
        }
    }

    /// Both fronts serve hosts of both eras, whatever their upstreams speak.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
    }

    /// What the upstreams offer. A stdio host that has not initialized (2026-07-28) starts its
    /// upstreams here, so that the answer describes them.
    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        Box::pin(self.start_inline()).await?;
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        ))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let session_id = self.front.as_ref().and_then(|f| f.session_id(&context));
        // rmcp's HTTP server runs `initialize` in the task that waits for the session's end, so
        // the largest request future of this handler stays for every idle host session: each
        // request's work is boxed (33.9 KiB per session before: BENCHMARKS.md section 22).
        Box::pin(
            self.shared
                .start(context.peer.clone(), &request, session_id),
        )
        .await?;
        if let Some(front) = &self.front {
            front.initialized(&self.shared, &context)?;
        }
        #[cfg(feature = "serve")]
        if (context.extensions)
            .get::<rmcp::transport::streamable_http_server::SessionRestoreMarker>()
            .is_some()
        {
            self.renew();
        }
        self.negotiate_initialize(&request)
    }

    /// The host's `notifications/initialized`: what waited for it goes out now.
    async fn on_initialized(&self, _context: rmcp::service::NotificationContext<RoleServer>) {
        self.shared.link.outbox.open();
    }

    /// The tool the host would see under `name` (rmcp checks `Mcp-Param-*` headers with it).
    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.shared
            .host_tools()
            .into_iter()
            .find(|tool| tool.name == name)
    }

    /// Over HTTP, a 2026-07-28 host's listen stream gets every change it asks for; on stdio,
    /// the changes of the tools it is shown (everything else the upstreams tell goes to the
    /// stdio host's one outbox, which carries only what belongs to its requests).
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        match &self.front {
            Some(_) => Some(requested.clone()),
            None => {
                let mut accepted = SubscriptionFilter::new();
                accepted.tools_list_changed = requested.tools_list_changed;
                Some(accepted)
            }
        }
    }

    /// The stream's resource subscriptions are this host's while it lasts.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        // Boxed: see `initialize`.
        match &self.front {
            Some(front) => Box::pin(self.listen_for_host(front.clone(), context)).await,
            None => Box::pin(self.listen_on_stdio(context)).await,
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // Listed inside the traced work: a stdio host that did not initialize (2026-07-28) starts
        // its upstreams there, and must be shown their tools, not the none before the start.
        let tools = async {
            let mut listed = self.shared.host_tools();
            if let Some(front) = &self.front {
                // Only the tools this host may call (the HTTP front's access policy).
                listed.retain(|tool| {
                    (self.shared.route_tool(&tool.name))
                        .is_ok_and(|(upstream, raw)| front.sees(&context, upstream.name(), &raw))
                });
            }
            Ok(ListToolsResult::with_all_items(listed))
        };
        self.traced("tools/list", &context, tools).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Boxed, like every request's work (`traced`): see `initialize`. Shaped for the host's
        // revision as `traced` shapes the other answers.
        let outcome = Box::pin(self.call(request, context)).await;
        outcome.map(|result| CallToolResponse::from(result).for_host())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.traced("resources/list", &context, async {
            let shared = &self.shared;
            if let Some(only) = shared.only() {
                let request = ListResourcesRequest {
                    params: request,
                    ..Default::default()
                };
                return ask(&only, ClientRequest::ListResourcesRequest(request)).await;
            }
            let all = forward::resources(&shared.upstreams(), &shared.routes).await;
            Ok(ListResourcesResult::with_all_items(all))
        })
        .await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.traced("resources/templates/list", &context, async {
            let shared = &self.shared;
            if let Some(only) = shared.only() {
                let request = ListResourceTemplatesRequest {
                    params: request,
                    ..Default::default()
                };
                return ask(&only, ClientRequest::ListResourceTemplatesRequest(request)).await;
            }
            let all = forward::templates(&shared.upstreams(), &shared.routes).await;
            Ok(ListResourceTemplatesResult::with_all_items(all))
        })
        .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.traced("resources/read", &context, async {
            let uri = request.uri.clone();
            let read = self.read(request).await;
            read.map_err(|error| revision::names_the_resource(error, &uri))
        })
        .await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.traced("resources/subscribe", &context, async {
            self.subscribe_for_host(&request.uri).await
        })
        .await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.traced("resources/unsubscribe", &context, async {
            self.unsubscribe_for_host(&request.uri).await
        })
        .await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.traced("prompts/list", &context, async {
            let shared = &self.shared;
            if let Some(only) = shared.only() {
                let request = ListPromptsRequest {
                    params: request,
                    ..Default::default()
                };
                return ask(&only, ClientRequest::ListPromptsRequest(request)).await;
            }
            let all = forward::prompts(&shared.upstreams(), &shared.routes).await;
            Ok(ListPromptsResult::with_all_items(all))
        })
        .await
    }

    async fn get_prompt(
        &self,
        mut request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.traced("prompts/get", &context, async {
            let shared = &self.shared;
            let owner = match shared.only() {
                Some(only) => only.clone(),
                None => {
                    let (index, raw) = self.prompt_owner(&request.name).await?;
                    request.name = raw;
                    shared.upstreams()[index].clone()
                }
            };
            let request = ClientRequest::GetPromptRequest(GetPromptRequest::new(request));
            let result: GetPromptResult = ask(&owner, request).await?;
            Ok(result.into())
        })
        .await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.traced("completion/complete", &context, async {
            self.complete_for(request).await
        })
        .await
    }

    /// Every upstream that logs gets the level (transparent: the answer is the upstream's).
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.traced("logging/setLevel", &context, async {
            self.set_levels(request).await
        })
        .await
    }
}
