//! The supervisor: one per server, owner of that server's generations.
//!
//! [`Supervisor::builder`] validates the configuration, attaches the server to the
//! [`ToolRegistry`] and spawns the supervisor task, which connects, publishes the tools, watches
//! the generation (transport end, child exit, heartbeat, failing calls), and rebuilds it with
//! bounded backoff when it dies.
//!
//! The handle is [`Supervisor`]: built in `builder`, its requests to the server in `requests`,
//! its status, restart and shutdown here. Its parts are children of this module and private to
//! it: `actor` (the task), `dispatch` (how a request reaches the current generation), `board`
//! (the published status), `session` (one generation's connection), `mailbox` (what reaches the
//! actor) and `reconnect` (when to try again, and the origin watch).
//!
//! # Invariants
//!
//! The pieces that carry the supervisor's invariants: `reconnect::retry_guard` (single
//! retrier), `actor` (one live generation, fence, serialized sync, quiescent disposal, outage
//! budget), `session::generation` (death reporting, close barrier), `session::heartbeat`
//! (idle-only probe), `board` (one status, never contradicting itself).

// The supervisor's parts, private to it: the handle above (this file, builder.rs, requests.rs)
// is all the crate outside sees of them, apart from what each part re-exports for the crate's
// other layers (the registry reads a `StatusWatch`; the fuzz checks reach the connect parsers).
pub(crate) mod actor;
pub(crate) mod board;
mod builder;
pub(crate) mod dispatch;
pub(crate) mod mailbox;
pub(crate) mod reconnect;
mod requests;
pub(crate) mod session;

use std::{sync::Arc, time::Duration};

use rmcp::model::ServerPeerInfo;
use tokio::sync::{mpsc, oneshot};

use crate::supervisor::board::StatusWatch;
pub use builder::SupervisorBuilder;

use crate::{
    NotReady,
    registry::ToolRegistry,
    state::{Cause, ConnectionState, Death, EventReceiver, Generation, Status},
    supervisor::board::Board,
    supervisor::dispatch::CallPath,
    supervisor::mailbox::{Depth, Msg},
    supervisor::session::relay::Relay,
};

/// The handle to one supervised server. Cheap to clone: clones share the supervisor.
///
/// Dropping the last clone without [`shutdown`](Self::shutdown) asks the supervisor task to
/// stop, but does not wait for it; call `shutdown().await` for a quiescent stop.
#[derive(Debug, Clone)]
pub struct Supervisor {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    server: Arc<str>,
    /// The status, read here and written by the actor.
    board: Arc<Board>,
    /// The actor's mailbox.
    tx: mpsc::UnboundedSender<Msg>,
    /// Resource subscriptions kept across generations.
    relay: Arc<Relay>,
    calls: Arc<CallPath>,
    registry: ToolRegistry,
    /// The mailbox's peak depth, noted by the actor; read only with feature `test-hooks`.
    #[cfg_attr(not(feature = "test-hooks"), allow(dead_code))]
    depth: Arc<Depth>,
}

impl Supervisor {
    /// The server's name.
    pub fn name(&self) -> &str {
        &self.inner.server
    }

    /// The registry this server publishes into.
    pub fn registry(&self) -> &ToolRegistry {
        &self.inner.registry
    }

    /// The server's status now: its state, the generation it is about, and its sequence number.
    pub fn status(&self) -> Status {
        self.inner.board.status()
    }

    /// The generation taking calls now, or `None` when the server is not ready (or its ready
    /// generation's death was just noticed and a new status is on its way). Cheap: one read of
    /// the board, no clone of the status and its strings; `status().ready()` says the same
    /// with the whole status.
    pub fn generation(&self) -> Option<Generation> {
        self.inner.board.ready_generation()
    }

    /// Follows the status: every change from now on (the latest wins if the reader lags).
    pub fn watch(&self) -> StatusWatch {
        StatusWatch::new(self.inner.board.subscribe())
    }

    /// Every status change, tool-set change, probe miss and stability mark from now on. A
    /// receiver that falls more than 32 events behind gets [`RecvError::Lagged`]; read
    /// [`status`](Self::status) and the registry's snapshot then.
    ///
    /// [`RecvError::Lagged`]: crate::state::RecvError::Lagged
    pub fn events(&self) -> EventReceiver {
        EventReceiver::new(self.inner.board.events())
    }

    /// The most messages that have waited for the supervisor task at once so far. Not part of
    /// the API: the tests of the mailbox's bound on a server's `list_changed` flood read it.
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn mailbox_peak(&self) -> usize {
        self.inner.depth.peak()
    }

    /// What the liveness groups of `url`'s endpoint did so far: heartbeat wake-ups (their
    /// members' and their timers'), group probes that went unanswered (each wakes every resting
    /// member), and the members resting now. Not part of the API: the test that bounds a
    /// group's wake-ups reads it.
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn origin_wakes(url: &url::Url) -> (u64, u64, u64) {
        session::origin::counts(url)
    }

    /// Trusts the PEM certificates `pem` beside the platform's roots on this process's HTTP/2
    /// connections (`Http2::Auto` over TLS); false when it comes too late (other roots were set,
    /// or a TLS connection was opened already). Not part of the API: the tests of the mock's
    /// https trust its throwaway CA with it.
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn trust_for_http2(pem: &[u8]) -> bool {
        crate::transport::http2::trust_beside_the_platform(pem)
    }

    /// What the ready generation's server said about itself (`initialize` result, or for a
    /// 2026-07-28 server its `server/discover` answer): name, version, capabilities,
    /// instructions. `None` during an outage.
    pub fn server_info(&self) -> Option<ServerPeerInfo> {
        let live = self.inner.board.current().live?;
        live.link.peer_info().map(|info| (*info).clone())
    }

    /// The round trip of the last heartbeat probe the ready generation sent for itself and had
    /// answered (`None` during an outage, before its first answered probe, or with the
    /// heartbeat off). With [`HeartbeatScope::Origin`](crate::config::HeartbeatScope::Origin)
    /// a member whose group's answer stood in for its own probe keeps its last own figure.
    pub fn probe_round_trip(&self) -> Option<Duration> {
        self.inner.board.current().live?.probe_round_trip()
    }

    /// How many tool calls were sent again since the start: lost with their generation, or
    /// with their cut answer stream, to a tool annotated read-only or idempotent
    /// ([`Replay`](crate::config::Replay)). A call sent again both ways counts once.
    pub fn replayed_calls(&self) -> u64 {
        self.inner.calls.replays.get()
    }

    /// Waits until the server is ready and takes calls (returns its generation), failed,
    /// stopping or stopped (the error holds that status), or `limit` elapsed (the error holds the
    /// status at that time). A generation whose death has been reported is not returned: the
    /// wait goes on to the next one.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: it only watches.
    pub async fn wait_ready(&self, limit: Duration) -> Result<Generation, NotReady> {
        let mut rx = self.inner.board.subscribe();
        // The answer is taken inside the predicate, in the one look that decided it: a death
        // reported just after (a flag, no board change) must not turn a seen `ready` into an
        // error that names `ready`.
        let mut ready = None;
        let settled = tokio::time::timeout(
            limit,
            rx.wait_for(|board| {
                ready = board.taking_calls().map(|live| live.generation);
                ready.is_some()
                    || matches!(
                        board.status.state,
                        ConnectionState::Failed { .. }
                            | ConnectionState::Stopping
                            | ConnectionState::Stopped
                    )
            }),
        )
        .await;
        if let Some(generation) = ready {
            return Ok(generation);
        }
        let status = match settled {
            Ok(Ok(board)) => board.status.clone(),
            _ => self.inner.board.current().status,
        };
        Err(NotReady {
            server: self.name().to_owned(),
            status,
        })
    }

    /// Reports that `generation` looks dead to the host (for example its own check failed).
    /// Returns true if this report started the recovery; false if the generation is not the
    /// current one, its death was already reported, or the supervisor is stopping.
    pub fn report_failure(&self, generation: Generation, detail: impl Into<String>) -> bool {
        match self.inner.board.current().live {
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
        let _ = self
            .inner
            .tx
            .send(Msg::list_changed(generation, Default::default()));
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
        if self.inner.tx.send(Msg::Restart { done }).is_ok() {
            let _ = wait.await;
        }
    }

    /// Stops supervising: cancels any backoff and attempt, closes the current generation
    /// through the close barrier, unregisters the tools and detaches from the registry.
    /// Returns when nothing of this server is left running (the status is `stopped`).
    /// Idempotent; concurrent calls from several clones all return once it is done.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: a call dropped midway leaves the shutdown going on (the actor has been
    /// told), and the next call waits for it to finish.
    pub async fn shutdown(&self) {
        let mut rx = self.inner.board.subscribe();
        if matches!(rx.borrow().status.state, ConnectionState::Stopped) {
            return;
        }
        // A second `Shutdown` (after a dropped call, or from another clone) finds the actor
        // already stopping or gone: either way the status below is what is waited for.
        let _ = self.inner.tx.send(Msg::Shutdown);
        let _ = rx
            .wait_for(|board| matches!(board.status.state, ConnectionState::Stopped))
            .await;
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if !matches!(self.board.status().state, ConnectionState::Stopped) {
            let _ = self.tx.send(Msg::Shutdown);
        }
    }
}
