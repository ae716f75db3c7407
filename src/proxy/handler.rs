//! The MCP server the host talks to: `initialize` starts the upstreams, every request is answered
//! from the registry or sent to the upstream that owns it.

// Logging, roots and resource subscriptions are deprecated by SEP-2577 / the 2026-07-28 listen
// stream, but the host side of the proxy speaks the session era, where they are how it works.
#![allow(deprecated)]

use std::{
    borrow::Cow,
    sync::{Arc, Mutex, OnceLock, PoisonError},
};

use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientRequest, CompleteRequest,
        CompleteRequestParams, CompleteResult, ContentBlock, GetPromptRequest,
        GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation,
        InitializeRequestParams, InitializeResult, ListPromptsRequest, ListPromptsResult,
        ListResourceTemplatesRequest, ListResourceTemplatesResult, ListResourcesRequest,
        ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProgressNotification,
        PromptsCapability, ProtocolVersion, ReadResourceRequest, ReadResourceRequestParams,
        ReadResourceResponse, ReadResourceResult, Reference, ResourcesCapability,
        ServerCapabilities, SetLevelRequest, SetLevelRequestParams, SubscribeRequestParams, Tool,
        ToolsCapability, UnsubscribeRequestParams,
    },
    service::RequestContext,
};
use tokio::{task::JoinHandle, time::Instant};
use tokio_util::sync::CancellationToken;

use super::{
    Mode, ProxyOptions, announce,
    forward::{self, Routes, ask},
    host, outage,
    outbox::Outbox,
    upstream::Upstream,
};
use crate::{
    CallError, ServerConfig, Supervisor, ToolRegistry, call::CallOptions, registry,
    telemetry::Served,
};

/// What the handler and the proxy's tasks share.
#[derive(Debug)]
pub(crate) struct Shared {
    mode: Mode,
    options: ProxyOptions,
    registry: ToolRegistry,
    /// The upstreams' configurations until `initialize` starts them.
    pending: Mutex<Option<Vec<ServerConfig>>>,
    upstreams: OnceLock<Vec<Arc<Upstream>>>,
    /// The `initialize` answer (before the protocol version is negotiated).
    info: OnceLock<InitializeResult>,
    routes: Routes,
    /// Everything for the host goes through it (progress and upstream notifications directly).
    outbox: Outbox,
    /// Ends the keepers and the announcer.
    stop: CancellationToken,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl Shared {
    pub(super) fn new(
        mode: Mode,
        configs: Vec<ServerConfig>,
        options: ProxyOptions,
        registry: ToolRegistry,
        outbox: Outbox,
    ) -> Self {
        Self {
            outbox,
            mode,
            options,
            registry,
            pending: Mutex::new(Some(configs)),
            upstreams: OnceLock::new(),
            info: OnceLock::new(),
            routes: Routes::default(),
            stop: CancellationToken::new(),
            tasks: Mutex::new(Vec::new()),
        }
    }

    pub(super) fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    fn upstreams(&self) -> &[Arc<Upstream>] {
        self.upstreams.get().map(Vec::as_slice).unwrap_or_default()
    }

    /// The tools the host is shown now: the registry's, with raw names (transparent) or public
    /// names (aggregated).
    pub(super) fn host_tools(&self) -> Vec<Tool> {
        let snapshot = self.registry.snapshot();
        match self.mode {
            Mode::Transparent => self
                .upstreams()
                .first()
                .and_then(|upstream| snapshot.server(upstream.name()).cloned())
                .map(|set| set.tools.iter().map(|t| (*t.definition).clone()).collect())
                .unwrap_or_default(),
            Mode::Aggregated => snapshot
                .tools()
                .map(|tool| {
                    let mut definition = (*tool.definition).clone();
                    definition.name = Cow::Owned(tool.public_name.to_string());
                    definition
                })
                .collect(),
        }
    }

    /// Starts the upstreams with handlers that reach `peer`, waits for them up to the startup
    /// wait, and starts the keepers and the announcer.
    async fn start(
        self: &Arc<Self>,
        peer: rmcp::Peer<RoleServer>,
        request: &InitializeRequestParams,
    ) -> Result<(), ErrorData> {
        let configs = lock(&self.pending).take().ok_or_else(|| {
            ErrorData::invalid_request("initialize was already answered in this session", None)
        })?;
        let handlers = host::handlers(
            self.outbox.clone(),
            peer.clone(),
            &request.capabilities,
            self.mode,
        );
        let mut upstreams = Vec::with_capacity(configs.len());
        for mut config in configs {
            let call_wait = *config.call_wait.get_or_insert(self.options.call_wait);
            let revive_after = config.reconnect.max_delay;
            let name = config.name.clone();
            match Supervisor::start(config.handlers(handlers.clone()), self.registry.clone()).await
            {
                Ok(supervisor) => {
                    upstreams.push(Arc::new(Upstream::new(supervisor, revive_after, call_wait)))
                }
                Err(error) => {
                    let started = upstreams
                        .iter()
                        .map(|u: &Arc<Upstream>| u.supervisor.shutdown());
                    futures::future::join_all(started).await;
                    return Err(ErrorData::internal_error(
                        format!("could not start upstream '{name}': {error}"),
                        None,
                    ));
                }
            }
        }
        let upstreams = self.upstreams.get_or_init(|| upstreams);
        let mut tasks = Vec::new();
        for upstream in upstreams {
            tasks.push(tokio::spawn(upstream.clone().keep(self.stop.clone())));
        }
        let wait = self.options.startup_wait;
        futures::future::join_all(upstreams.iter().map(|u| u.supervisor.wait_ready(wait))).await;
        for upstream in upstreams {
            if !upstream.supervisor.state().is_ready() {
                tracing::warn!(
                    server = %upstream.name(), state = %upstream.supervisor.state(),
                    "not ready after {wait:?}; answering the host without it, its tools follow when it is"
                );
            }
        }
        let _ = self.info.set(self.describe());
        let shared = self.clone();
        tasks.push(tokio::spawn(announce::tools(
            self.registry().clone(),
            move || shared.host_tools(),
            peer,
            self.host_tools(),
            self.stop.clone(),
        )));
        lock(&self.tasks).extend(tasks);
        Ok(())
    }

    /// The `initialize` answer: the upstream's own (transparent), or the union of the ready
    /// upstreams' (aggregated). What an upstream that is not ready may offer is unknown, so it
    /// counts as offering everything the proxy can pass on.
    fn describe(&self) -> InitializeResult {
        let infos: Vec<_> = self
            .upstreams()
            .iter()
            .map(|u| (u.name().to_owned(), u.supervisor.server_info()))
            .collect();
        let mut capabilities = ServerCapabilities::default();
        let mut tools = ToolsCapability::default();
        // Tools come from the registry, which can always announce a change.
        tools.list_changed = Some(true);
        capabilities.tools = Some(tools);
        for (_, info) in &infos {
            match info {
                Some(info) => merge(&mut capabilities, &info.capabilities),
                None => merge(&mut capabilities, &everything()),
            }
        }
        let own = Implementation::new("mcp-resilient", env!("CARGO_PKG_VERSION"));
        let mut result = InitializeResult::new(capabilities);
        match (self.mode, infos.as_slice()) {
            (Mode::Transparent, [(_, Some(info))]) => {
                result.server_info = info.server_info.clone().unwrap_or(own);
                result.instructions = info.instructions.clone();
            }
            _ => {
                result.server_info = own;
                let parts: Vec<String> = infos
                    .iter()
                    .filter_map(|(name, info)| {
                        let text = info.as_ref()?.instructions.as_ref()?;
                        Some(match self.mode {
                            Mode::Transparent => text.clone(),
                            Mode::Aggregated => format!("Server '{name}': {text}"),
                        })
                    })
                    .collect();
                if !parts.is_empty() {
                    result.instructions = Some(parts.join("\n\n"));
                }
            }
        }
        result
    }

    /// The upstream and the tool's name there, for a name the host called.
    fn route_tool(&self, name: &str) -> Result<(Arc<Upstream>, String), ErrorData> {
        let upstreams = self.upstreams();
        match self.mode {
            Mode::Transparent => upstreams
                .first()
                .map(|u| (u.clone(), name.to_owned()))
                .ok_or_else(not_initialized),
            Mode::Aggregated => {
                let snapshot = self.registry.snapshot();
                if let Some(tool) = snapshot.get(name)
                    && let Some(upstream) = upstreams.iter().find(|u| u.name() == &*tool.server)
                {
                    return Ok((upstream.clone(), tool.raw_name.to_string()));
                }
                // Not registered now (its server gave up, say): a lossless public name still
                // names its server, which then explains itself.
                upstreams
                    .iter()
                    .find_map(|u| {
                        let raw = name.strip_prefix(&format!("mcp__{}__", u.name()))?;
                        (registry::public_name(u.name(), raw) == name)
                            .then(|| (u.clone(), raw.to_owned()))
                    })
                    .ok_or_else(|| {
                        ErrorData::invalid_params(format!("no tool named '{name}'"), None)
                    })
            }
        }
    }

    /// The single upstream (transparent), for requests passed through as they are.
    fn only(&self) -> Option<&Arc<Upstream>> {
        match self.mode {
            Mode::Transparent => self.upstreams().first(),
            Mode::Aggregated => None,
        }
    }

    /// Stops the keepers and the announcer, then shuts every upstream down (children reaped).
    pub(super) async fn shutdown(&self) {
        self.stop.cancel();
        let tasks = std::mem::take(&mut *lock(&self.tasks));
        for task in tasks {
            let _ = task.await;
        }
        futures::future::join_all(self.upstreams().iter().map(|u| u.supervisor.shutdown())).await;
    }
}

/// Adds what `more` offers to `into` (tools are the registry's and stay as they are).
fn merge(into: &mut ServerCapabilities, more: &ServerCapabilities) {
    fn or(a: Option<bool>, b: Option<bool>) -> Option<bool> {
        match (a, b) {
            (None, None) => None,
            _ => Some(a.unwrap_or(false) || b.unwrap_or(false)),
        }
    }
    if let Some(more) = &more.resources {
        let into = into.resources.get_or_insert_with(Default::default);
        into.subscribe = or(into.subscribe, more.subscribe);
        into.list_changed = or(into.list_changed, more.list_changed);
    }
    if let Some(more) = &more.prompts {
        let into = into.prompts.get_or_insert_with(Default::default);
        into.list_changed = or(into.list_changed, more.list_changed);
    }
    if more.completions.is_some() {
        into.completions.get_or_insert_with(Default::default);
    }
    if more.logging.is_some() {
        into.logging.get_or_insert_with(Default::default);
    }
}

/// Everything the proxy can pass on.
fn everything() -> ServerCapabilities {
    let mut capabilities = ServerCapabilities::default();
    let mut resources = ResourcesCapability::default();
    resources.subscribe = Some(true);
    resources.list_changed = Some(true);
    capabilities.resources = Some(resources);
    let mut prompts = PromptsCapability::default();
    prompts.list_changed = Some(true);
    capabilities.prompts = Some(prompts);
    capabilities.completions = Some(Default::default());
    capabilities.logging = Some(Default::default());
    capabilities
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn not_initialized() -> ErrorData {
    ErrorData::invalid_request("the proxy has not been initialized", None)
}

/// The MCP server the host talks to. Built by [`Proxy::serve`](super::Proxy::serve).
#[derive(Debug, Clone)]
pub struct ProxyHandler {
    shared: Arc<Shared>,
}

impl ProxyHandler {
    pub(super) fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }

    /// Calls `name` for the host: waits for the next generation during an outage (up to
    /// `call_wait`), forwards progress with the host's token, abandons the call (cancelling it
    /// upstream) when the host cancels, and turns an outage into a plain-language tool error.
    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let (upstream, raw) = self.shared.route_tool(&request.name)?;
        let served = Served::start(
            "tools/call",
            &[request.meta.as_ref(), Some(&context.meta)],
            Some(raw.as_str()),
        );
        let mut params = CallToolRequestParams::new(raw);
        params.arguments = request.arguments;
        let mut meta = request.meta;
        let host_token = meta
            .as_ref()
            .and_then(|m| m.get_progress_token())
            .or_else(|| context.meta.get_progress_token());
        if let Some(meta) = meta.as_mut() {
            meta.remove("progressToken");
        }
        // A 2026-07-28 server has no logging/setLevel: the host's level goes with each call.
        if let Some(level) = upstream.level()
            && upstream.per_request_levels()
        {
            meta.get_or_insert_with(Default::default)
                .set_log_level(level);
        }
        params.meta = meta.filter(|m| !m.is_empty());
        let mut options = CallOptions::default();
        if let Some(token) = host_token {
            // Queued at once, in order: progress sent before the result reaches the host first.
            let outbox = self.shared.outbox.clone();
            options = options.on_progress(move |mut progress| {
                progress.progress_token = token.clone();
                outbox.notify(ProgressNotification::new(progress).into());
            });
        }
        let waited = Instant::now();
        let outcome = tokio::select! {
            outcome = served.within(self.call_through_revival(&upstream, params, options, waited)) => outcome,
            _ = context.ct.cancelled() => {
                served.end(Some("cancelled"));
                // Dropping the call abandons it; the upstream is told.
                return Err(ErrorData::new(
                    rmcp::model::ErrorCode(-32800),
                    "request cancelled by the host",
                    None,
                ));
            }
        };
        served.end(crate::telemetry::served_error(&outcome));
        match outcome {
            Ok(result) => Ok(result),
            Err(CallError::Server(error)) => Err(error),
            Err(error) => {
                let text = outage::explain(upstream.name(), &error, &forward::standing(&upstream));
                tracing::info!(server = %upstream.name(), %error, "call answered with a tool error");
                Ok(CallToolResult::error(vec![ContentBlock::text(text)]))
            }
        }
    }

    /// Calls through the supervisor; a server that gave up (and that the keeper will start again)
    /// is waited for within the call wait that is left, once, like any other outage.
    async fn call_through_revival(
        &self,
        upstream: &Upstream,
        params: CallToolRequestParams,
        options: CallOptions,
        waited: Instant,
    ) -> Result<CallToolResult, CallError> {
        let outcome = upstream
            .supervisor
            .call(params.clone(), options.clone())
            .await;
        let left = upstream.call_wait.saturating_sub(waited.elapsed());
        // Only a call the server provably did not run may go again (the `CallError` table);
        // a server that gave up is not transient by itself, but the keeper revives it.
        let unrun = outcome.as_ref().is_err_and(|error| !error.may_have_run());
        if !unrun || left.is_zero() || !Upstream::reviving(&upstream.supervisor.state()) {
            return outcome;
        }
        if upstream.wait_ready(left).await {
            upstream.supervisor.call(params, options).await
        } else {
            Err(CallError::Unavailable {
                server: upstream.name().to_owned(),
                state: upstream.supervisor.state(),
            })
        }
    }

    /// The upstream that serves resource `uri` in aggregated mode: the one that listed it (or a
    /// template it matches, tried in order), after a fresh listing if it is not known yet.
    async fn resource_owner(&self, uri: &str) -> Result<Arc<Upstream>, ErrorData> {
        let shared = &self.shared;
        if let Some(only) = shared.only() {
            return Ok(only.clone());
        }
        if shared.routes.resource(uri).is_none() {
            forward::resources(shared.upstreams(), &shared.routes).await;
        }
        match shared.routes.resource(uri) {
            Some(index) => Ok(shared.upstreams()[index].clone()),
            None => Err(ErrorData::resource_not_found(
                format!("no upstream lists the resource '{uri}'"),
                None,
            )),
        }
    }
}

impl ServerHandler for ProxyHandler {
    fn get_info(&self) -> InitializeResult {
        self.shared
            .info
            .get()
            .cloned()
            .unwrap_or_else(|| InitializeResult::new(everything()))
    }

    /// The host side speaks the session era: `initialize` is where the upstreams start.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        self.shared.start(context.peer.clone(), &request).await?;
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.shared.host_tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, context).await.map(Into::into)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let shared = &self.shared;
        if let Some(only) = shared.only() {
            let request = ListResourcesRequest {
                params: request,
                ..Default::default()
            };
            return ask(only, ClientRequest::ListResourcesRequest(request)).await;
        }
        let all = forward::resources(shared.upstreams(), &shared.routes).await;
        Ok(ListResourcesResult::with_all_items(all))
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let shared = &self.shared;
        if let Some(only) = shared.only() {
            let request = ListResourceTemplatesRequest {
                params: request,
                ..Default::default()
            };
            return ask(only, ClientRequest::ListResourceTemplatesRequest(request)).await;
        }
        let all = forward::templates(shared.upstreams(), &shared.routes).await;
        Ok(ListResourceTemplatesResult::with_all_items(all))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let read = |params: ReadResourceRequestParams| {
            ClientRequest::ReadResourceRequest(ReadResourceRequest::new(params))
        };
        let shared = &self.shared;
        if shared.only().is_some() || shared.routes.resource(&request.uri).is_some() {
            let owner = self.resource_owner(&request.uri).await?;
            let result: ReadResourceResult = ask(&owner, read(request)).await?;
            return Ok(result.into());
        }
        // Aggregated, and no listing names the URI: a listed resource that appeared since, or a
        // URI made from a template. The first upstream that can read it answers.
        if let Ok(owner) = self.resource_owner(&request.uri).await {
            let result: ReadResourceResult = ask(&owner, read(request)).await?;
            return Ok(result.into());
        }
        let mut last = None;
        for upstream in shared.upstreams() {
            match ask::<ReadResourceResult>(upstream, read(request.clone())).await {
                Ok(result) => return Ok(result.into()),
                Err(error) => last = Some(error),
            }
        }
        Err(last.unwrap_or_else(not_initialized))
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let owner = self.resource_owner(&request.uri).await?;
        owner
            .supervisor
            .subscribe(&request.uri)
            .await
            .map_err(|error| forward::request_error(&owner, error))
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let owner = self.resource_owner(&request.uri).await?;
        owner
            .supervisor
            .unsubscribe(&request.uri)
            .await
            .map_err(|error| forward::request_error(&owner, error))
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let shared = &self.shared;
        if let Some(only) = shared.only() {
            let request = ListPromptsRequest {
                params: request,
                ..Default::default()
            };
            return ask(only, ClientRequest::ListPromptsRequest(request)).await;
        }
        let all = forward::prompts(shared.upstreams(), &shared.routes).await;
        Ok(ListPromptsResult::with_all_items(all))
    }

    async fn get_prompt(
        &self,
        mut request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
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
    }

    async fn complete(
        &self,
        mut request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let shared = &self.shared;
        let owner = match (shared.only(), &mut request.r#ref) {
            (Some(only), _) => only.clone(),
            (None, Reference::Prompt(prompt)) => {
                let (index, raw) = self.prompt_owner(&prompt.name).await?;
                prompt.name = raw;
                shared.upstreams()[index].clone()
            }
            (None, Reference::Resource(template)) => {
                if shared.routes.template(&template.uri).is_none() {
                    forward::templates(shared.upstreams(), &shared.routes).await;
                }
                let index = shared.routes.template(&template.uri).ok_or_else(|| {
                    ErrorData::invalid_params(
                        format!("no upstream lists the resource template '{}'", template.uri),
                        None,
                    )
                })?;
                shared.upstreams()[index].clone()
            }
            (None, _) => {
                return Err(ErrorData::invalid_params(
                    "the proxy cannot route this kind of completion reference",
                    None,
                ));
            }
        };
        ask(
            &owner,
            ClientRequest::CompleteRequest(CompleteRequest::new(request)),
        )
        .await
    }

    /// Every upstream that logs gets the level (transparent: the answer is the upstream's).
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let shared = &self.shared;
        for upstream in shared.upstreams() {
            upstream.set_level(request.level);
        }
        let send = |upstream: &Arc<Upstream>| {
            let request = ClientRequest::SetLevelRequest(SetLevelRequest::new(request.clone()));
            let upstream = upstream.clone();
            async move { ask::<rmcp::model::EmptyResult>(&upstream, request).await }
        };
        if let Some(only) = shared.only()
            && !only.per_request_levels()
        {
            // The server's own refusal is the host's answer; an outage is not: the level is
            // kept and sent to the next generation.
            let request = ClientRequest::SetLevelRequest(SetLevelRequest::new(request));
            return match only
                .supervisor
                .request(request, CallOptions::default())
                .await
            {
                Ok(_) => Ok(()),
                Err(CallError::Server(error)) => Err(error),
                Err(error) => {
                    tracing::info!(server = %only.name(), %error, "log level kept for the next generation");
                    Ok(())
                }
            };
        }
        let logging: Vec<_> = shared
            .upstreams()
            .iter()
            .filter(|u| {
                !u.per_request_levels()
                    && u.supervisor
                        .server_info()
                        .is_some_and(|info| info.capabilities.logging.is_some())
            })
            .collect();
        for (upstream, result) in logging
            .iter()
            .zip(futures::future::join_all(logging.iter().map(|u| send(u))).await)
        {
            if let Err(error) = result {
                tracing::warn!(server = %upstream.name(), error = %error.message, "logging/setLevel not taken");
            }
        }
        Ok(())
    }
}

impl ProxyHandler {
    /// The upstream index and raw name of a public prompt name (aggregated mode).
    async fn prompt_owner(&self, public: &str) -> Result<(usize, String), ErrorData> {
        let shared = &self.shared;
        if shared.routes.prompt(public).is_none() {
            forward::prompts(shared.upstreams(), &shared.routes).await;
        }
        shared
            .routes
            .prompt(public)
            .ok_or_else(|| ErrorData::invalid_params(format!("no prompt named '{public}'"), None))
    }
}
