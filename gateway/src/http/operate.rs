//! What `serve` runs beside the MCP service for its operators: the status board (and its
//! pages) and the reloads' task.

use std::{net::SocketAddr, sync::Arc};

use axum::Router;
use tokio::task::JoinHandle;

use super::{
    ServeOptions, guard::Gate, hub::Hub, reloader::Reloader, restore::StoreCounts,
    settings::allowed, status,
};
use mcp_resilient::ServerConfig;

/// The board and the reloads' task, owned by [`Gateway::serve`](super::Gateway::serve).
pub(in crate::http) struct Operated {
    board: Arc<status::Board>,
    reloads: Option<JoinHandle<()>>,
}

impl Operated {
    /// Starts the board, and the reloads' task when the options have a reload handle.
    /// `per_host`: the servers with one upstream session per host session.
    pub(in crate::http) fn start(
        hub: &Arc<Hub>,
        gate: &Arc<Gate>,
        options: &ServeOptions,
        address: SocketAddr,
        store: Arc<StoreCounts>,
        per_host: Vec<ServerConfig>,
    ) -> Operated {
        let board = status::Board::start(status::Parts {
            hub: hub.clone(),
            gate: gate.clone(),
            admission: gate.admission.clone(),
            doorway: allowed(options, address),
            replica: address.to_string(),
            front: options.front.name(),
            store,
            host_store: options.store.clone(),
        });
        let reloads = (options.reload.as_ref().and_then(|r| r.take())).map(|asks| {
            let reloader = Reloader {
                hub: hub.clone(),
                board: board.clone(),
                mode: hub.mode(),
                proxy: options.proxy.clone(),
                per_host: options.per_host.clone(),
                own: per_host,
            };
            tokio::spawn(reloader.run(asks))
        });
        Operated { board, reloads }
    }

    /// The status pages' routes.
    pub(in crate::http) fn routes(&self) -> Router {
        status::routes(self.board.clone())
    }

    /// Ends the reloads' task (a reload in progress is abandoned: the hub's shutdown stops
    /// what it started) and the board's trackers.
    pub(in crate::http) async fn close(self) {
        if let Some(reloads) = self.reloads {
            reloads.abort();
            let _ = reloads.await;
        }
        self.board.close().await;
    }
}
