//! An MCP server for the host, with supervised upstreams behind it: what `mcp-resilient proxy`
//! runs.
//!
//! A host (Claude Desktop, Claude Code, Cursor, VS Code, …) launches the proxy as a stdio server.
//! The proxy supervises its upstreams with this crate and answers the host from them, so an
//! upstream that dies, hangs or loses its session never ends the host's session:
//!
//! - `initialize` is answered once the upstreams are ready, or after the startup wait with what
//!   the proxy knows; `notifications/tools/list_changed` follows when their tools arrive;
//! - `tools/list` answers from the [`ToolRegistry`]: the last good set during an outage;
//! - a call during an outage waits for the next generation (`call_wait`, 10 s unless a server
//!   sets its own); after that it returns a tool result with `isError: true` and one plain
//!   paragraph: which server, what happened, whether the call was sent, when the next attempt is;
//! - the host hears `tools/list_changed` only when the tools it would list really changed;
//! - resources (subscriptions kept across generations), prompts, completions, logging, progress
//!   and cancellation pass through; the upstream's own requests (elicitation, sampling, roots)
//!   go to the host when the host declared it answers them;
//! - an upstream that gave up (its outage budget spent) is started again after its
//!   `reconnect.max_delay`, for as long as the host stays;
//! - when the host closes stdin, every upstream is shut down (children reaped) before
//!   [`Proxy::serve`] returns.
//!
//! With one upstream the proxy is *transparent*: the host sees the upstream's raw tool names,
//! capabilities, server info and instructions. With several it *aggregates*: tools and prompts
//! get public names `mcp__<server>__<name>`, resources keep their URIs and are routed by the
//! server that listed them, and one upstream's outage never delays the others.
//!
//! The host side speaks the session era (`initialize`, protocol revisions up to 2025-11-25),
//! which every host in use speaks; the upstreams speak whatever the library negotiates with
//! them (2026-07-28 included), over stdio, legacy SSE or Streamable HTTP.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_resilient::{ServerConfig, proxy::Proxy};
//!
//! let proxy = Proxy::transparent(ServerConfig::remote("docs", "https://mcp.example.com/mcp"))?;
//! proxy.serve_stdio().await?;
//! # Ok(()) }
//! ```

mod announce;
mod forward;
mod handler;
mod host;
mod outage;
mod upstream;

use std::{sync::Arc, time::Duration};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use crate::{ServerConfig, ToolRegistry, config::ConfigError};

pub use handler::ProxyHandler;

/// How long `initialize` waits for the upstreams before answering with what the proxy knows.
const DEFAULT_STARTUP_WAIT: Duration = Duration::from_secs(10);
/// How long a call made during an outage waits for the next generation, unless the server's
/// configuration sets its own `call_wait`.
const DEFAULT_CALL_WAIT: Duration = Duration::from_secs(10);

/// Whether the host sees one upstream as itself or several under public names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One upstream; raw names, the upstream's own capabilities and server info.
    Transparent,
    /// Several upstreams; tools and prompts as `mcp__<server>__<name>`.
    Aggregated,
}

/// Why a proxy could not be built or served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// A server's configuration is invalid.
    #[error("server '{server}': {source}")]
    Config {
        /// The server's name.
        server: String,
        /// What is wrong with it.
        #[source]
        source: ConfigError,
    },
    /// No upstream to serve, or two with the same name.
    #[error("{0}")]
    Upstreams(String),
    /// The host never completed the `initialize` handshake.
    #[error("the host did not initialize: {0}")]
    Handshake(String),
}

/// The proxy's own settings (the upstreams' supervision comes from their [`ServerConfig`]s).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProxyOptions {
    /// How long `initialize` waits for the upstreams to be ready before it answers with what the
    /// proxy knows (the tools then arrive with `notifications/tools/list_changed`).
    ///
    /// # Default
    /// 10 s
    pub startup_wait: Duration,
    /// The `call_wait` given to every upstream whose configuration does not set one: how long a
    /// call made during an outage waits for the next generation before it is answered with the
    /// plain-language tool error.
    ///
    /// # Default
    /// 10 s
    pub call_wait: Duration,
}

impl Default for ProxyOptions {
    fn default() -> Self {
        Self {
            startup_wait: DEFAULT_STARTUP_WAIT,
            call_wait: DEFAULT_CALL_WAIT,
        }
    }
}

/// A proxy ready to serve one host. See the [module documentation](self).
#[derive(Debug)]
pub struct Proxy {
    mode: Mode,
    configs: Vec<ServerConfig>,
    options: ProxyOptions,
}

impl Proxy {
    /// One upstream, served transparently.
    pub fn transparent(config: ServerConfig) -> Result<Self, ProxyError> {
        Self::new(Mode::Transparent, vec![config])
    }

    /// Several upstreams, aggregated under public names (one is allowed: its names are then
    /// public names too).
    pub fn aggregated(configs: Vec<ServerConfig>) -> Result<Self, ProxyError> {
        Self::new(Mode::Aggregated, configs)
    }

    fn new(mode: Mode, configs: Vec<ServerConfig>) -> Result<Self, ProxyError> {
        if configs.is_empty() {
            return Err(ProxyError::Upstreams("no upstream server to proxy".into()));
        }
        let mut names: Vec<&str> = configs.iter().map(|c| c.name.as_str()).collect();
        names.sort_unstable();
        if let Some(pair) = names.windows(2).find(|pair| pair[0] == pair[1]) {
            return Err(ProxyError::Upstreams(format!(
                "two upstream servers are named '{}'",
                pair[0]
            )));
        }
        // Refuse a bad configuration now, before the host is answered at all.
        for config in &configs {
            config
                .clone()
                .resolve()
                .map_err(|source| ProxyError::Config {
                    server: config.name.clone(),
                    source,
                })?;
        }
        Ok(Self {
            mode,
            configs,
            options: ProxyOptions::default(),
        })
    }

    /// Replaces the proxy's own settings.
    pub fn options(mut self, options: ProxyOptions) -> Self {
        self.options = options;
        self
    }

    /// Sets [`ProxyOptions::startup_wait`].
    pub fn startup_wait(mut self, wait: Duration) -> Self {
        self.options.startup_wait = wait;
        self
    }

    /// Sets [`ProxyOptions::call_wait`].
    pub fn call_wait(mut self, wait: Duration) -> Self {
        self.options.call_wait = wait;
        self
    }

    /// Transparent or aggregated.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Serves the host on this process's stdin and stdout until the host closes stdin.
    pub async fn serve_stdio(self) -> Result<(), ProxyError> {
        let (stdin, stdout) = rmcp::transport::stdio();
        self.serve(stdin, stdout, CancellationToken::new()).await
    }

    /// Serves the host on `read`/`write` until the host closes `read` or `stop` is cancelled.
    /// The upstreams are started when the host sends `initialize`, and every one of them is shut
    /// down (its children reaped, its tasks ended) before this returns.
    pub async fn serve<R, W>(
        self,
        read: R,
        write: W,
        stop: CancellationToken,
    ) -> Result<(), ProxyError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let shared = Arc::new(handler::Shared::new(
            self.mode,
            self.configs,
            self.options,
            ToolRegistry::new(),
        ));
        let handler = ProxyHandler::new(shared.clone());
        let served =
            rmcp::service::serve_server_with_ct(handler, (read, write), stop.child_token()).await;
        let outcome = match served {
            Ok(running) => {
                let quit = running.waiting().await;
                tracing::info!(?quit, "host session ended");
                Ok(())
            }
            Err(error) => Err(ProxyError::Handshake(error.to_string())),
        };
        shared.shutdown().await;
        outcome
    }
}
