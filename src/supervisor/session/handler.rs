//! The rmcp client handler of one generation.

// Sampling and roots: deprecated by SEP-2577, still asked for by servers (see `crate::host`).
#![allow(deprecated)]

use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::{
    ClientHandler, RoleClient,
    model::{
        ClientConfig, ClientResult, CreateMessageRequestParams, CreateMessageResult,
        CustomNotification, ElicitRequestParams, ElicitResult, ErrorCode, ErrorData,
        Implementation, ListRootsResult, LoggingMessageNotification,
        LoggingMessageNotificationParam, ProgressNotification, ProgressNotificationParam,
        PromptListChangedNotification, ProtocolVersion, ResourceListChangedNotification,
        ResourceUpdatedNotification, ResourceUpdatedNotificationParam, ServerNotification,
        ServerRequest,
    },
    service::{NotificationContext, RequestContext},
};
use tokio::sync::mpsc;

use super::relay::Relay;
use crate::supervisor::mailbox::{ListChange, Msg};
use crate::{host::HostHandlers, state::Generation};

/// One per generation: it stamps every notification with its generation, so the supervisor can
/// ignore what a replaced generation says (rmcp runs each notification in its own task, so a
/// late one can arrive after the replacement), and it hands what the server asks of the client
/// (elicitation, sampling, roots) to the host's handlers, and what it tells the host (progress,
/// log messages, resource and prompt changes) to the call waiting for it or the host's
/// notification handler.
///
/// rmcp runs each notification it receives in a task of its own (that is not ours to change);
/// what bounds them is that the work here does not wait: a progress callback is called in
/// place, and the proxy's notification handler only queues (its outbox). A host's own handler
/// that waits holds one task per notification (see [`HostHandlers::on_notification`]).
pub(in crate::supervisor) struct GenerationHandler {
    generation: Generation,
    server: Arc<str>,
    /// `notifications/tools/list_changed`, to the supervisor (at most one message waiting).
    changed: ListChange,
    handlers: HostHandlers,
    relay: Arc<Relay>,
    info: ClientConfig,
}

impl GenerationHandler {
    /// Who this client says it is (what a 2026-07-28 request's `_meta` carries).
    pub(in crate::supervisor) fn client_meta(&self) -> crate::transport::http::ClientMeta {
        crate::transport::http::ClientMeta {
            info: self.info.client_info.clone(),
            capabilities: self.info.capabilities.clone(),
        }
    }

    /// The server and generation this handler belongs to.
    pub(in crate::supervisor) fn label(&self) -> (Arc<str>, Generation) {
        (self.server.clone(), self.generation)
    }

    /// Where progress for this generation's calls goes.
    pub(in crate::supervisor) fn relay(&self) -> Arc<Relay> {
        self.relay.clone()
    }

    pub(in crate::supervisor) fn new(
        generation: Generation,
        server: Arc<str>,
        tx: mpsc::UnboundedSender<Msg>,
        handlers: HostHandlers,
        relay: Arc<Relay>,
        protocol_version: ProtocolVersion,
    ) -> Self {
        let info = ClientConfig::new(
            handlers.capabilities(),
            Implementation::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(protocol_version);
        GenerationHandler {
            generation,
            server,
            changed: ListChange::new(generation, tx),
            handlers,
            relay,
            info,
        }
    }

    async fn tell_host(&self, notification: ServerNotification) {
        self.handlers
            .notify(self.server.clone(), notification)
            .await;
    }

    /// Progress: to the route of the call it belongs to, or else to the host.
    async fn progress(&self, params: ProgressNotificationParam) {
        if let Some(unclaimed) = self.relay.progress(self.generation, params).await {
            self.tell_host(ProgressNotification::new(unclaimed).into())
                .await;
        }
    }
}

/// The same handling on the lean link ([`crate::transport::http::link`]), which has no
/// contexts to give: the notifications and requests the rmcp handler below answers, answered
/// alike; the rest ignored, as rmcp's defaults ignore them.
impl crate::transport::http::link::Dispatch for GenerationHandler {
    fn notify(&self, notification: ServerNotification) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            match notification {
                ServerNotification::ToolListChangedNotification(_) => {
                    self.changed.raise();
                }
                ServerNotification::ProgressNotification(progress) => {
                    // The link dispatches in the order received, before the answer: the count
                    // the route settles on is kept all the same.
                    self.relay
                        .arrived(self.generation, &progress.params.progress_token);
                    self.progress(progress.params).await;
                }
                ServerNotification::LoggingMessageNotification(_)
                | ServerNotification::ResourceUpdatedNotification(_)
                | ServerNotification::ResourceListChangedNotification(_)
                | ServerNotification::PromptListChangedNotification(_)
                | ServerNotification::CustomNotification(_) => self.tell_host(notification).await,
                _ => {}
            }
        })
    }

    fn request(&self, request: ServerRequest) -> BoxFuture<'_, Result<ClientResult, ErrorData>> {
        Box::pin(async move {
            let server = self.server.clone();
            match request {
                ServerRequest::PingRequest(_) => Ok(ClientResult::empty(())),
                ServerRequest::CreateMessageRequest(request) => self
                    .handlers
                    .sample(server, request.params)
                    .await
                    .map(|result| ClientResult::CreateMessageResult(Box::new(result))),
                ServerRequest::ListRootsRequest(_) => self
                    .handlers
                    .roots(server)
                    .await
                    .map(ClientResult::ListRootsResult),
                ServerRequest::ElicitRequest(request) => self
                    .handlers
                    .elicit(server, request.params)
                    .await
                    .map(ClientResult::ElicitResult),
                ServerRequest::CustomRequest(request) => Err(ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    request.method,
                    None,
                )),
                _ => Err(ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    "not a request this client answers",
                    None,
                )),
            }
        })
    }
}

impl ClientHandler for GenerationHandler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.raise();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress(params).await;
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.tell_host(LoggingMessageNotification::new(params).into())
            .await;
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.tell_host(ResourceUpdatedNotification::new(params).into())
            .await;
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tell_host(ResourceListChangedNotification::default().into())
            .await;
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tell_host(PromptListChangedNotification::default().into())
            .await;
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        _context: NotificationContext<RoleClient>,
    ) {
        self.tell_host(notification.into()).await;
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.handlers.elicit(self.server.clone(), request).await
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.handlers.sample(self.server.clone(), params).await
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.handlers.roots(self.server.clone()).await
    }

    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }
}
