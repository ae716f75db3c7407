//! One connection of a [`TcpProxy`](super::TcpProxy): the relay in both directions and the
//! rule that decides, chunk by chunk, whether it is black-holed.
//!
//! # Invariants
//!
//! 1. A connection is black-holed iff the proxy was black-holed when it was accepted, or has
//!    been black-holed at any moment since (the hole counter moved), or is black-holed now.
//!    So a black-holed connection never recovers, whatever the mode becomes later.
//! 2. Every chunk is checked against that rule after it is read and before it is written, so
//!    once `set_mode(BlackHole)` has returned no further byte is forwarded on any connection.
//! 3. A black-holed connection keeps reading (and discarding) both sides, so its peers' writes
//!    succeed, and it closes nothing until its client closes.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// How long a connection waits for the upstream to accept before giving up on it.
const CONNECT_DEADLINE: Duration = Duration::from_secs(5);
/// Relay buffer per direction.
const CHUNK: usize = 16 * 1024;

/// What a [`TcpProxy`](super::TcpProxy) does with connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyMode {
    /// Forward bytes both ways.
    Pass,
    /// A half-open NAT entry: every open connection and every new one forwards nothing in either
    /// direction and is never closed by the proxy. Connections black-holed once stay so.
    BlackHole,
    /// New connections are reset at once; open ones are untouched.
    Refuse,
}

impl ProxyMode {
    /// The lowercase name used by the command line (`pass`, `blackhole`, `refuse`).
    pub fn as_str(self) -> &'static str {
        match self {
            ProxyMode::Pass => "pass",
            ProxyMode::BlackHole => "blackhole",
            ProxyMode::Refuse => "refuse",
        }
    }
}

/// The proxy-wide state every connection consults; changed only by `TcpProxy::set_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Gate {
    pub(super) mode: ProxyMode,
    /// How many times the proxy entered [`ProxyMode::BlackHole`].
    pub(super) holes: u64,
}

impl Gate {
    pub(super) fn with_mode(self, mode: ProxyMode) -> Gate {
        let entered = mode == ProxyMode::BlackHole;
        Gate {
            mode,
            holes: self.holes + u64::from(entered),
        }
    }
}

/// Invariant 1: `born` is the gate when the connection was accepted.
fn holed(born: Gate, gate: &watch::Receiver<Gate>) -> bool {
    let now = *gate.borrow();
    born.mode == ProxyMode::BlackHole || now.mode == ProxyMode::BlackHole || now.holes != born.holes
}

/// How one direction of the relay ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    /// Its reader reached EOF and the EOF was forwarded (or swallowed by the hole).
    Done,
    /// The whole connection must close: an I/O error, or the client left a black-holed one.
    End,
}

/// Relays `client` until both directions are done, the connection must end, or `reset` fires.
pub(super) async fn serve(
    mut client: TcpStream,
    upstream: SocketAddr,
    gate: watch::Receiver<Gate>,
    reset: CancellationToken,
) {
    let born = *gate.borrow();
    tokio::select! {
        () = reset.cancelled() => {}
        () = relay(&mut client, upstream, born, &gate) => {}
    }
}

async fn relay(
    client: &mut TcpStream,
    upstream: SocketAddr,
    born: Gate,
    gate: &watch::Receiver<Gate>,
) {
    if holed(born, gate) {
        // Nothing will ever be forwarded: do not even dial the upstream.
        return swallow(client).await;
    }
    let mut upstream = match tokio::time::timeout(CONNECT_DEADLINE, TcpStream::connect(upstream))
        .await
    {
        Ok(Ok(stream)) => stream,
        Ok(Err(error)) => return tracing::debug!(%error, "upstream refused a proxied connection"),
        Err(_) => return tracing::debug!("upstream did not accept within the deadline"),
    };
    let _ = upstream.set_nodelay(true);
    let (mut client_read, mut client_write) = client.split();
    let (mut upstream_read, mut upstream_write) = upstream.split();
    let up = pump(&mut client_read, &mut upstream_write, born, gate, true);
    let down = pump(&mut upstream_read, &mut client_write, born, gate, false);
    tokio::pin!(up, down);
    let (mut up_done, mut down_done) = (false, false);
    while !(up_done && down_done) {
        let flow = tokio::select! {
            flow = &mut up, if !up_done => { up_done = true; flow }
            flow = &mut down, if !down_done => { down_done = true; flow }
        };
        if flow == Flow::End {
            return;
        }
    }
}

/// Copies `from` to `to` chunk by chunk, discarding every chunk read while black-holed.
async fn pump<R, W>(
    from: &mut R,
    to: &mut W,
    born: Gate,
    gate: &watch::Receiver<Gate>,
    from_client: bool,
) -> Flow
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buffer = vec![0u8; CHUNK];
    loop {
        let read = match from.read(&mut buffer).await {
            Ok(0) => break,
            Ok(read) => read,
            Err(_) => return Flow::End,
        };
        if holed(born, gate) {
            continue;
        }
        if to.write_all(&buffer[..read]).await.is_err() {
            return Flow::End;
        }
    }
    match (holed(born, gate), from_client) {
        // The client closed a black-holed connection: that is the only way it ends.
        (true, true) => Flow::End,
        // The upstream closed: a half-open entry does not tell the client.
        (true, false) => Flow::Done,
        (false, _) => {
            let _ = to.shutdown().await;
            Flow::Done
        }
    }
}

/// Reads and discards everything the client sends until it closes.
async fn swallow(client: &mut TcpStream) {
    let mut buffer = vec![0u8; CHUNK];
    while let Ok(1..) = client.read(&mut buffer).await {}
}
