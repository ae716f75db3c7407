//! Starting a supervisor: the configuration resolved, the authorizer and the call path built,
//! the server attached to the registry, and the actor spawned; and the redirect policy a
//! caller's own HTTP client should follow.

use std::sync::Arc;

use tokio::sync::{broadcast, mpsc};
use tracing::Instrument;

use super::{
    Supervisor, actor, connect,
    http_client::{default_http_client, same_origin_redirects},
    link::Link,
    relay,
};
use crate::{StartError, ToolRegistry, config::ServerConfig};

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
}
