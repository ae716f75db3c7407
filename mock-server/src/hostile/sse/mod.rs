//! A hostile legacy SSE server (spec 2024-11-05).
//!
//! Hand-written on axum, like the mock's real legacy transport: `GET /sse` opens a session
//! whose first event names `/message?sessionId=<id>`; each `POST` there is answered `202` and
//! its reply travels on the stream. It answers `initialize`, `ping`, `tools/list` (`echo` and
//! `trigger`) and `tools/call` like a real server. Once triggered ([`Trigger`]), a session's
//! stream carries its [`SseHostility`].
//!
//! Binary: `mcp-mock-server --transport sse --hostile invalid-utf8|newline-flood|endless-line|
//! malformed-json|event-flood [--hostile-bytes N] [--hostile-trigger list|call]`.
//!
//! # Invariants
//!
//! 1. The server binds 127.0.0.1 only.
//! 2. Every burst is bounded: at most [`HostileSseOptions::bytes`] bytes, then it stops by
//!    itself (the flood and the endless line end their stream).
//! 3. [`HostileSseServer::shutdown`] (and `Drop`) ends every stream and connection: nothing
//!    is left running.

mod options;
mod session;

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::{get, post};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

pub(crate) use options::SseArgs;
pub use options::{HostileSseOptions, SseHostility, Trigger};
use session::Sessions;

use crate::binary::{print_listening, wait_for_signal};

/// A running hostile server. Dropping it stops it without waiting; [`Self::shutdown`] waits.
pub struct HostileSseServer {
    addr: SocketAddr,
    sessions: Arc<Sessions>,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl HostileSseServer {
    /// Binds 127.0.0.1:`opts.port` and starts serving.
    pub async fn start(opts: HostileSseOptions) -> io::Result<HostileSseServer> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, opts.port)).await?;
        let addr = listener.local_addr()?;
        let stop = CancellationToken::new();
        let sessions = Arc::new(Sessions::new(opts, stop.clone()));
        let router = Router::new()
            .route("/sse", get(session::open_stream))
            .route("/message", post(session::post_message))
            .with_state(sessions.clone());
        let task = tokio::spawn(serve(listener, router, stop.clone()));
        Ok(HostileSseServer {
            addr,
            sessions,
            stop,
            task,
        })
    }

    /// The bound address (127.0.0.1:port).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port>/sse`.
    pub fn sse_url(&self) -> String {
        format!("http://{}/sse", self.addr)
    }

    /// Turns every open session hostile; returns how many there were.
    pub fn trigger(&self) -> usize {
        self.sessions.trigger_all()
    }

    /// When the last burst began: the moment its first hostile chunk (for
    /// [`SseHostility::InvalidUtf8`], the bad byte) was handed to the connection.
    pub fn burst_started(&self) -> Option<Instant> {
        self.sessions.burst_started()
    }

    /// Hostile bytes handed to connections so far, all sessions together.
    pub fn hostile_bytes(&self) -> u64 {
        self.sessions.hostile_bytes()
    }

    /// Ends every stream and connection and waits (at most 5 s) for the server task.
    pub async fn shutdown(mut self) {
        self.stop.cancel();
        if tokio::time::timeout(Duration::from_secs(5), &mut self.task)
            .await
            .is_err()
        {
            self.task.abort();
        }
    }
}

impl Drop for HostileSseServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Serves connections until `stop`; dropping the set aborts every connection task.
async fn serve(listener: TcpListener, router: Router, stop: CancellationToken) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    let service = TowerToHyperService::new(router.clone());
                    let io = TokioIo::new(stream);
                    connections.spawn(async move {
                        let _ = http1::Builder::new().serve_connection(io, service).await;
                    });
                }
                Err(error) => tracing::debug!(%error, "accept failed"),
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// The binary's hostile SSE mode: serves `opts` until SIGINT or SIGTERM, after printing the
/// `LISTENING` line.
pub(crate) async fn run(opts: HostileSseOptions) -> std::process::ExitCode {
    let port = opts.port;
    let server = match HostileSseServer::start(opts).await {
        Ok(server) => server,
        Err(error) => {
            eprintln!("mcp-mock-server: cannot listen on port {port}: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    print_listening(server.addr());
    wait_for_signal().await;
    server.shutdown().await;
    std::process::ExitCode::SUCCESS
}
