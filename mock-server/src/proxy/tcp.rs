//! [`TcpProxy`]: the handle and the task that owns the listener and every connection.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

use super::tcp_conn::{self, Gate, ProxyMode};

/// A TCP forwarder on 127.0.0.1 that simulates network partitions (see [`ProxyMode`]).
///
/// Dropping it stops it without waiting; [`TcpProxy::shutdown`] also waits.
pub struct TcpProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    /// Cancelled by `shutdown` and `Drop`; the owner task then tears everything down.
    kill: CancellationToken,
    /// The owner task; it ends once `kill` is cancelled and everything is torn down.
    task: JoinHandle<()>,
}

/// What the handle and the owner task share.
struct Shared {
    /// Changed only by `set_mode`; read by every connection for every chunk.
    gate: watch::Sender<Gate>,
    /// Cancelled (and replaced) by `reset_all`; each connection holds the one current at accept.
    reset: Mutex<CancellationToken>,
    /// Open connections; changed only by [`OpenGuard`]s.
    open: watch::Sender<usize>,
    /// Connections accepted so far, refused ones included; changed only by the owner task.
    accepted: AtomicU64,
}

/// Counts one connection task while it lives (an aborted task drops it too).
struct OpenGuard(watch::Sender<usize>);

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.send_modify(|open| *open = open.saturating_sub(1));
    }
}

impl TcpProxy {
    /// Binds 127.0.0.1 on an ephemeral port and forwards to `upstream`, in [`ProxyMode::Pass`].
    ///
    /// Fails with [`io::ErrorKind::InvalidInput`] if `upstream` is not a loopback address.
    pub async fn start(upstream: SocketAddr) -> io::Result<TcpProxy> {
        Self::start_on(upstream, 0).await
    }

    /// Like [`TcpProxy::start`] on 127.0.0.1:`port` (0 picks a free one).
    pub async fn start_on(upstream: SocketAddr, port: u16) -> io::Result<TcpProxy> {
        if !upstream.ip().is_loopback() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("upstream {upstream} is not a loopback address"),
            ));
        }
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        let addr = listener.local_addr()?;
        let kill = CancellationToken::new();
        let shared = Arc::new(Shared {
            gate: watch::Sender::new(Gate {
                mode: ProxyMode::Pass,
                holes: 0,
            }),
            reset: Mutex::new(kill.child_token()),
            open: watch::Sender::new(0),
            accepted: AtomicU64::new(0),
        });
        let owner = Owner {
            listener,
            upstream,
            shared: shared.clone(),
            connections: JoinSet::new(),
        };
        let task = tokio::spawn(owner.run(kill.clone()));
        Ok(TcpProxy {
            addr,
            shared,
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

    /// Switches the mode; it applies to every byte read after this returns.
    pub fn set_mode(&self, mode: ProxyMode) {
        self.shared
            .gate
            .send_modify(|gate| *gate = gate.with_mode(mode));
    }

    /// The current mode.
    pub fn mode(&self) -> ProxyMode {
        self.shared.gate.borrow().mode
    }

    /// Closes both halves of every open connection, black-holed ones included. Connections
    /// accepted afterwards are unaffected. The counter drops once their tasks have noticed
    /// (see [`TcpProxy::wait_open_connections`]).
    pub fn reset_all(&self) {
        let next = self.kill.child_token();
        let mut current = self
            .shared
            .reset
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        std::mem::replace(&mut *current, next).cancel();
    }

    /// Connections open right now (accepted and not yet closed).
    pub fn open_connections(&self) -> usize {
        *self.shared.open.borrow()
    }

    /// Connections accepted so far, refused ones included.
    pub fn accepted(&self) -> u64 {
        self.shared.accepted.load(Ordering::SeqCst)
    }

    /// Resolves once exactly `count` connections are open.
    ///
    /// # Cancel safety
    /// Cancel safe; it only observes a counter.
    pub async fn wait_open_connections(&self, count: usize) {
        let mut open = self.shared.open.subscribe();
        // The sender lives in `self.shared`, so this cannot fail while we borrow it.
        let _ = open.wait_for(|open| *open == count).await;
    }

    /// Stops accepting, closes every connection and waits until no task is left.
    ///
    /// # Cancel safety
    /// If this future is dropped, the teardown still completes in the owner task.
    pub async fn shutdown(mut self) {
        self.kill.cancel();
        if let Err(error) = (&mut self.task).await {
            tracing::warn!(%error, "tcp proxy task failed");
        }
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.kill.cancel();
    }
}

/// The task that owns the listener and every connection task.
struct Owner {
    listener: TcpListener,
    upstream: SocketAddr,
    shared: Arc<Shared>,
    connections: JoinSet<()>,
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
                Event::Accepted(Err(error)) => tracing::warn!(%error, "tcp proxy accept failed"),
                Event::Reaped => {}
            }
        }
        drop(self.listener);
        self.connections.shutdown().await;
    }

    fn admit(&mut self, stream: TcpStream) {
        self.shared.accepted.fetch_add(1, Ordering::SeqCst);
        let gate = self.shared.gate.subscribe();
        if gate.borrow().mode == ProxyMode::Refuse {
            // A zero linger turns the close into a reset, like a refusing host's RST.
            let _ = stream.set_zero_linger();
            return drop(stream);
        }
        let _ = stream.set_nodelay(true);
        self.shared.open.send_modify(|open| *open += 1);
        let guard = OpenGuard(self.shared.open.clone());
        let reset = self
            .shared
            .reset
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let upstream = self.upstream;
        self.connections.spawn(async move {
            let _guard = guard;
            tcp_conn::serve(stream, upstream, gate, reset).await;
        });
    }
}
