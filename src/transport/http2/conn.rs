//! [`Conn`]: one HTTP/2 connection of an origin's set, over hyper's `client::conn::http2`, and
//! [`open`], which opens one: TCP, then TLS with ALPN for `https` (rustls with the platform's
//! roots, as reqwest's), then the HTTP/2 handshake, which counts as done when the server's first
//! frame, its `SETTINGS`, has arrived.
//!
//! # Invariants
//!
//! 1. `open` counts the streams that hold a [`Slot`]: a request from its send until its answer's
//!    body ends or is dropped.
//! 2. Once drained, a connection takes no new stream, and stays drained.
//! 3. The task that drives hyper's connection is owned by its `Conn`: dropping the `Conn`
//!    (after the set let go of it and every slot ended) aborts it.

use std::{
    io,
    sync::{
        Arc, OnceLock,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    time::Duration,
};

use hyper::client::conn::http2::SendRequest;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::{
    io::{AsyncRead, AsyncWrite},
    net::TcpStream,
    sync::oneshot,
    task::JoinHandle,
};

use super::{
    budget::Descriptor,
    frames::{Frames, NotHttp2, Seen},
};

/// The streams a connection is given when its server announces no limit: the least RFC 9113
/// (§ 6.5.2) asks a server to allow, so the next connection opens before anyone waits on it.
pub(super) const UNANNOUNCED: usize = 100;
/// Not announced (yet).
const NO_LIMIT_SEEN: usize = usize::MAX;
/// How long the server's first frame may take after the TLS or TCP handshake.
const SETTINGS_WAIT: Duration = Duration::from_secs(10);

/// Where an origin's connections go.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Target {
    pub(super) host: String,
    pub(super) port: u16,
    /// `https`: TLS with ALPN; `http`: h2c by prior knowledge.
    pub(super) tls: bool,
    /// The `PING` its connections send when idle; `None`: none.
    pub(super) ping: Option<Ping>,
}

/// HTTP/2 keep-alive: a `PING` after `interval` without a frame from the server, and the
/// connection closed when it is not acknowledged within `timeout` (hyper's keep-alive). A
/// connection closed so ends every stream on it, so each session on it finds out by its own
/// signal: its standalone stream ends, and it probes for itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Ping {
    pub(crate) interval: Duration,
    pub(crate) timeout: Duration,
}

/// What opening a connection found.
pub(super) enum Opened {
    Http2(Arc<Conn>),
    /// The server does not speak HTTP/2 (ALPN chose HTTP/1.1, or the h2c preface was answered
    /// with something else than `SETTINGS`).
    Http1,
}

/// One HTTP/2 connection (see the module docs).
pub(super) struct Conn {
    send: SendRequest<reqwest::Body>,
    /// What the server's frames said: its stream limit, a `GOAWAY`.
    seen: Arc<Seen>,
    /// Streams holding a slot (invariant 1); changed by [`Conn::take`] and [`Slot`]'s drop.
    open: AtomicUsize,
    /// Set when a request bounced off the connection, or hyper's connection task ended
    /// (invariant 2).
    drained: Arc<AtomicBool>,
    driver: JoinHandle<()>,
    /// Its place in the process's descriptor budget, given back when it is dropped.
    _descriptor: Descriptor,
}

impl Conn {
    /// The streams the server allows at once.
    pub(super) fn limit(&self) -> usize {
        match self.seen.max_streams.load(Ordering::Acquire) {
            NO_LIMIT_SEEN => UNANNOUNCED,
            limit => limit,
        }
    }

    /// Streams open on it now.
    pub(super) fn open_streams(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }

    /// True when it takes no new stream (invariant 2).
    pub(super) fn drained(&self) -> bool {
        self.drained.load(Ordering::Acquire)
            || self.seen.goaway.load(Ordering::Acquire)
            || self.send.is_closed()
    }

    /// No new stream goes on it any more.
    pub(super) fn drain(&self) {
        self.drained.store(true, Ordering::Release);
    }

    /// True when a new stream may go on it now.
    pub(super) fn has_room(&self) -> bool {
        !self.drained() && self.open_streams() < self.limit()
    }

    /// A stream's slot on it (invariant 1); its end sets `freed`.
    pub(super) fn take(self: &Arc<Self>, freed: &Arc<AtomicBool>) -> Slot {
        self.open.fetch_add(1, Ordering::AcqRel);
        Slot {
            conn: self.clone(),
            freed: freed.clone(),
        }
    }

    /// The handle that sends a request on it.
    pub(super) fn sender(&self) -> SendRequest<reqwest::Body> {
        self.send.clone()
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

/// One stream's place on a connection; released when dropped, which says so to the set.
pub(super) struct Slot {
    conn: Arc<Conn>,
    /// The set's mark that a stream ended (see `list.rs`), set after the release.
    freed: Arc<AtomicBool>,
}

impl Slot {
    pub(super) fn conn(&self) -> &Arc<Conn> {
        &self.conn
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.conn.open.fetch_sub(1, Ordering::AcqRel);
        self.freed.store(true, Ordering::Release);
    }
}

/// Opens a connection to `target` (see the module docs), which holds `descriptor` for its
/// life. The caller bounds the time it takes.
pub(super) async fn open(target: &Target, descriptor: Descriptor) -> io::Result<Opened> {
    open_over(target, tls_connector, descriptor).await
}

/// [`open`], with the TLS of `https` connections from `tls`.
pub(super) async fn open_over(
    target: &Target,
    tls: fn() -> io::Result<tokio_rustls::TlsConnector>,
    descriptor: Descriptor,
) -> io::Result<Opened> {
    let tcp = TcpStream::connect((target.host.as_str(), target.port)).await?;
    // Small JSON-RPC frames must not wait for Nagle's algorithm.
    tcp.set_nodelay(true)?;
    if !target.tls {
        // A server that does not speak h2c may answer the preface (nginx: a 400) or just close
        // (hyper's HTTP/1.1 server): either way it does not speak HTTP/2 there.
        return handshake(tcp, true, target.ping, descriptor).await;
    }
    let name = rustls::pki_types::ServerName::try_from(target.host.clone())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let tls = tls()?.connect(name, tcp).await?;
    match tls.get_ref().1.alpn_protocol() {
        Some(b"h2") => handshake(tls, false, target.ping, descriptor).await,
        _ => Ok(Opened::Http1),
    }
}

/// The HTTP/2 handshake on `io`, done when the server's `SETTINGS` arrived; with
/// `closed_is_http1`, a connection the server closes before any frame says it speaks HTTP/1.1.
/// With `ping`, the connection keeps itself alive ([`Ping`]).
async fn handshake<IO>(
    io: IO,
    closed_is_http1: bool,
    ping: Option<Ping>,
    descriptor: Descriptor,
) -> io::Result<Opened>
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let seen = Arc::new(Seen {
        max_streams: AtomicUsize::new(NO_LIMIT_SEEN),
        goaway: AtomicBool::new(false),
    });
    let (first_tx, first) = oneshot::channel();
    let io = TokioIo::new(Frames::new(io, seen.clone(), first_tx));
    let mut builder = hyper::client::conn::http2::Builder::new(TokioExecutor::new());
    if let Some(ping) = ping {
        builder
            .timer(TokioTimer::new())
            .keep_alive_interval(ping.interval)
            .keep_alive_timeout(ping.timeout)
            .keep_alive_while_idle(true);
    }
    let (send, connection) = builder.handshake(io).await.map_err(io::Error::other)?;
    let drained = Arc::new(AtomicBool::new(false));
    let driver = tokio::spawn({
        let drained = drained.clone();
        async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "http/2 connection ended");
            }
            drained.store(true, Ordering::Release);
        }
    });
    // Owned from here: an early return aborts the driver (invariant 3).
    let conn = Conn {
        send,
        seen,
        open: AtomicUsize::new(0),
        drained,
        driver,
        _descriptor: descriptor,
    };
    match tokio::time::timeout(SETTINGS_WAIT, first).await {
        Ok(Ok(Ok(()))) => Ok(Opened::Http2(Arc::new(conn))),
        Ok(Ok(Err(NotHttp2::Other))) => Ok(Opened::Http1),
        Ok(Ok(Err(NotHttp2::Closed))) if closed_is_http1 => Ok(Opened::Http1),
        Ok(Ok(Err(NotHttp2::Closed)) | Err(_)) => Err(io::Error::new(
            io::ErrorKind::ConnectionAborted,
            "the connection ended before the server's HTTP/2 settings",
        )),
        Err(_) => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "no HTTP/2 settings from the server",
        )),
    }
}

/// Roots trusted beside the platform's, set by the tests' hook alone
/// ([`trust_beside_the_platform`]) before the first TLS connection.
static EXTRA_ROOTS: OnceLock<Vec<rustls::pki_types::CertificateDer<'static>>> = OnceLock::new();

/// Trusts the PEM certificates `pem` beside the platform's roots on the HTTP/2 connections of
/// this process opened from now on; false when other roots were set before, or the connector
/// was built already. For the tests' hook only (a test CA for the mock's https).
#[cfg_attr(not(feature = "test-hooks"), allow(dead_code))]
pub(crate) fn trust_beside_the_platform(pem: &[u8]) -> bool {
    use rustls::pki_types::{CertificateDer, pem::PemObject};
    let Ok(roots) = CertificateDer::pem_slice_iter(pem).collect::<Result<Vec<_>, _>>() else {
        return false;
    };
    EXTRA_ROOTS.set(roots.clone()).is_ok() || EXTRA_ROOTS.get() == Some(&roots)
}

/// TLS for HTTP/2 connections: rustls on aws-lc-rs with the platform's verifier (what
/// reqwest's default client trusts), offering `h2` then `http/1.1` by ALPN. Built once.
fn tls_connector() -> io::Result<tokio_rustls::TlsConnector> {
    static TLS: OnceLock<Result<tokio_rustls::TlsConnector, rustls::Error>> = OnceLock::new();
    let built = TLS.get_or_init(|| {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let extra = EXTRA_ROOTS.get_or_init(Vec::new).clone();
        let verifier =
            rustls_platform_verifier::Verifier::new_with_extra_roots(extra, provider.clone())?;
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth();
        Ok(offering_h2(config))
    });
    built.clone().map_err(io::Error::other)
}

/// `config` offering `h2`, then `http/1.1`, by ALPN.
pub(super) fn offering_h2(mut config: rustls::ClientConfig) -> tokio_rustls::TlsConnector {
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    tokio_rustls::TlsConnector::from(Arc::new(config))
}
