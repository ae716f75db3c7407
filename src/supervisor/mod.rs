//! The supervisor: one per server, owner of that server's generations.
//!
//! [`Supervisor::start`] validates the configuration, attaches the server to the
//! [`ToolRegistry`] and spawns the supervisor task, which connects, publishes the tools, watches
//! the generation (transport end, child exit, heartbeat, failing calls), and rebuilds it with
//! bounded backoff when it dies.
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
mod retry_guard;
mod sync;

use std::{sync::Arc, time::Duration};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientRequest, ServerPeerInfo, ServerResult,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
#[allow(deprecated)]
// resources/(un)subscribe: legacy-only, and so used only on 2025 generations
use rmcp::model::{SubscribeRequest, UnsubscribeRequest};
use tokio::{
    sync::{broadcast, mpsc, oneshot, watch},
    task::JoinHandle,
};
use tracing::Instrument;

use http_client::{default_http_client, same_origin_redirects};
pub(crate) use link::Link;

use crate::{
    CallError, StartError,
    call::CallOptions,
    config::ServerConfig,
    registry::{ToolRegistry, handle::to_object},
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
    /// Validates `config`, registers the server in `registry` and starts connecting.
    ///
    /// Returns at once, in state `connecting`; use [`wait_ready`](Self::wait_ready) or
    /// [`state_watch`](Self::state_watch) to follow it.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: nothing is awaited before the supervisor exists, so the future completes on
    /// its first poll, and one dropped unpolled has started nothing.
    pub async fn start(
        config: ServerConfig,
        registry: ToolRegistry,
    ) -> Result<Supervisor, StartError> {
        let http = default_http_client().map_err(StartError::HttpClient)?;
        Self::start_with_client(config, registry, http.clone()).await
    }

    /// The redirect policy of the default client, for a client of your own (see
    /// [`start_with_client`](Self::start_with_client)): at most 5 redirects, and only to the
    /// origin of the request that was redirected. A 307 or 308 carries the body and every
    /// configured header (an API key in `X-Api-Key`, say), which must never leave for a host the
    /// configuration did not name; a cross-origin redirect is returned as the 3xx it is, and the
    /// server is reported `rejected`.
    pub fn same_origin_redirects() -> reqwest::redirect::Policy {
        same_origin_redirects()
    }

    /// Like [`start`](Self::start), with the caller's `reqwest::Client` for remote transports
    /// (share one client between servers to pool connections). Give it a connect timeout and
    /// no overall timeout (SSE streams live as long as their session), and a redirect policy that
    /// does not follow other origins: [`same_origin_redirects`](Self::same_origin_redirects).
    ///
    /// # Cancel safety
    ///
    /// As [`start`](Self::start): it completes on its first poll.
    pub async fn start_with_client(
        config: ServerConfig,
        registry: ToolRegistry,
        http: reqwest::Client,
    ) -> Result<Supervisor, StartError> {
        let config = Arc::new(config.resolve()?);
        let auth = match &config.transport {
            crate::config::TransportConfig::Remote(remote) => {
                crate::auth::Authorizer::new(&config.name, &remote.url, &remote.auth)
                    .map_err(StartError::Auth)?
            }
            crate::config::TransportConfig::Stdio(_) => None,
        };
        let server: Arc<str> = Arc::from(config.name.as_str());
        let (tx, rx) = mpsc::unbounded_channel();
        // Events are rare (state changes, tool changes, probe misses); a slow reader lags rather than
        // costing every idle connection a large preallocated ring.
        let (events, _) = broadcast::channel(32);
        let relay = Arc::new(relay::Relay::default());
        let link = Arc::new(Link::new(
            server.clone(),
            &config,
            tx,
            events,
            relay.clone(),
        ));
        registry.attach(&server, link.clone())?;
        let actor = actor::Actor::new(
            link.clone(),
            config,
            connect::ConnectContext::new(http, relay, auth),
            registry.clone(),
            rx,
        );
        let span = tracing::info_span!("supervisor", server = %server);
        let task = tokio::spawn(actor.run().instrument(span));
        Ok(Supervisor {
            link,
            registry,
            task: tokio::sync::Mutex::new(Some(task)),
        })
    }

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

    /// Calls tool `tool` (its name on this server) with the configured call timeout.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the call; rmcp sends `notifications/cancelled`.
    ///
    /// Fails with `ToolNotFound`, without contacting the server, when the server's registered
    /// tool set does not list `tool`.
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: serde_json::Value,
    ) -> Result<CallToolResult, CallError> {
        let arguments = to_object(arguments)?;
        let snapshot = self.registry.snapshot();
        let listed = snapshot
            .server(self.name())
            .map(|set| set.tools.iter().any(|t| &*t.raw_name == tool));
        if listed == Some(false) {
            return Err(CallError::ToolNotFound {
                name: tool.to_owned(),
            });
        }
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        self.link.call(params, &CallOptions::default()).await
    }

    /// Calls a tool with everything the request may carry (`params.name` is the tool's name on
    /// this server; `_meta` is sent as given, except the progress token, which is this crate's
    /// own: see [`CallOptions::progress`]). Unlike [`call_tool`](Self::call_tool) it does not
    /// check the registered tool set first: the server decides.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the call: the server is sent `notifications/cancelled`.
    pub async fn call(
        &self,
        params: CallToolRequestParams,
        options: CallOptions,
    ) -> Result<CallToolResult, CallError> {
        self.link.call(params, &options).await
    }

    /// Sends any request (`resources/read`, `prompts/get`, `completion/complete`,
    /// `logging/setLevel`, …) to the current generation, with the rules of a call: it waits for
    /// a ready generation up to `call_wait`, probes first after a long silence, waits out
    /// `Retry-After`, is sent once more to the next generation when the server provably did not
    /// run it, and its failures are judged like a call's (a suspect answer counts as a miss).
    /// A `tools/call` is passed to [`call`](Self::call), so `input_required` rounds are answered.
    ///
    /// The answer is whatever the server sent; a JSON-RPC error is [`CallError::Server`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the request: the server is sent `notifications/cancelled`.
    pub async fn request(
        &self,
        request: ClientRequest,
        options: CallOptions,
    ) -> Result<ServerResult, CallError> {
        self.link.request(request, &options).await
    }

    /// What the ready generation's server said about itself (`initialize` result, or for a
    /// 2026-07-28 server its `server/discover` answer): name, version, capabilities,
    /// instructions. `None` during an outage.
    pub fn server_info(&self) -> Option<ServerPeerInfo> {
        let live = self.link.live.borrow().clone()?;
        live.peer.peer_info().map(|info| (*info).clone())
    }

    /// Subscribes to updates of the resource `uri`, now and on every generation after this one
    /// (a 2025 server is sent `resources/subscribe` again after each reconnect; a 2026-07-28
    /// server gets the URI in its listen stream's filter). Updates reach
    /// [`HostHandlers::on_notification`](crate::host::HostHandlers::on_notification).
    ///
    /// With a ready 2025 generation the subscription is sent at once and its answer returned;
    /// when the server refuses it, the URI is not kept. Otherwise the URI is kept and sent when
    /// a generation is ready.
    ///
    /// # Cancel safety
    ///
    /// The URI joins the set before anything is awaited: dropped while `resources/subscribe`
    /// is in flight, the URI stays kept (every later generation is subscribed to it) whether or
    /// not this server saw the request. [`unsubscribe`](Self::unsubscribe) takes it back.
    pub async fn subscribe(&self, uri: &str) -> Result<(), CallError> {
        let added = self
            .link
            .relay
            .subscriptions
            .send_if_modified(|set| set.insert(uri.to_owned()));
        if !self.sessionful() {
            return Ok(());
        }
        #[allow(deprecated)]
        let request = ClientRequest::SubscribeRequest(SubscribeRequest::new(
            SubscribeRequestParams::new(uri),
        ));
        match self.request(request, CallOptions::default()).await {
            Ok(_) => Ok(()),
            Err(error) => {
                if added && matches!(error, CallError::Server(_)) {
                    self.link.relay.subscriptions.send_modify(|set| {
                        set.remove(uri);
                    });
                }
                Err(error)
            }
        }
    }

    /// Ends the subscription to `uri` (see [`subscribe`](Self::subscribe)); no later generation
    /// is subscribed to it. A ready 2025 generation is sent `resources/unsubscribe`.
    ///
    /// # Cancel safety
    ///
    /// The URI leaves the set before anything is awaited: dropped while `resources/unsubscribe`
    /// is in flight, no later generation is subscribed to it, and the current one may still
    /// send its updates until it ends.
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), CallError> {
        let removed = self
            .link
            .relay
            .subscriptions
            .send_if_modified(|set| set.remove(uri));
        if !removed || !self.sessionful() {
            return Ok(());
        }
        #[allow(deprecated)]
        let request = ClientRequest::UnsubscribeRequest(UnsubscribeRequest::new(
            UnsubscribeRequestParams::new(uri),
        ));
        self.request(request, CallOptions::default())
            .await
            .map(drop)
    }

    /// Whether the ready generation speaks an era with sessions (2025-11-25 and earlier), where
    /// subscriptions are requests of their own.
    fn sessionful(&self) -> bool {
        let live = self.link.live.borrow().clone();
        live.is_some_and(|live| !connect::era::is_modern(&live.protocol))
    }

    /// Whether the ready generation speaks the stateless era (2026-07-28 and later): no
    /// sessions, no `logging/setLevel`, a log level in each request's `_meta`.
    #[cfg_attr(not(feature = "proxy"), allow(dead_code))]
    pub(crate) fn stateless(&self) -> bool {
        let live = self.link.live.borrow().clone();
        live.is_some_and(|live| connect::era::is_modern(&live.protocol))
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
