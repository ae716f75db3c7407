//! The accept loop: owns the listener and every connection task (axum's `serve` would leave
//! connection tasks running after a kill, which a restart-on-the-same-port test cannot allow).
//! Each connection is served by [`wire::serve`]: HTTP/1.1 or h2c, or with TLS, after the
//! handshake in the connection's own task, what ALPN chose.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::pings::PingTap;
use super::state::ServerState;
use super::wire;
use crate::crash::CrashTap;
use tokio::net::TcpStream;
use tokio_rustls::TlsAcceptor;

/// How long a bind waits for a just-killed server (same process) to release its port.
const REBIND_DEADLINE: Duration = Duration::from_secs(2);
const REBIND_STEP: Duration = Duration::from_millis(10);

/// Binds 127.0.0.1:`port`. A fixed port that is still in use is retried until
/// [`REBIND_DEADLINE`]: `Faults::kill` is synchronous but the listener is dropped by the server
/// task a moment later.
pub(super) async fn bind(port: u16) -> io::Result<TcpListener> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let deadline = Instant::now() + REBIND_DEADLINE;
    loop {
        match TcpListener::bind(addr).await {
            Err(error)
                if port != 0
                    && error.kind() == io::ErrorKind::AddrInUse
                    && Instant::now() < deadline =>
            {
                tokio::time::sleep(REBIND_STEP).await;
            }
            result => return result,
        }
    }
}

/// Serves connections until the kill token is cancelled, then tears everything down; with
/// `tls`, https.
pub(super) async fn serve(
    listener: TcpListener,
    router: Router,
    server: Arc<ServerState>,
    tls: Option<TlsAcceptor>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = server.kill.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) if server.refusing() => drop(stream),
                Ok((stream, _)) => {
                    // Small JSON-RPC frames must not wait for Nagle's algorithm.
                    let _ = stream.set_nodelay(true);
                    let service = TowerToHyperService::new(router.clone());
                    let Some(tls) = &tls else {
                        let stream = PingTap::new(stream, server.wire.pings.clone());
                        let io = TokioIo::new(CrashTap::new(stream, server.shared.crash.clone()));
                        connections.spawn(wire::serve(server.wire.clone(), io, service));
                        continue;
                    };
                    connections.spawn(over_tls(tls.clone(), stream, server.clone(), service));
                }
                Err(error) => tracing::warn!(%error, "accept failed"),
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    connections.shutdown().await;
    server.legacy.shutdown().await;
    server.streamable.sessions.write().await.clear();
}

/// How long a client may take over its TLS handshake.
const TLS_HANDSHAKE: Duration = Duration::from_secs(10);

/// Serves one connection over TLS: the handshake (bounded), then what ALPN chose.
async fn over_tls(
    tls: TlsAcceptor,
    stream: TcpStream,
    server: Arc<ServerState>,
    service: TowerToHyperService<Router>,
) {
    let stream = match tokio::time::timeout(TLS_HANDSHAKE, tls.accept(stream)).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(error)) => return tracing::debug!(%error, "TLS handshake failed"),
        Err(_) => return tracing::debug!("TLS handshake timed out"),
    };
    server.wire.negotiated(stream.get_ref().1.alpn_protocol());
    let stream = PingTap::new(stream, server.wire.pings.clone());
    let io = TokioIo::new(CrashTap::new(stream, server.shared.crash.clone()));
    wire::serve(server.wire.clone(), io, service).await;
}
