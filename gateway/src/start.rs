//! How a host session's own upstreams start: at the host's `initialize` (the session era), or
//! at its first request when it never initializes (2026-07-28 on stdio); either way once, and
//! a host that asks `server/discover` first and then initializes gets the ones already started.

use std::sync::Arc;

use rmcp::{ErrorData, RoleServer, model::InitializeRequestParams};

use mcp_resilient::ServerConfig;

use super::{
    host::{self, Target},
    shared::{Shared, lock},
    upstreams::Upstreams,
};

impl Shared {
    /// Starts this session's own upstreams with handlers that reach the host, waits for them
    /// up to the startup wait, and starts the announcer. A host that asked `server/discover`
    /// first (which started them, [`start_inline`](Self::start_inline)) initializes onto them.
    pub(super) async fn start(
        self: &Arc<Self>,
        peer: rmcp::Peer<RoleServer>,
        request: &InitializeRequestParams,
        session_id: Option<String>,
    ) -> Result<(), ErrorData> {
        let configs = lock(&self.pending).take();
        if configs.is_none() && (self.inline.get().is_none() || self.link.is_initialized()) {
            return Err(ErrorData::invalid_request(
                "initialize was already answered in this session",
                None,
            ));
        }
        self.link.initialized(peer.clone(), request, session_id);
        self.start_own(configs.unwrap_or_default()).await?;
        let announcer = tokio::spawn(self.clone().announce(self.stop.clone()));
        lock(&self.tasks).push(announcer);
        Ok(())
    }

    /// Starts this session's own upstreams for a host that never initializes: a 2026-07-28
    /// host of the stdio front, at its first request (`server/discover`, or any other). Its
    /// revision has no requests from server to client, so the host link stays uninitialized
    /// (what an upstream asks of the host is declined, as for a 2026-07-28 host of `serve`),
    /// and list changes reach it only on its `subscriptions/listen` streams; its outbox opens at
    /// once, for the progress and log messages of its own calls. Requests that arrive together
    /// wait for the one start; a host that initialized makes this a no-op.
    pub(super) async fn start_inline(self: &Arc<Self>) -> Result<(), ErrorData> {
        let start = async {
            let configs = lock(&self.pending).take().unwrap_or_default();
            self.start_own(configs).await?;
            self.link.outbox.open();
            Ok::<(), ErrorData>(())
        };
        if self.link.is_initialized() {
            return Ok(());
        }
        self.inline.get_or_try_init(|| start).await.map(|_| ())
    }

    /// Starts `configs` as this session's own upstreams (none: nothing to start), waits for
    /// them up to the startup wait, and sets the answer that describes the upstreams.
    async fn start_own(self: &Arc<Self>, configs: Vec<ServerConfig>) -> Result<(), ErrorData> {
        if !configs.is_empty() {
            let (target, mode) = (Target::Owner(self.link.clone()), self.mode);
            let own = Upstreams::start(configs, &self.options, |callers| {
                host::handlers(target, callers, mode)
            })
            .await
            .map_err(|failed| ErrorData::internal_error(failed.to_string(), None))?;
            let own = self.own.get_or_init(|| own);
            own.wait_ready(self.options.startup_wait).await;
        }
        let _ = self.info.set(self.describe());
        Ok(())
    }
}
