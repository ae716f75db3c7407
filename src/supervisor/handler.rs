//! The rmcp client handler of one generation.

use rmcp::{
    ClientHandler, RoleClient,
    model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion},
    service::NotificationContext,
};
use tokio::sync::mpsc;

use super::actor::Msg;
use crate::state::Generation;

/// One per generation: it stamps every notification with its generation, so the supervisor can
/// ignore what a replaced generation says (rmcp runs each notification in its own task, so a
/// late one can arrive after the replacement).
pub(crate) struct GenerationHandler {
    generation: Generation,
    tx: mpsc::UnboundedSender<Msg>,
    info: ClientConfig,
}

impl GenerationHandler {
    pub(crate) fn new(
        generation: Generation,
        tx: mpsc::UnboundedSender<Msg>,
        protocol_version: ProtocolVersion,
    ) -> Self {
        let info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(protocol_version);
        GenerationHandler {
            generation,
            tx,
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

    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }
}
