//! [`OriginSet`]: the HTTP/2 connections of one origin, shared by every session to it: which
//! connection a request goes on, when another opens, and what a refused request does next.
//! Over 300 lines: one decision, where a request goes, and the state it reads; which
//! connection has room is [`Conns`]'s to find, the budget's arithmetic [`budget`]'s.
//!
//! # Invariants
//!
//! 1. At most [`MAX_OPENINGS`] connections are being opened at once, and another starts only
//!    when the requests waiting outnumber the streams the ones under way will bring (the
//!    server's limit on its newest connection); requests that find no room wait for them
//!    (bounded by [`CONNECT_WAIT`]) rather than each open their own.
//! 2. A connection opens only within the budget: at most [`PER_ORIGIN`] for the origin (or the
//!    set's own ceiling), and a place in the process's descriptor budget ([`budget`]; the
//!    origin's first connection always gets one). Past it, a request goes on the least busy
//!    connection and hyper queues it until a stream ends there; the first time, a warning says
//!    which limit and the numbers.
//! 3. A request goes again, on another stream, only when the server provably did not process it
//!    ([`Failure::Refused`], [`Failure::Drained`]), at most [`MAX_ATTEMPTS`] times in all.
//! 4. Once the origin is found not to speak HTTP/2, it is not asked again: every request takes
//!    the HTTP/1.1 path for the set's life.
//! 5. The state's lock is never held across an `.await`.
//!
//! [`budget`]: super::budget

use std::{
    sync::{Mutex, MutexGuard, PoisonError},
    time::Duration,
};

use tokio::sync::Notify;

use super::{
    body::Tracked,
    budget::{self, Descriptor, PER_ORIGIN},
    conn::{self, Opened, Slot, Target, UNANNOUNCED},
    error::{Failure, Http2Error, failure},
    list::Conns,
};

/// The most connections of one origin being opened at once (invariant 1). One at a time, a
/// connection over TLS to a server 50 ms away (TCP, TLS 1.3, the server's `SETTINGS`: about
/// four round trips) makes 500 connections, 100,000 sessions at 200 streams each, take 100 s
/// to open; four at a time take a quarter of that, and none opens for requests the ones under
/// way will carry.
pub(super) const MAX_OPENINGS: usize = 4;
/// The most sends of one request (invariant 3).
pub(super) const MAX_ATTEMPTS: u32 = 3;
/// How long opening a connection may take, TLS and the server's `SETTINGS` included; as long as
/// the HTTP/1.1 client's connect timeout.
pub(super) const CONNECT_WAIT: Duration = Duration::from_secs(10);

/// The connections of one origin (see the module docs).
pub(crate) struct OriginSet {
    target: Target,
    /// The most connections it opens (invariant 2): [`PER_ORIGIN`], less in tests.
    ceiling: usize,
    state: Mutex<State>,
    /// Woken when an opening ends, whatever its outcome.
    opened: Notify,
}

#[derive(Default)]
struct State {
    /// The connections that may take streams, oldest first; drained ones are dropped from here
    /// as they are found (their streams still hold them).
    conns: Conns,
    /// Connections being opened (invariant 1).
    opening: usize,
    /// Requests waiting for an opening to end: counted in and out by `pick`, out by [`Waiting`]
    /// when one gives up.
    waiting: usize,
    /// The origin does not speak HTTP/2 (invariant 4).
    http1: bool,
    /// The budget was reached and a warning said so (invariant 2).
    warned: bool,
    /// Requests sent on a full connection because the budget was reached.
    past_budget: u64,
}

/// Where a request goes.
enum Pick {
    Stream(Slot),
    Http1,
    /// This caller opens the next connection, holding its place in the budget.
    Open(Descriptor),
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
        Self::with_ceiling(target, PER_ORIGIN)
    }

    /// A set that opens at most `ceiling` connections (invariant 2).
    pub(super) fn with_ceiling(target: Target, ceiling: usize) -> Self {
        Self {
            target,
            ceiling,
            state: Mutex::default(),
            opened: Notify::new(),
        }
    }

    /// Whether its connections send `PING`s when idle (liveness per origin), so that a stream
    /// open on one is known to be on a live connection.
    pub(crate) fn pinged(&self) -> bool {
        self.target.ping.is_some()
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
        let mut rejoining = false;
        loop {
            let opened = self.opened.notified();
            tokio::pin!(opened);
            // Registered before the state is read, so an opening that ends meanwhile wakes us.
            opened.as_mut().enable();
            // `pick` counts this caller among the waiting, and out when it looks again; the
            // guard counts it out if it gives up instead (a timeout, or its future dropped).
            let waiting = match self.pick(rejoining) {
                Pick::Stream(slot) => return Ok(Some(slot)),
                Pick::Http1 => return Ok(None),
                Pick::Open(descriptor) => return self.open(descriptor).await,
                Pick::Wait => Waiting(self),
            };
            let woke = tokio::time::timeout(CONNECT_WAIT, opened).await;
            if woke.is_ok() {
                // The next `pick`, without an `.await` before it, counts it out.
                std::mem::forget(waiting);
                rejoining = true;
            } else {
                drop(waiting);
                let why = std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "waited too long for a connection being opened",
                );
                return Err(Http2Error::Connect(why));
            }
        }
    }

    /// Where a request goes; `rejoining`: its caller was among the waiting (counted out here,
    /// under the same lock).
    fn pick(&self, rejoining: bool) -> Pick {
        let mut state = self.state();
        if rejoining {
            state.waiting -= 1;
        }
        if state.http1 {
            return Pick::Http1;
        }
        // The oldest with room first: the others empty out as their streams end.
        if let Some(slot) = state.conns.with_room() {
            return Pick::Stream(slot);
        }
        if state.opening > 0 && !another_opening_helps(&state) {
            state.waiting += 1;
            return Pick::Wait;
        }
        match self.descriptor(&mut state) {
            Ok(descriptor) => {
                state.opening += 1;
                Pick::Open(descriptor)
            }
            // What is being opened may bring room.
            Err(_) if state.opening > 0 => {
                state.waiting += 1;
                Pick::Wait
            }
            Err(limit) => self.past_budget(&mut state, limit),
        }
    }

    /// A place in the budget for one more connection, or the limit that refuses it
    /// (invariant 2).
    fn descriptor(&self, state: &mut State) -> Result<Descriptor, Limit> {
        self.within_budget(state).or_else(|_| {
            // Drained connections no look has met yet hold no place in the origin's count (and
            // a set of drained ones only would have nowhere to queue): count again without them.
            state.conns.forget_drained();
            self.within_budget(state)
        })
    }

    fn within_budget(&self, state: &State) -> Result<Descriptor, Limit> {
        let held = state.conns.len() + state.opening;
        if held == 0 {
            return Ok(Descriptor::first());
        }
        if held >= self.ceiling {
            return Err(Limit::Origin(self.ceiling));
        }
        let process = budget::process_budget();
        Descriptor::take(process).ok_or(Limit::Process(process))
    }

    /// The least busy connection, for a request that finds every one full and no room in the
    /// budget for another (invariant 2): hyper queues it there.
    fn past_budget(&self, state: &mut State, limit: Limit) -> Pick {
        state.past_budget += 1;
        if !state.warned {
            state.warned = true;
            let (limit, max) = match limit {
                Limit::Origin(max) => ("connections per origin", max),
                Limit::Process(max) => ("the process's descriptor budget", max),
            };
            let streams = state.conns.newest_limit();
            tracing::warn!(
                host = %self.target.host,
                port = self.target.port,
                limit,
                max,
                connections = state.conns.len(),
                streams_per_connection = streams.unwrap_or(0),
                process_connections = budget::open(),
                "http/2: every connection to the origin is at the server's stream limit and no \
                 other may open; requests queue on the least busy one (warned once per origin)"
            );
        }
        match state.conns.least_busy() {
            Some(slot) => Pick::Stream(slot),
            // Not reached: with no connection left, the origin's next is its first, which opens
            // whatever the budget.
            None => {
                state.waiting += 1;
                Pick::Wait
            }
        }
    }

    /// Opens the next connection and takes a stream on it (invariant 1).
    async fn open(&self, descriptor: Descriptor) -> Result<Option<Slot>, Http2Error> {
        let opening = Opening(self);
        let opened = conn::open(&self.target, descriptor);
        let opened = tokio::time::timeout(CONNECT_WAIT, opened).await;
        let opened = opened.unwrap_or_else(|_| {
            let why = "no HTTP/2 connection within the connect timeout";
            Err(std::io::Error::new(std::io::ErrorKind::TimedOut, why))
        });
        let mut state = self.state();
        let slot = match opened {
            Ok(Opened::Http2(conn)) => Ok(Some(state.conns.push(conn))),
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
        self.state().conns.taking()
    }

    /// Requests sent on a full connection because the budget was reached.
    #[cfg(test)]
    pub(super) fn past_budget_count(&self) -> u64 {
        self.state().past_budget
    }
}

/// Which limit of the budget refused another connection (invariant 2), and its number.
enum Limit {
    Origin(usize),
    Process(usize),
}

/// True when the requests waiting, and this one, outnumber the streams the connections being
/// opened will bring, and fewer than [`MAX_OPENINGS`] are (invariant 1).
fn another_opening_helps(state: &State) -> bool {
    // The server's limit on its newest connection; each opener takes one stream of its own.
    let streams = state.conns.newest_limit().unwrap_or(UNANNOUNCED);
    let room = state.opening * streams.saturating_sub(1);
    state.opening < MAX_OPENINGS && state.waiting + 1 > room
}

/// An opening under way: when it ends (or its future is dropped), the next may start and the
/// waiters look again.
struct Opening<'a>(&'a OriginSet);

impl Drop for Opening<'_> {
    fn drop(&mut self) {
        self.0.state().opening -= 1;
        self.0.opened.notify_waiters();
    }
}

/// A request waiting for an opening (counted by `pick`); counted out when dropped, which is
/// when it gives up: one woken looks again instead (`pick` counts it out).
struct Waiting<'a>(&'a OriginSet);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.state().waiting -= 1;
    }
}
