//! The wire under the routes: every accepted connection is served HTTP/1.1 or HTTP/2 by prior
//! knowledge (h2c; hyper-util's `auto` server reads the client's first bytes), and the faults
//! that live at that layer, for the tests of a client's HTTP/2 connections:
//!
//! - a low `SETTINGS_MAX_CONCURRENT_STREAMS` ([`MockOptions::h2_max_streams`]), so that a client
//!   must open a second connection;
//! - `GOAWAY` on every open connection ([`Faults::goaway`]): hyper's graceful shutdown, so the
//!   streams in flight finish and the connection closes after them;
//! - refused streams ([`Faults::refuse_streams`]): the next HTTP/2 requests are reset with
//!   `RST_STREAM REFUSED_STREAM` before any route sees them;
//! - HTTP/1.1 only ([`MockOptions::http1_only`]): the h2c preface is not understood;
//! - `PING`s unanswered on the connections open now ([`Faults::silence_pings`]): the TCP
//!   connection stays open and every other frame flows.
//!
//! What it counts ([`Faults::wire`]) is what a test asserts on: connections that carried
//! requests and the requests, by version, streams refused, and clients' HTTP/2 `PING`s.
//!
//! With TLS ([`MockOptions::tls`]) the same, on the bytes the handshake left: ALPN says which
//! (it is counted too).
//!
//! [`MockOptions::tls`]: super::options::MockOptions::tls
//!
//! # Invariants
//!
//! 1. A refusal is taken by exactly one HTTP/2 request, before it reaches the routes: the
//!    server did not process it.
//! 2. `GOAWAY` reaches the connections open when it is asked for, never later ones.
//!
//! [`MockOptions::h2_max_streams`]: super::options::MockOptions::h2_max_streams
//! [`MockOptions::http1_only`]: super::options::MockOptions::http1_only
//! [`Faults::goaway`]: super::faults::Faults::goaway
//! [`Faults::refuse_streams`]: super::faults::Faults::refuse_streams
//! [`Faults::silence_pings`]: super::faults::Faults::silence_pings
//! [`Faults::wire`]: super::faults::Faults::wire

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use hyper::body::Incoming;
use hyper::rt::{Read, Write};
use hyper::service::Service;
use hyper::{Request, Version};
use hyper_util::rt::TokioExecutor;
use hyper_util::server::conn::auto;
use tokio::sync::watch;

use super::pings::Pings;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What the wire has seen since the server started ([`Faults::wire`](crate::Faults::wire)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WireCounts {
    /// TCP connections accepted (a refused one, under `refuse`, is not counted). On a shared
    /// machine this counts strangers too (a port scan, another test's reconnecting client);
    /// count clients by the connections that carried a request.
    pub accepted: u64,
    /// Accepted connections that have ended since (closed by either side, or by the server's
    /// kill).
    pub closed: u64,
    /// TLS connections whose ALPN chose `h2` ([`MockOptions::tls`](crate::MockOptions::tls)).
    pub alpn_h2: u64,
    /// TLS connections whose ALPN chose `http/1.1`, or that named no protocol.
    pub alpn_http1: u64,
    /// Connections that carried at least one HTTP/1.x request.
    pub http1_connections: u64,
    /// Connections that carried at least one HTTP/2 request.
    pub http2_connections: u64,
    /// Requests that arrived over HTTP/1.x.
    pub http1_requests: u64,
    /// Requests that arrived over HTTP/2, the refused ones included.
    pub http2_requests: u64,
    /// HTTP/2 requests reset with `REFUSED_STREAM`.
    pub refused_streams: u64,
    /// HTTP/2 `PING` frames clients sent (their keep-alive; acknowledgements not counted).
    pub pings: u64,
    /// Of those, the ones never answered: sent on a connection silenced by
    /// [`Faults::silence_pings`](crate::Faults::silence_pings).
    pub unanswered_pings: u64,
}

/// The wire's settings and counters; one per server, shared by its connection tasks.
pub(crate) struct Wire {
    /// Serve HTTP/1.1 alone; set once at start.
    http1_only: bool,
    /// The HTTP/2 `SETTINGS_MAX_CONCURRENT_STREAMS`; `None`: hyper's (200). Set once at start.
    max_streams: Option<u32>,
    /// Changed by `accepted` only.
    accepted: AtomicU64,
    /// Changed by `serve`, when a connection ends.
    closed: AtomicU64,
    /// Changed by `negotiated` only.
    alpn_h2: AtomicU64,
    alpn_http1: AtomicU64,
    /// Changed by `Counted::call` only.
    http1_connections: AtomicU64,
    http2_connections: AtomicU64,
    http1_requests: AtomicU64,
    http2_requests: AtomicU64,
    refused: AtomicU64,
    /// Counted by every connection's [`PingTap`](super::pings::PingTap), with its silence.
    pub(crate) pings: Arc<Pings>,
    /// HTTP/2 requests still to refuse; set by `refuse_streams`, taken one by one (invariant 1).
    to_refuse: AtomicU32,
    /// Bumped by `goaway`; each connection task watches it from its start (invariant 2).
    goaway: watch::Sender<u64>,
}

impl Wire {
    pub(crate) fn new(http1_only: bool, max_streams: Option<u32>) -> Self {
        Self {
            http1_only,
            max_streams,
            accepted: AtomicU64::new(0),
            closed: AtomicU64::new(0),
            alpn_h2: AtomicU64::new(0),
            alpn_http1: AtomicU64::new(0),
            http1_connections: AtomicU64::new(0),
            http2_connections: AtomicU64::new(0),
            http1_requests: AtomicU64::new(0),
            http2_requests: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            pings: Arc::default(),
            to_refuse: AtomicU32::new(0),
            goaway: watch::Sender::new(0),
        }
    }

    pub(crate) fn counts(&self) -> WireCounts {
        WireCounts {
            accepted: self.accepted.load(Ordering::SeqCst),
            closed: self.closed.load(Ordering::SeqCst),
            alpn_h2: self.alpn_h2.load(Ordering::SeqCst),
            alpn_http1: self.alpn_http1.load(Ordering::SeqCst),
            http1_connections: self.http1_connections.load(Ordering::SeqCst),
            http2_connections: self.http2_connections.load(Ordering::SeqCst),
            http1_requests: self.http1_requests.load(Ordering::SeqCst),
            http2_requests: self.http2_requests.load(Ordering::SeqCst),
            refused_streams: self.refused.load(Ordering::SeqCst),
            pings: self.pings.sent.load(Ordering::SeqCst),
            unanswered_pings: self.pings.unanswered.load(Ordering::SeqCst),
        }
    }

    /// A TLS handshake ended with `alpn` chosen.
    pub(crate) fn negotiated(&self, alpn: Option<&[u8]>) {
        let counter = match alpn {
            Some(b"h2") => &self.alpn_h2,
            _ => &self.alpn_http1,
        };
        counter.fetch_add(1, Ordering::SeqCst);
    }

    /// The next `count` HTTP/2 requests are refused (replacing what was left to refuse).
    pub(crate) fn refuse_streams(&self, count: u32) {
        self.to_refuse.store(count, Ordering::SeqCst);
    }

    /// Every connection open now gets `GOAWAY` and closes once its streams are done.
    pub(crate) fn goaway(&self) {
        self.goaway.send_modify(|n| *n += 1);
    }

    /// Takes one refusal, if one is left (invariant 1).
    fn take_refusal(&self) -> bool {
        self.to_refuse
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }
}

/// Serves one accepted connection with `service` until it ends.
pub(super) async fn serve<IO, S, B>(wire: Arc<Wire>, io: IO, service: S)
where
    IO: Read + Write + Unpin + Send + 'static,
    S: Service<Request<Incoming>, Response = hyper::Response<B>, Error = Infallible>
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    wire.accepted.fetch_add(1, Ordering::SeqCst);
    let mut goaway = wire.goaway.subscribe();
    goaway.mark_unchanged();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    if let Some(max) = wire.max_streams {
        builder.http2().max_concurrent_streams(max);
    }
    if wire.http1_only {
        builder = builder.http1_only();
    }
    let service = Counted {
        inner: service,
        wire: wire.clone(),
        counted: AtomicBool::new(false),
    };
    let connection = builder.serve_connection(io, service);
    tokio::pin!(connection);
    let mut draining = false;
    let result = loop {
        tokio::select! {
            result = connection.as_mut() => break result,
            changed = goaway.changed(), if !draining => {
                draining = true;
                if changed.is_ok() {
                    connection.as_mut().graceful_shutdown();
                }
            }
        }
    };
    wire.closed.fetch_add(1, Ordering::SeqCst);
    if let Err(error) = result {
        tracing::debug!(%error, "connection ended with an error");
    }
}

/// The routes behind the wire's counting and refusals; one per connection.
struct Counted<S> {
    inner: S,
    wire: Arc<Wire>,
    /// Set by the connection's first request, which counts the connection.
    counted: AtomicBool,
}

type Answer<R> = Pin<Box<dyn Future<Output = Result<R, BoxError>> + Send>>;

impl<S> Service<Request<Incoming>> for Counted<S>
where
    S: Service<Request<Incoming>, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Answer<S::Response>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let first = !self.counted.swap(true, Ordering::SeqCst);
        if request.version() == Version::HTTP_2 {
            if first {
                self.wire.http2_connections.fetch_add(1, Ordering::SeqCst);
            }
            self.wire.http2_requests.fetch_add(1, Ordering::SeqCst);
            if self.wire.take_refusal() {
                self.wire.refused.fetch_add(1, Ordering::SeqCst);
                // hyper resets the stream with the reason it finds in the service's error.
                let refused: BoxError = Box::new(h2::Error::from(h2::Reason::REFUSED_STREAM));
                return Box::pin(async move { Err(refused) });
            }
        } else {
            if first {
                self.wire.http1_connections.fetch_add(1, Ordering::SeqCst);
            }
            self.wire.http1_requests.fetch_add(1, Ordering::SeqCst);
        }
        let answer = self.inner.call(request);
        Box::pin(async move { answer.await.map_err(|never| match never {}) })
    }
}
