//! Remote modes: legacy SSE, Streamable HTTP, or both on one port, plus the `/_mock/` controls.
//!
//! # Invariants
//!
//! 1. The server binds 127.0.0.1 only.
//! 2. One task owns the listener and every connection task; when the kill token is cancelled
//!    (`Faults::kill`, the in-process `crash` tool, `shutdown`) it drops the listener, aborts every
//!    connection and ends every session, so nothing is left running.

mod accept;
mod admin;
pub(crate) mod faults;
mod gate;
mod inject;
pub(crate) mod legacy;
pub(crate) mod oauth;
pub(crate) mod status;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::handler::Handler;
use axum::http::StatusCode;
use axum::routing::{any, get, post};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::crash::{CrashAction, CrashSwitch};
use crate::handler::MockHandler;
use crate::shared::Shared;
use faults::{FaultState, Faults};
use oauth::{Authority, OAuthOptions};

/// Largest MCP request body the gate reads into memory (to match a fault, or to hold it while
/// hung); a larger one is answered 400.
const BODY_LIMIT: usize = 16 * 1024 * 1024;

/// Which MCP transports a remote mock server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MockTransport {
    /// Legacy HTTP+SSE (2024-11-05): `GET /sse` + `POST /message?sessionId=…`.
    Sse,
    /// Streamable HTTP at `/mcp`.
    Http,
    /// Both route sets on one port.
    Both,
}

/// How to start an in-process [`MockServer`].
#[derive(Debug, Clone)]
pub struct MockOptions {
    /// # Default
    /// [`MockTransport::Both`].
    pub transport: MockTransport,
    /// Port on 127.0.0.1; 0 picks a free one.
    ///
    /// # Default
    /// 0.
    pub port: u16,
    /// Identity reported by `whoami` and `/_mock/state`.
    ///
    /// # Default
    /// `None`: 8 random hex digits.
    pub boot_id: Option<String>,
    /// Number of extra echo-like tools `extra_0` … `extra_{N-1}`.
    ///
    /// # Default
    /// 0.
    pub extra_tools: usize,
    /// The SSE `retry:` hint of Streamable HTTP streams.
    ///
    /// # Default
    /// 100 ms.
    pub sse_retry: Duration,
    /// Where the legacy SSE stream is opened (`GET`); its messages go to `/message`.
    ///
    /// # Default
    /// `"/sse"`.
    pub sse_path: String,
    /// Where Streamable HTTP is served. Giving both transports' paths the same value across a
    /// restart models a server redeployed from legacy SSE to Streamable HTTP at one URL.
    ///
    /// # Default
    /// `"/mcp"`.
    pub mcp_path: String,
    /// Serve Streamable HTTP without sessions (rmcp's `legacy_session_mode: false`); can be
    /// switched later with [`Faults::set_stateless`].
    ///
    /// 2026-07-28 requests are always served without a session, so this only changes what
    /// initialize-era clients get: `initialize` is answered without an `Mcp-Session-Id`, every
    /// request is served on its own by a fresh handler (the version comes from its
    /// `MCP-Protocol-Version` header, the client's capabilities are unknown, so `confirm`
    /// answers a tool error and no `list_changed` reaches it), and `GET`/`DELETE /mcp` answer
    /// 405 (there is no standalone stream). Legacy SSE keeps its sessions.
    ///
    /// # Default
    /// `false`.
    pub stateless: bool,
    /// OAuth mode: every MCP route (both transports) needs `Authorization: Bearer <token>`,
    /// and the server is its own OAuth 2.1 authorization server on the same port (see the crate
    /// docs, "OAuth mode").
    ///
    /// # Default
    /// `None`: no authorization.
    pub oauth: Option<OAuthOptions>,
    /// How often every open stream carries an SSE keep-alive comment (bytes, never a message):
    /// legacy SSE streams and Streamable HTTP's.
    ///
    /// # Default
    /// `None`: every 15 s on legacy SSE streams, never on Streamable HTTP's.
    pub sse_keep_alive: Option<Duration>,
}

impl Default for MockOptions {
    fn default() -> Self {
        Self {
            transport: MockTransport::Both,
            port: 0,
            boot_id: None,
            extra_tools: 0,
            sse_retry: Duration::from_millis(100),
            sse_path: "/sse".to_owned(),
            mcp_path: "/mcp".to_owned(),
            stateless: false,
            oauth: None,
            sse_keep_alive: None,
        }
    }
}

/// A running remote mock server. Dropping it kills it (like [`Faults::kill`]) without waiting;
/// [`MockServer::shutdown`] also waits until everything has ended.
pub struct MockServer {
    addr: SocketAddr,
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
        let boot_id = opts.boot_id.clone().unwrap_or_else(|| crate::random_hex(8));
        let shared = Arc::new(Shared::new(
            boot_id,
            opts.extra_tools,
            CrashSwitch::new(action),
        ));
        let mut manager = LocalSessionManager::default();
        manager.session_config.sse_retry = Some(opts.sse_retry);
        let manager = Arc::new(manager);
        let listener = accept::bind(opts.port).await?;
        let addr = listener.local_addr()?;
        // The issuer and resource URLs name the bound port, so the authority comes after bind.
        let oauth = opts.oauth.clone().map(|oauth| {
            let base = format!("http://{addr}");
            Arc::new(Authority::new(oauth, base, &opts.mcp_path, &opts.sse_path))
        });
        let state = FaultState::new(
            shared,
            kill,
            manager,
            opts.stateless,
            oauth,
            opts.sse_keep_alive.unwrap_or(LEGACY_KEEP_ALIVE),
        );
        let state = Arc::new(state);
        let router = router(&opts, &state);
        let task = tokio::spawn(accept::serve(listener, router, state.clone()));
        Ok(MockServer {
            addr,
            faults: Faults { state },
            task,
        })
    }

    /// The bound address (127.0.0.1:port).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port>`: in OAuth mode, the issuer (and authorization server).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:<port>/sse`.
    pub fn sse_url(&self) -> String {
        format!("http://{}/sse", self.addr)
    }

    /// `http://127.0.0.1:<port>/mcp`.
    pub fn http_url(&self) -> String {
        format!("http://{}/mcp", self.addr)
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

/// How often legacy SSE streams carry a keep-alive comment unless `sse_keep_alive` says.
const LEGACY_KEEP_ALIVE: Duration = Duration::from_secs(15);

type Service = StreamableHttpService<MockHandler, LocalSessionManager>;

/// The two flavours of Streamable HTTP; the stateless switch picks one per request.
struct Streamable {
    sessions: Service,
    stateless: Service,
}

type Dispatch = (Arc<FaultState>, Arc<Streamable>);

fn router(opts: &MockOptions, state: &Arc<FaultState>) -> Router {
    let legacy = matches!(opts.transport, MockTransport::Sse | MockTransport::Both);
    let streamable = matches!(opts.transport, MockTransport::Http | MockTransport::Both);
    let mut mcp = Router::new();
    if legacy {
        mcp = mcp
            .route(&opts.sse_path, get(legacy::open_stream))
            .route("/message", post(legacy::post_message));
    }
    if streamable {
        let service = |stateless: bool| {
            let shared = state.shared.clone();
            let config = StreamableHttpServerConfig::default()
                .with_sse_keep_alive(opts.sse_keep_alive)
                .with_sse_retry(Some(opts.sse_retry))
                .with_legacy_session_mode(!stateless)
                .with_cancellation_token(state.kill.child_token());
            StreamableHttpService::new(
                move || Ok(MockHandler::new(shared.clone())),
                state.streamable.clone(),
                config,
            )
        };
        let services = Arc::new(Streamable {
            sessions: service(false),
            stateless: service(true),
        });
        let dispatch = |State((state, services)): State<Dispatch>, request: Request| async move {
            match state.stateless() {
                true => services.stateless.handle(request).await,
                false => services.sessions.handle(request).await,
            }
        };
        let dispatch = dispatch.with_state((state.clone(), services));
        mcp = mcp.nest_service(&opts.mcp_path, dispatch);
    } else if opts.mcp_path != opts.sse_path {
        mcp = mcp.route(
            &opts.mcp_path,
            any(|| async { StatusCode::METHOD_NOT_ALLOWED }),
        );
    }
    let mut router = mcp
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            gate::gate,
        ))
        .merge(admin::routes());
    if let Some(authority) = &state.oauth {
        router = router.merge(oauth::routes(authority.clone()));
    }
    router.with_state(state.clone())
}
