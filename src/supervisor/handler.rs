//! The rmcp client handler of one generation.

// Sampling and roots: deprecated by SEP-2577, still asked for by servers (see `crate::host`).
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::{
    ClientHandler, RoleClient,
    model::{
        ClientConfig, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
        ElicitResult, ErrorData, Implementation, ListRootsResult, ProtocolVersion,
    },
    service::{NotificationContext, RequestContext},
};
use tokio::sync::mpsc;

use super::actor::Msg;
use crate::{host::HostHandlers, state::Generation};

/// One per generation: it stamps every notification with its generation, so the supervisor can
/// ignore what a replaced generation says (rmcp runs each notification in its own task, so a
/// late one can arrive after the replacement), and it hands what the server asks of the client
/// (elicitation, sampling, roots) to the host's handlers.
pub(crate) struct GenerationHandler {
    generation: Generation,
    server: Arc<str>,
    tx: mpsc::UnboundedSender<Msg>,
    handlers: HostHandlers,
    info: ClientConfig,
}

impl GenerationHandler {
    pub(crate) fn new(
        generation: Generation,
        server: Arc<str>,
        tx: mpsc::UnboundedSender<Msg>,
        handlers: HostHandlers,
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
            tx,
            handlers,
            info,
        }
    }
}

impl ClientHandler for GenerationHandler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        // The supervisor may be gone (shutdown); then there is nothing to re-sync.
        let _ = self.tx.send(Msg::ListChanged {
            generation: self.generation,
        });
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
