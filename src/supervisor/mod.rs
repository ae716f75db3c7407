//! The supervisor: one per server, owner of that server's generations.
//!
//! [`Supervisor::start`] validates the configuration, attaches the server to the
//! [`ToolRegistry`] and spawns the supervisor task, which connects, publishes the tools, watches
//! the generation (transport end, child exit, heartbeat, failing calls), and rebuilds it with
//! bounded backoff when it dies.
//!
//! The handle is [`Supervisor`]: started in `start`, its requests to the server in `requests`,
//! its state, restart and shutdown here.
//!
//! # Invariants
//!
//! The ten invariants of the design hold here; the pieces that carry them:
//! [`retry_guard`] (single retrier), `actor` (one live generation, fence, serialized sync,
//! quiescent disposal, outage budget), `generation` (death reporting, close barrier),
//! `heartbeat` (idle-only probe).

mod actor;
mod backoff;
pub(crate) mod connect;
mod generation;
mod handler;
mod heartbeat;
mod http_client;
mod link;
mod listen;
mod live;
mod msg;
mod policy;
mod relay;
mod requests;
mod retry_guard;
mod start;
mod sync;

use std::{sync::Arc, time::Duration};

use rmcp::model::ServerPeerInfo;
use tokio::{
    sync::{broadcast, oneshot, watch},
    task::JoinHandle,
};

pub(crate) use link::Link;

use crate::{
    registry::ToolRegistry,
    state::{Cause, ConnectionState, Death, Event, Generation},
};

/// The handle to one supervised server.
///
/// Dropping it without [`shutdown`](Self::shutdown) asks the supervisor task to stop, but does
/// not wait for it; call `shutdown().await` for a quiescent stop.
#[derive(Debug)]
pub struct Supervisor {
    link: Arc<Link>,
    registry: ToolRegistry,
    /// The supervisor task; cleared by the `shutdown` that saw it end.
    task: tokio::sync::Mutex<Option<JoinHandle<()>>>,
}

impl Supervisor {
    /// The server's name.
    pub fn name(&self) -> &str {
        &self.link.server
    }

    /// The bounds on what the server may send (its config's [`Limits`](crate::config::Limits)).
    pub fn limits(&self) -> &crate::config::Limits {
        &self.link.limits
    }

    /// The registry this server publishes into.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// The current state.
    pub fn state(&self) -> ConnectionState {
        self.link.state.borrow().clone()
    }

    /// A receiver that sees every state change (the latest one wins if it lags).
    pub fn state_watch(&self) -> watch::Receiver<ConnectionState> {
        self.link.state.subscribe()
    }

    /// Every state change, tool-set change, probe miss and stability mark from now on. A
    /// receiver that falls more than 32 events behind gets `Lagged`; read
    /// [`state`](Self::state) and the registry's snapshot then.
    pub fn events(&self) -> broadcast::Receiver<Event> {
        self.link.events.subscribe()
    }

    /// The protocol version the ready generation negotiated (`2026-07-28`, `2025-11-25`, …), if
    /// there is one.
    pub fn protocol(&self) -> Option<String> {
        self.link
            .live
            .borrow()
            .as_ref()
            .map(|live| live.protocol.to_string())
    }

    /// The ready generation, if there is one.
    pub fn generation(&self) -> Option<Generation> {
        self.link.live.borrow().as_ref().map(|live| live.generation)
    }

    /// What the ready generation's server said about itself (`initialize` result, or for a
    /// 2026-07-28 server its `server/discover` answer): name, version, capabilities,
    /// instructions. `None` during an outage.
    pub fn server_info(&self) -> Option<ServerPeerInfo> {
        let live = self.link.live.borrow().clone()?;
        live.peer.peer_info().map(|info| (*info).clone())
    }

    /// Waits until the server is ready (returns its generation), failed or stopped (returns
    /// that state as the error), or `limit` elapsed (returns the state at that time).
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: it only watches.
    pub async fn wait_ready(&self, limit: Duration) -> Result<Generation, ConnectionState> {
        let mut rx = self.state_watch();
        let settled = tokio::time::timeout(
            limit,
            rx.wait_for(|s| {
                matches!(
                    s,
                    ConnectionState::Ready { .. }
                        | ConnectionState::Failed { .. }
                        | ConnectionState::Stopped
                )
            }),
        )
        .await;
        let state = match settled {
            Ok(Ok(state)) => state.clone(),
            _ => self.state(),
        };
        match state {
            ConnectionState::Ready { generation, .. } => Ok(generation),
            other => Err(other),
        }
    }

    /// Reports that `generation` looks dead to the host (for example its own check failed).
    /// Returns true if this report started the recovery; false if the generation is not the
    /// current one, its death was already reported, or the supervisor is stopping.
    pub fn report_failure(&self, generation: Generation, detail: impl Into<String>) -> bool {
        let live = self.link.live.borrow().clone();
        match live {
            Some(live) if live.generation == generation => live.report_death(Death::new(
                Cause::TransportError,
                format!("reported by host: {}", detail.into()),
            )),
            _ => false,
        }
    }

    /// Asks for a tool re-sync of `generation`, as a `tools/list_changed` notification would.
    /// Ignored unless `generation` is the current one.
    pub fn request_tool_sync(&self, generation: Generation) {
        let _ = self.link.tx.send(msg::Msg::ListChanged { generation });
    }

    /// Closes the current generation (if any), refills the outage budget and connects again.
    /// The way out of `failed`. Returns once the new attempt has started.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: the restart is queued before anything is awaited, so a dropped call still
    /// restarts the server; only the wait for the new attempt to start is given up.
    pub async fn restart(&self) {
        let (done, wait) = oneshot::channel();
        if self.link.tx.send(msg::Msg::Restart { done }).is_ok() {
            let _ = wait.await;
        }
    }

    /// Stops supervising: cancels any backoff and attempt, closes the current generation
    /// through the close barrier, unregisters the tools and detaches from the registry.
    /// Returns when nothing of this server is left running. Idempotent.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: a call dropped midway leaves the shutdown going on (the actor has been
    /// told), and the next call waits for it to finish; concurrent calls all return once it
    /// has.
    pub async fn shutdown(&self) {
        let mut task = self.task.lock().await;
        // The handle stays in place until the actor has ended: a call dropped before that must
        // leave the next one something to wait for.
        let Some(handle) = task.as_mut() else { return };
        let (done, wait) = oneshot::channel();
        // A second `Shutdown` (after a dropped call) finds the actor already stopping: its
        // `done` is dropped with the queue, and the handle below is what is waited for.
        if self
            .link
            .tx
            .send(msg::Msg::Shutdown { done: Some(done) })
            .is_ok()
        {
            let _ = wait.await;
        }
        let _ = handle.await;
        *task = None;
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        if self.task.get_mut().is_some() {
            let _ = self.link.tx.send(msg::Msg::Shutdown { done: None });
        }
    }
}
