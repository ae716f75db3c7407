//! Remote modes: legacy SSE, Streamable HTTP, or both on one port, plus the `/_mock/` controls.
//!
//! The files, from the bottom up: what the server reports ([`report`]), its whole state
//! ([`state`], which holds the legacy [`legacy::sessions`], the gate's [`inject`]ions and
//! [`status`] faults, and the [`oauth`] authority), the handle on it ([`faults`]), the gate in
//! front of the MCP routes ([`gate`]), the routes ([`legacy`], [`admin`], [`router`]), the
//! accept loop ([`accept`]) and each connection's protocol, HTTP/1.1 or h2c ([`wire`]). Nothing below imports what is above it.
//!
//! # Invariants
//!
//! 1. The server binds 127.0.0.1 only.
//! 2. One task owns the listener and every connection task; when the kill token is cancelled
//!    (`Faults::kill`, the in-process `crash` tool, `shutdown`) it drops the listener, aborts every
//!    connection and ends every session, so nothing is left running.

mod accept;
mod admin;
pub(crate) mod args;
pub(crate) mod faults;
mod gate;
mod inject;
pub(crate) mod legacy;
pub(crate) mod oauth;
pub(crate) mod options;
mod pings;
pub(crate) mod report;
mod router;
pub(crate) mod state;
pub(crate) mod status;
pub(crate) mod tls;
pub(crate) mod wire;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::crash::{CrashAction, CrashSwitch};
use crate::random::random_hex;
use crate::shared::Shared;
use faults::Faults;
use oauth::Authority;
use options::MockOptions;
use state::ServerState;

/// How often legacy SSE streams carry a keep-alive comment unless `sse_keep_alive` says.
const LEGACY_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// A running remote mock server. Dropping it kills it (like [`Faults::kill`]) without waiting;
/// [`MockServer::shutdown`] also waits until everything has ended.
pub struct MockServer {
    addr: SocketAddr,
    /// `http`, or `https` with [`MockOptions::tls`].
    scheme: &'static str,
    faults: Faults,
    /// The accept loop; it ends once the kill token is cancelled and everything is torn down.
    task: JoinHandle<()>,
}

impl MockServer {
    /// Binds 127.0.0.1:`opts.port` and starts serving. In-process, the `crash` tool acts like
    /// [`Faults::kill`] instead of exiting. Restarting on a port a killed server held waits (up to
    /// 2 s) for that server to let go of it.
    pub async fn start(opts: MockOptions) -> std::io::Result<MockServer> {
        Self::start_with(opts, false).await
    }

    /// Like `start`; with `exit_on_crash` the `crash` tool exits the process (binary mode).
    pub(crate) async fn start_with(
        opts: MockOptions,
        exit_on_crash: bool,
    ) -> std::io::Result<MockServer> {
        let kill = CancellationToken::new();
        let action = match exit_on_crash {
            true => CrashAction::Exit,
            false => CrashAction::Kill(kill.clone()),
        };
        let boot_id = opts.boot_id.clone().unwrap_or_else(|| random_hex(8));
        let shared = Arc::new(Shared::new(
            boot_id,
            opts.extra_tools,
            CrashSwitch::new(action),
        ));
        let mut manager = LocalSessionManager::default();
        manager.session_config.sse_retry = Some(opts.sse_retry);
        let manager = Arc::new(manager);
        let tls = match &opts.tls {
            Some(tls) => Some(tls.acceptor(opts.http1_only)?),
            None => None,
        };
        let listener = accept::bind(opts.port).await?;
        let addr = listener.local_addr()?;
        // The issuer and resource URLs name the bound port, so the authority comes after bind.
        let oauth = opts.oauth.clone().map(|oauth| {
            let base = format!("http://{addr}");
            Arc::new(Authority::new(oauth, base, &opts.mcp_path, &opts.sse_path))
        });
        let state = ServerState::new(
            shared,
            kill,
            manager,
            opts.stateless,
            oauth,
            opts.sse_keep_alive.unwrap_or(LEGACY_KEEP_ALIVE),
            wire::Wire::new(opts.http1_only, opts.h2_max_streams),
        );
        let state = Arc::new(state);
        let router = router::router(&opts, &state);
        let task = tokio::spawn(accept::serve(listener, router, state.clone(), tls.clone()));
        let scheme = match tls {
            Some(_) => "https",
            None => "http",
        };
        Ok(MockServer {
            addr,
            scheme,
            faults: Faults { state },
            task,
        })
    }

    /// The bound address (127.0.0.1:port).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port>` (`https` with [`MockOptions::tls`]): in OAuth mode, the
    /// issuer (and authorization server).
    pub fn base_url(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    /// `http://127.0.0.1:<port>/sse` (`https` with [`MockOptions::tls`]).
    pub fn sse_url(&self) -> String {
        format!("{}://{}/sse", self.scheme, self.addr)
    }

    /// `http://127.0.0.1:<port>/mcp` (`https` with [`MockOptions::tls`]).
    pub fn http_url(&self) -> String {
        format!("{}://{}/mcp", self.scheme, self.addr)
    }

    /// The fault controls.
    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// Stops accepting, ends every session and connection, and waits until nothing is left
    /// running. Also fine after [`Faults::kill`].
    ///
    /// # Cancel safety
    /// If this future is dropped, the teardown still completes in the server's own task.
    pub async fn shutdown(mut self) {
        self.faults.kill();
        if let Err(error) = (&mut self.task).await {
            tracing::warn!(%error, "mock server task failed");
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.faults.kill();
    }
}
