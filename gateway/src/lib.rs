//! # mcp-resilient-gateway
//!
//! An MCP server for the host, with supervised upstreams behind it: what `mcp-resilient proxy`
//! (stdio, one host) and `mcp-resilient serve` (Streamable HTTP, many hosts; feature `serve`)
//! run. Built on the client library `mcp-resilient` through its public API: a [`Supervisor`] per
//! upstream, one [`ToolRegistry`] for their tools.
//!
//! A host (Claude Desktop, Claude Code, Cursor, VS Code, …) launches the proxy as a stdio server.
//! The proxy supervises its upstreams with the library and answers the host from them, so an
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
//! - a host that reads slowly or not at all does not grow the proxy: answers and list changes
//!   wait for it, log messages and progress past the upstreams' `limits.max_buffered_notifications` and
//!   `limits.max_buffered_notification_bytes` are dropped and counted
//!   (one warning at most every 10 s);
//! - when the host closes stdin (or a stop is asked), requests in flight get
//!   [`ProxyOptions::drain`], then every upstream is shut down (children reaped) before
//!   [`Proxy::serve`] returns.
//!
//! With one upstream the proxy is *transparent*: the host sees the upstream's raw tool names,
//! capabilities, server info and instructions. With several it *aggregates*: tools and prompts
//! get public names `mcp__<server>__<name>`, resources keep their URIs and are routed by the
//! server that listed them, and one upstream's outage never delays the others.
//!
//! The host side speaks both eras: the session era (`initialize`, revisions up to 2025-11-25)
//! and 2026-07-28 (`server/discover`, self-contained requests, `subscriptions/listen` for the
//! tool list's changes); the upstreams speak whatever the library negotiates with them, over
//! stdio, legacy SSE or Streamable HTTP. Whichever two meet, every answer is shaped for the
//! host's revision in one place (`revision.rs`).
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_resilient::ServerConfig;
//! use mcp_resilient_gateway::Proxy;
//!
//! let proxy = Proxy::transparent(ServerConfig::remote("docs", "https://mcp.example.com/mcp"))?;
//! proxy.serve_stdio().await?;
//! # Ok(()) }
//! ```

mod announce;
mod call;
mod calls;
mod capabilities;
mod forward;
mod front;
#[cfg(test)]
mod future_sizes;
mod handler;
mod host;
#[cfg(feature = "serve")]
pub mod http;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing {
    //! The own front built in memory, for the fuzz checks (`http/fuzz.rs`). Not a public API.
    pub use crate::http::fuzz::{Answer, End, OwnFront};
}
mod inline;
mod options;
mod outage;
mod outbox;
#[cfg(feature = "serve")]
mod reload;
mod renew;
mod requests;
mod revision;
mod session;
mod shared;
mod shares;
mod start;
pub mod state;
mod stdio;
pub mod telemetry;
mod traced;
mod upstream;
mod upstreams;
mod wire;

use std::{sync::Arc, time::Duration};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use mcp_resilient::{ServerConfig, config::ConfigError};
#[cfg(doc)]
use mcp_resilient::{Supervisor, ToolRegistry};

pub use handler::ProxyHandler;
pub use options::{Mode, ProxyOptions};

use shared::Shared;

/// Why a proxy could not be built or served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// A server's configuration is invalid.
    #[error("server '{server}' has an invalid configuration")]
    Config {
        /// The server's name.
        server: String,
        /// What is wrong with it.
        #[source]
        source: ConfigError,
    },
    /// No upstream server to serve.
    #[error("no upstream server to proxy")]
    NoUpstream,
    /// Two upstream servers have this name.
    #[error("two upstream servers are named '{0}'")]
    DuplicateName(String),
    /// The host never completed the `initialize` handshake.
    #[error("the host did not initialize")]
    Handshake(#[source] Box<rmcp::service::ServerInitializeError>),
    /// The threads that read stdin and write stdout could not be started.
    #[error("cannot start the stdio threads")]
    Stdio(#[source] std::io::Error),
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
            return Err(ProxyError::NoUpstream);
        }
        let mut names: Vec<&str> = configs.iter().map(|c| c.name()).collect();
        names.sort_unstable();
        if let Some(pair) = names.windows(2).find(|pair| pair[0] == pair[1]) {
            return Err(ProxyError::DuplicateName(pair[0].to_owned()));
        }
        // Refuse a bad configuration now, before the host is answered at all.
        for config in &configs {
            config
                .clone()
                .resolve()
                .map_err(|source| ProxyError::Config {
                    server: config.name().to_owned(),
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
    ///
    /// # Cancel safety
    ///
    /// As [`serve`](Self::serve).
    pub async fn serve_stdio(self) -> Result<(), ProxyError> {
        self.serve_stdio_until(CancellationToken::new()).await
    }

    /// Serves the host on this process's stdin and stdout until the host closes stdin or `stop`
    /// is cancelled. stdin and stdout are read and written on threads of their own that are
    /// never waited for, so a host that keeps stdin open (or stops reading stdout) cannot keep
    /// the process alive once this has returned: the caller may exit at once.
    ///
    /// # Cancel safety
    ///
    /// As [`serve`](Self::serve).
    pub async fn serve_stdio_until(self, stop: CancellationToken) -> Result<(), ProxyError> {
        let (stdin, stdout) = stdio::host_stdio().map_err(ProxyError::Stdio)?;
        self.serve(stdin, stdout, stop).await
    }

    /// Serves the host on `read`/`write` until the host closes `read` or `stop` is cancelled.
    /// The upstreams are started when the host sends `initialize`, and every one of them is shut
    /// down (its children reaped, its tasks ended) before this returns.
    ///
    /// Everything for the host goes through one bounded queue and one writer (see
    /// `max_buffered_notifications`); once the session ends, requests in flight get
    /// [`ProxyOptions::drain`] to be answered.
    ///
    /// # Cancel safety
    ///
    /// Not cancel-safe: dropping the future skips the orderly end. The upstreams' supervisors
    /// are dropped, which asks them to stop without waiting, so a stdio child may outlive the
    /// drop by its close's graces, and requests in flight are not answered. Cancel `stop` and
    /// await the future instead: it returns once everything is closed.
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
        let outbox = outbox::Outbox::new(outbox::NotificationBuffer::of(&self.configs));
        let ending = session::Ending::new(stop.clone(), self.options.drain);
        let link = Arc::new(host::HostLink::new(outbox.clone(), "pipe"));
        let shared = Arc::new(Shared::new(
            self.mode,
            self.configs,
            None,
            self.options,
            link,
        ));
        let service = session::Draining {
            handler: ProxyHandler::new(shared.clone()),
            ending: ending.clone(),
        };
        let wire = wire::HostWire::new(read, write, outbox.clone(), ending);
        // Boxed, as is the shutdown below: unboxed, the future of a caller's `async fn` that
        // awaits this one is too deep for rustc's default recursion limit.
        let served = Box::pin(rmcp::service::serve_server_with_ct(
            service,
            wire,
            stop.child_token(),
        ))
        .await;
        let outcome = match served {
            Ok(running) => {
                let quit = running.waiting().await;
                tracing::info!(?quit, "host session ended");
                Ok(())
            }
            // A stop before the host initialized is an ordinary end.
            Err(_) if stop.is_cancelled() => Ok(()),
            Err(error) => Err(ProxyError::Handshake(Box::new(error))),
        };
        Box::pin(shared.shutdown()).await;
        outbox.report_rest();
        outcome
    }
}
