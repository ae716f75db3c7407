//! Building a supervisor: the configuration resolved, the authorizer and the call path built,
//! the server attached to the registry, and the actor spawned.

use std::sync::Arc;

use tokio::sync::mpsc;
use tracing::Instrument;

use super::{Inner, Supervisor};
use crate::{StartError, ToolRegistry, config::ServerConfig};
use crate::{
    supervisor::actor,
    supervisor::board::Board,
    supervisor::dispatch::CallPath,
    supervisor::mailbox::Depth,
    supervisor::session::{connect, relay},
    transport::client::default_http_client,
};

/// Builds a [`Supervisor`]: [`Supervisor::builder`], then [`spawn`](Self::spawn).
#[derive(Debug)]
#[must_use = "a builder does nothing until spawn()"]
pub struct SupervisorBuilder {
    config: ServerConfig,
    registry: Option<ToolRegistry>,
    http: Option<reqwest::Client>,
}

impl Supervisor {
    /// A builder for a supervisor of `config`'s server.
    pub fn builder(config: ServerConfig) -> SupervisorBuilder {
        SupervisorBuilder {
            config,
            registry: None,
            http: None,
        }
    }

    /// Spawns a supervisor of `config`'s server that publishes into `registry`: the short form
    /// of `Supervisor::builder(config).registry(registry).spawn()`.
    pub fn spawn(config: ServerConfig, registry: &ToolRegistry) -> Result<Supervisor, StartError> {
        Supervisor::builder(config).registry(registry).spawn()
    }
}

impl SupervisorBuilder {
    /// The registry the server's tools are published into, shared with the host's other
    /// servers.
    ///
    /// # Default
    /// a registry of its own, reachable through [`Supervisor::registry`]
    pub fn registry(mut self, registry: &ToolRegistry) -> Self {
        self.registry = Some(registry.clone());
        self
    }

    /// The `reqwest::Client` for remote transports (share one between servers to pool
    /// connections). Give it a connect timeout and no overall timeout (SSE streams live as long
    /// as their session), an idle-connection timeout below the servers' keep-alive (a request
    /// sent on a connection the server is closing is reset and may have run; uvicorn and Node
    /// close theirs after 5 s), and a redirect policy that never follows another origin: a 307 or 308
    /// carries the body and every configured header (an API key in `X-Api-Key`, say), which
    /// must never leave for a host the configuration did not name.
    ///
    /// # Default
    /// one process-wide client: rustls, a 10 s connect timeout, no overall timeout, idle
    /// connections closed after 4 s, at most 5 redirects and only within the origin
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// Validates the configuration, registers the server and spawns its supervisor task on the
    /// current Tokio runtime. Returns at once, in state `connecting`; follow it with
    /// [`Supervisor::watch`] or [`Supervisor::wait_ready`].
    pub fn spawn(self) -> Result<Supervisor, StartError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| StartError::NoRuntime)?;
        let http = match self.http {
            Some(http) => http,
            None => default_http_client()
                .map_err(StartError::HttpClient)?
                .clone(),
        };
        let registry = self.registry.unwrap_or_default();
        let config = Arc::new(self.config.resolve()?);
        let auth = match &config.transport {
            crate::config::TransportConfig::Remote(remote) => {
                crate::auth::Authorizer::new(&config.name, &remote.url, &remote.auth)
                    .map_err(StartError::Auth)?
            }
            crate::config::TransportConfig::Stdio(_) => None,
        };
        let server: Arc<str> = Arc::from(config.name.as_str());
        let (tx, rx) = mpsc::unbounded_channel();
        let relay = Arc::new(relay::Relay::default());
        let board = Arc::new(Board::new(server.clone()));
        let calls = Arc::new(CallPath::new(
            server.clone(),
            &config,
            board.clone(),
            relay.clone(),
        ));
        registry.attach(&server, calls.clone())?;
        let depth = Arc::new(Depth::default());
        let wiring = actor::Wiring {
            server: server.clone(),
            board: board.clone(),
            tx: tx.clone(),
            relay: relay.clone(),
            depth: depth.clone(),
        };
        let actor = actor::Actor::new(
            wiring,
            config,
            connect::ConnectContext::new(http, relay.clone(), auth),
            registry.clone(),
            rx,
        );
        let span = tracing::info_span!("supervisor", server = %server);
        runtime.spawn(actor.run().instrument(span));
        Ok(Supervisor {
            inner: Arc::new(Inner {
                server,
                board,
                tx,
                relay,
                calls,
                registry,
                depth,
            }),
        })
    }
}
