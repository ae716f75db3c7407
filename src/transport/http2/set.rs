//! [`OriginSet`]: the HTTP/2 connections of one origin, shared by every session to it: which
//! connection a request goes on, when another opens, and what a refused request does next.
//!
//! # Invariants
//!
//! 1. At most one connection is being opened at a time; requests that find no room wait for
//!    it (bounded by [`CONNECT_WAIT`]) rather than each open their own.
//! 2. At most [`MAX_CONNECTIONS`] connections; past that, a request goes on the least busy one
//!    and hyper queues it until a stream ends there.
//! 3. A request goes again, on another stream, only when the server provably did not process it
//!    ([`Failure::Refused`], [`Failure::Drained`]), at most [`MAX_ATTEMPTS`] times in all.
//! 4. Once the origin is found not to speak HTTP/2, it is not asked again: every request takes
//!    the HTTP/1.1 path for the set's life.
//! 5. The state's lock is never held across an `.await`.

use std::{
    sync::{Arc, Mutex, MutexGuard, PoisonError},
    time::Duration,
};

use tokio::sync::Notify;

use super::{
    body::Tracked,
    conn::{self, Conn, Opened, Slot, Target},
    error::{Failure, Http2Error, failure},
};

/// The most connections one origin gets (invariant 2).
pub(super) const MAX_CONNECTIONS: usize = 64;
/// The most sends of one request (invariant 3).
pub(super) const MAX_ATTEMPTS: u32 = 3;
/// How long opening a connection may take, TLS and the server's `SETTINGS` included; as long as
/// the HTTP/1.1 client's connect timeout.
pub(super) const CONNECT_WAIT: Duration = Duration::from_secs(10);

/// The connections of one origin (see the module docs).
pub(crate) struct OriginSet {
    target: Target,
    state: Mutex<State>,
    /// Woken when an opening ends, whatever its outcome.
    opened: Notify,
}

#[derive(Default)]
struct State {
    /// The connections that may take streams; drained ones are dropped from here as they are
    /// found (their streams still hold them).
    conns: Vec<Arc<Conn>>,
    /// A connection is being opened (invariant 1).
    opening: bool,
    /// The origin does not speak HTTP/2 (invariant 4).
    http1: bool,
}

/// Where a request goes.
enum Pick {
    Stream(Slot),
    Http1,
    /// This caller opens the next connection.
    Open,
    /// Another caller is opening one.
    Wait,
}

/// Why a request was not sent over HTTP/2.
#[derive(Debug)]
pub(crate) enum SendError {
    /// The request could not be built.
    Build(reqwest::Error),
    Http2(Http2Error),
}

impl OriginSet {
    pub(super) fn new(target: Target) -> Self {
        Self {
            target,
            state: Mutex::default(),
            opened: Notify::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends the request `make` builds (again for each attempt) on one of the origin's
    /// connections and returns its answer, whose body holds the stream; `None` when the origin
    /// speaks HTTP/1.1 only (the caller sends it its own way).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future resets the stream if it was sent (hyper's `CANCEL`), and gives up a
    /// connection being opened for it (the next request opens another).
    pub(crate) async fn send(
        &self,
        make: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<Option<reqwest::Response>, SendError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let slot = match self.stream().await.map_err(SendError::Http2)? {
                Some(slot) => slot,
                None => return Ok(None),
            };
            let request = make().build().map_err(SendError::Build)?;
            let request = hyper::Request::try_from(request).map_err(SendError::Build)?;
            let mut sent = match slot.conn().sender().try_send_request(request).await {
                Ok(answer) => {
                    let answer = answer.map(|body| reqwest::Body::wrap(Tracked::new(body, slot)));
                    return Ok(Some(reqwest::Response::from(answer)));
                }
                Err(error) => error,
            };
            let returned = sent.take_message().is_some();
            let error = sent.into_error();
            match failure(&error, returned) {
                Failure::Other => return Err(SendError::Http2(Http2Error::Request(error))),
                Failure::Drained => slot.conn().drain(),
                Failure::Refused => {}
            }
            tracing::debug!(%error, attempt, "http/2 request not processed");
            if attempt >= MAX_ATTEMPTS {
                let source = error;
                let attempts = attempt;
                return Err(SendError::Http2(Http2Error::Unprocessed {
                    attempts,
                    source,
                }));
            }
        }
    }

    /// A stream on a connection with room, opening one if none has; `None` for HTTP/1.1.
    async fn stream(&self) -> Result<Option<Slot>, Http2Error> {
        loop {
            let opened = self.opened.notified();
            tokio::pin!(opened);
            // Registered before the state is read, so an opening that ends meanwhile wakes us.
            opened.as_mut().enable();
            match self.pick() {
                Pick::Stream(slot) => return Ok(Some(slot)),
                Pick::Http1 => return Ok(None),
                Pick::Open => return self.open().await,
                Pick::Wait => {}
            }
            if tokio::time::timeout(CONNECT_WAIT, opened).await.is_err() {
                let why = std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "waited too long for a connection being opened",
                );
                return Err(Http2Error::Connect(why));
            }
        }
    }

    fn pick(&self) -> Pick {
        let mut state = self.state();
        if state.http1 {
            return Pick::Http1;
        }
        state.conns.retain(|conn| !conn.drained());
        // The oldest with room first: the others empty out as their streams end.
        if let Some(conn) = state.conns.iter().find(|conn| conn.has_room()) {
            return Pick::Stream(conn.take());
        }
        if state.opening {
            return Pick::Wait;
        }
        if state.conns.len() < MAX_CONNECTIONS {
            state.opening = true;
            return Pick::Open;
        }
        let least = state.conns.iter().min_by_key(|conn| conn.open_streams());
        match least {
            Some(conn) => Pick::Stream(conn.take()),
            None => Pick::Wait,
        }
    }

    /// Opens the next connection and takes a stream on it (invariant 1).
    async fn open(&self) -> Result<Option<Slot>, Http2Error> {
        let opening = Opening(self);
        let opened = tokio::time::timeout(CONNECT_WAIT, conn::open(&self.target)).await;
        let opened = opened.unwrap_or_else(|_| {
            let why = "no HTTP/2 connection within the connect timeout";
            Err(std::io::Error::new(std::io::ErrorKind::TimedOut, why))
        });
        let mut state = self.state();
        let slot = match opened {
            Ok(Opened::Http2(conn)) => {
                let slot = conn.take();
                state.conns.push(conn);
                Ok(Some(slot))
            }
            Ok(Opened::Http1) => {
                tracing::debug!(host = %self.target.host, "the origin speaks HTTP/1.1 only");
                state.http1 = true;
                Ok(None)
            }
            Err(error) => Err(Http2Error::Connect(error)),
        };
        drop(state);
        drop(opening);
        slot
    }

    /// Connections that take new streams now.
    #[cfg(test)]
    pub(super) fn connections(&self) -> usize {
        let state = self.state();
        state.conns.iter().filter(|conn| !conn.drained()).count()
    }
}

/// An opening under way: when it ends (or its future is dropped), the next may start and the
/// waiters look again.
struct Opening<'a>(&'a OriginSet);

impl Drop for Opening<'_> {
    fn drop(&mut self) {
        self.0.state().opening = false;
        self.0.opened.notify_waiters();
    }
}
