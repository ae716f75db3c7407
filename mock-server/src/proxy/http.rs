//! [`HttpFaultProxy`]: the handle and the task that owns the listener, every server connection
//! and (through a tracker) every upstream connection.

use std::convert::Infallible;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::body::Body;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::cut::StreamCut;
use super::fault::GatewayFault;
use super::forward::{self, TrackedExecutor, Upstream};
use super::gateway::Gateway;

/// An HTTP/1.1 reverse proxy on 127.0.0.1 that streams every exchange to a loopback upstream
/// and back, except the POSTs its [`GatewayFault`] answers itself and the one response stream
/// a [`StreamCut`] cuts.
///
/// Dropping it stops it without waiting; [`HttpFaultProxy::shutdown`] also waits.
pub struct HttpFaultProxy {
    addr: SocketAddr,
    gateway: Arc<Gateway>,
    /// Cancelled by `shutdown` and `Drop`; the owner task then tears everything down.
    kill: CancellationToken,
    /// The owner task; it ends once `kill` is cancelled and every connection has ended.
    task: JoinHandle<()>,
}

impl HttpFaultProxy {
    /// Binds 127.0.0.1 on an ephemeral port and forwards to `upstream`, a base URL such as
    /// `http://127.0.0.1:PORT` (a path in it is prepended to every request path).
    ///
    /// Fails with [`io::ErrorKind::InvalidInput`] unless `upstream` is `http://` on a loopback
    /// host.
    pub async fn start(upstream: &str, fault: Option<GatewayFault>) -> io::Result<HttpFaultProxy> {
        Self::start_on(upstream, 0, fault).await
    }

    /// Like [`HttpFaultProxy::start`] on 127.0.0.1:`port` (0 picks a free one).
    pub async fn start_on(
        upstream: &str,
        port: u16,
        fault: Option<GatewayFault>,
    ) -> io::Result<HttpFaultProxy> {
        let upstream = Upstream::parse(upstream)?;
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        let addr = listener.local_addr()?;
        let kill = CancellationToken::new();
        let executor = TrackedExecutor {
            tracker: TaskTracker::new(),
            stop: kill.clone(),
        };
        let gateway = Arc::new(Gateway::new(
            upstream,
            forward::client(executor.clone()),
            fault,
        ));
        let owner = Owner {
            listener,
            gateway: gateway.clone(),
            connections: JoinSet::new(),
            upstream_tasks: executor.tracker,
        };
        let task = tokio::spawn(owner.run(kill.clone()));
        Ok(HttpFaultProxy {
            addr,
            gateway,
            kill,
            task,
        })
    }

    /// The bound address (127.0.0.1:port).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port><path>`, e.g. `url("/mcp")`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Replaces the fault (`None` forwards everything); its pattern starts over. A POST whose
    /// body is being read while this runs is judged by the new fault.
    pub fn set_fault(&self, fault: Option<GatewayFault>) {
        self.gateway.set_fault(fault);
    }

    /// Arms `cut` for the responses of the next POSTs that match it (see [`StreamCut`]),
    /// replacing a cut still armed. Requests that do not match pass untouched.
    pub fn cut_next(&self, cut: StreamCut) {
        self.gateway.arm_cut(cut);
    }

    /// Response streams cut so far.
    pub fn cuts(&self) -> u64 {
        self.gateway.cuts.load(Ordering::SeqCst)
    }

    /// Requests the proxy answered itself so far.
    pub fn injected(&self) -> u64 {
        self.gateway.injected.load(Ordering::SeqCst)
    }

    /// Requests sent to the upstream so far, whatever it answered (unreachable included).
    pub fn forwarded(&self) -> u64 {
        self.gateway.forwarded.load(Ordering::SeqCst)
    }

    /// Stops accepting, ends every connection (open SSE streams included), upstream ones too,
    /// and waits until no task is left.
    ///
    /// # Cancel safety
    /// If this future is dropped, the teardown still completes in the owner task.
    pub async fn shutdown(mut self) {
        self.kill.cancel();
        if let Err(error) = (&mut self.task).await {
            tracing::warn!(%error, "http proxy task failed");
        }
    }
}

impl Drop for HttpFaultProxy {
    fn drop(&mut self) {
        self.kill.cancel();
    }
}

/// The task that owns the listener, the server connections and the upstream connections.
struct Owner {
    listener: TcpListener,
    gateway: Arc<Gateway>,
    connections: JoinSet<()>,
    /// Upstream connection tasks, spawned by the client; they end when `kill` fires.
    upstream_tasks: TaskTracker,
}

enum Event {
    Killed,
    Accepted(io::Result<TcpStream>),
    Reaped,
}

impl Owner {
    async fn run(mut self, kill: CancellationToken) {
        loop {
            let event = tokio::select! {
                () = kill.cancelled() => Event::Killed,
                accepted = self.listener.accept() => Event::Accepted(accepted.map(|(stream, _)| stream)),
                Some(_) = self.connections.join_next(), if !self.connections.is_empty() => Event::Reaped,
            };
            match event {
                Event::Killed => break,
                Event::Accepted(Ok(stream)) => self.admit(stream),
                Event::Accepted(Err(error)) => tracing::warn!(%error, "http proxy accept failed"),
                Event::Reaped => {}
            }
        }
        drop(self.listener);
        self.connections.shutdown().await;
        // `kill` is also the executor's stop token, so these are ending already.
        self.upstream_tasks.close();
        self.upstream_tasks.wait().await;
    }

    fn admit(&mut self, stream: TcpStream) {
        let _ = stream.set_nodelay(true);
        let gateway = self.gateway.clone();
        let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
            let gateway = gateway.clone();
            async move { Ok::<_, Infallible>(gateway.handle(request.map(Body::new)).await) }
        });
        self.connections.spawn(async move {
            let io = TokioIo::new(stream);
            if let Err(error) = http1::Builder::new().serve_connection(io, service).await {
                tracing::debug!(%error, "proxied connection ended with an error");
            }
        });
    }
}
