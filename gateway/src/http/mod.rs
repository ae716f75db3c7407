//! The gateway: the proxy's host-facing core behind a Streamable HTTP front, for many hosts at
//! once (feature `serve`; `mcp-resilient serve`).
//!
//! Every host session gets what a stdio host of the proxy gets (transparent or aggregated
//! mode, calls held through an outage, the outage answer that says whether a call ran,
//! `list_changed` only when its list changed, resources, prompts, completions, logging,
//! progress and cancellation passed through, a bounded outbox), because it is served by the
//! same core: only the transport differs.
//!
//! - **Protocol.** rmcp's Streamable HTTP server speaks it: 2025-06-18 and 2025-11-25 hosts get
//!   `Mcp-Session-Id` sessions, the standalone `GET` stream, `DELETE` and resumption with
//!   `Last-Event-ID`; 2026-07-28 hosts are served without a session (`server/discover`,
//!   `subscriptions/listen`, the routing headers), whatever the upstreams speak.
//! - **Upstream sessions.** A server is `shared` by every host session (one supervised upstream;
//!   the default) or `per_host` ([`ServeOptions::per_host`]: one upstream session per host
//!   session, started with its `initialize`, closed with it). A server's request to the client
//!   (elicitation, sampling, roots) goes to the host whose call it serves, never to another: a
//!   `per_host` server's to its host; a shared server's to the one host calling it (when none
//!   or several are, it gets an error that says why).
//! - **Safe by default.** Loopback unless told otherwise; `Host` and `Origin` checked (DNS
//!   rebinding); bearer tokens from the environment or a file, compared in constant time, and
//!   JWT access tokens of an issuer checked against its JWKS ([`JwtOptions`]; 401 with
//!   `WWW-Authenticate` naming the protected resource metadata, served at
//!   `/.well-known/oauth-protected-resource/mcp`); per caller, the tools it sees and calls and
//!   its requests per second ([`Access`]); a listener off loopback without tokens refuses to start unless
//!   [`ServeOptions::allow_unauthenticated`]; a host's credentials never go upstream; every
//!   host bounded ([`FrontLimits`]: body size, requests in flight per session, sessions per
//!   token and in all, idle time), each bound passed answered with its status and affecting
//!   nobody else.
//! - **Operable.** `/healthz` and `/readyz`; the stop ([`Gateway::serve`]'s `stop`) drains
//!   ([`DrainOptions`]: `/readyz` 503 at once, new sessions refused, the sessions held here
//!   served until quiet or the limit, a request past the limit answered "may have run"), then
//!   writes the host sessions to the store and closes every session and upstream (children
//!   reaped).
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_resilient::ServerConfig;
//! use mcp_resilient_gateway::http::Gateway;
//! use tokio_util::sync::CancellationToken;
//!
//! let gateway = Gateway::transparent(ServerConfig::stdio("files", "my-mcp-server"))?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8808").await?;
//! gateway.serve(listener, CancellationToken::new()).await?;
//! # Ok(()) }
//! ```

mod access;
mod admit;
mod auth;
mod bounded;
mod drain;
mod front;
#[cfg(feature = "fuzzing")]
pub(crate) mod fuzz;
mod guard;
mod health;
mod hub;
mod identify;
mod jwt;
mod lost;
mod maker;
mod opening;
mod operate;
mod options;
mod own;
mod parts;
mod prm;
mod refusal;
mod reload;
mod reloader;
mod restore;
mod serve;
mod sessions;
mod settings;
mod status;

pub use access::{Access, AccessError};
pub use auth::{Tokens, TokensError};
pub use jwt::{JwtConfigError, JwtOptions, MAX_LEEWAY};
pub use options::{DrainOptions, FrontLimits, HostFront, ServeOptions};
pub use reload::{Reload, ReloadError, Reloaded};

use crate::Mode;
use mcp_resilient::ServerConfig;

/// Why the gateway could not start or serve.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The servers do not make a gateway: none, two of one name, or one whose configuration is
    /// invalid (the stdio proxy's checks, [`ProxyError`](crate::ProxyError)).
    #[error(transparent)]
    Config(Box<crate::ProxyError>),
    /// A server named to get one upstream session per host session
    /// ([`ServeOptions`]'s `per_host`) is not one of the servers served.
    #[error("per-host server '{0}' is not one of the servers served")]
    UnknownPerHost(String),
    /// The listener is not on loopback and no token is required.
    #[error(
        "{0} is not a loopback address and no token is required: anyone who can reach it could \
         use your servers; require tokens, or allow it unauthenticated explicitly"
    )]
    Unauthenticated(std::net::SocketAddr),
    /// The JWT settings cannot be used.
    #[error("the JWT settings cannot be used")]
    Jwt(#[source] JwtConfigError),
    /// A shared upstream's supervisor could not be started.
    #[error("could not start upstream '{server}'")]
    Start {
        /// The server's name.
        server: String,
        /// Why.
        #[source]
        source: mcp_resilient::StartError,
    },
    /// The listener failed.
    #[error("the listener failed")]
    Listen(#[source] std::io::Error),
}

/// A gateway ready to serve. See the [module documentation](self).
#[derive(Debug)]
pub struct Gateway {
    mode: Mode,
    configs: Vec<ServerConfig>,
    options: ServeOptions,
}

impl Gateway {
    /// One upstream, served transparently to every host.
    pub fn transparent(config: ServerConfig) -> Result<Self, ServeError> {
        Self::new(Mode::Transparent, vec![config])
    }

    /// Several upstreams, aggregated under public names.
    pub fn aggregated(configs: Vec<ServerConfig>) -> Result<Self, ServeError> {
        Self::new(Mode::Aggregated, configs)
    }

    fn new(mode: Mode, configs: Vec<ServerConfig>) -> Result<Self, ServeError> {
        // The same checks as the stdio proxy's (names unique, every configuration valid).
        match mode {
            Mode::Transparent => crate::Proxy::transparent(configs[0].clone()),
            Mode::Aggregated => crate::Proxy::aggregated(configs.clone()),
        }
        .map_err(|error| ServeError::Config(Box::new(error)))?;
        Ok(Self {
            mode,
            configs,
            options: ServeOptions::default(),
        })
    }

    /// Replaces the gateway's settings.
    pub fn options(mut self, options: ServeOptions) -> Self {
        self.options = options;
        self
    }

    /// Transparent or aggregated.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Whether the gateway may serve on `address`: off loopback only with tokens (static or
    /// JWT), or when unauthenticated access is allowed explicitly; and whether the JWT settings
    /// can be used. [`serve`](Self::serve) checks it too;
    /// check before binding to refuse without ever listening.
    pub fn check_address(&self, address: std::net::SocketAddr) -> Result<(), ServeError> {
        let options = &self.options;
        if let Some(jwt) = &options.jwt {
            jwt.check().map_err(ServeError::Jwt)?;
        }
        if address.ip().is_loopback()
            || !options.tokens.is_empty()
            || options.jwt.is_some()
            || options.allow_unauthenticated
        {
            return Ok(());
        }
        Err(ServeError::Unauthenticated(address))
    }
}
