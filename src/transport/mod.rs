//! Transports: how one generation reaches its server.
//!
//! Each transport opens a fresh connection (a child process, an SSE stream, an HTTP session)
//! and hands rmcp a [`Transport`] wrapped in [`Observed`], which stamps the time of every message
//! received — the heartbeat measures idleness from there. What a transport knows about *why* it
//! ended (an exit status, an HTTP 404) goes into the generation's [`DeathSlot`].

pub(crate) mod client;
pub(crate) mod decode;
pub(crate) mod detect;
pub(crate) mod direct;
pub(crate) mod http;
pub(crate) mod http2;
pub(crate) mod judge;
pub(crate) mod ledger;
pub(crate) mod observed;
mod origin_of;
pub(crate) mod probe_wire;
pub(crate) mod refusal;
pub(crate) mod sse;
pub(crate) mod stdio;
mod stray;

use std::{
    sync::{
        Arc, OnceLock,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    time::Duration,
};

use tokio::time::Instant;

use crate::state::Death;
pub(crate) use crate::text::innermost;
pub(crate) use detect::name;
pub(crate) use judge::{judge, judge_handshake, judge_listing, never_ran, stream_lost};
pub(crate) use observed::Observed;
pub(crate) use origin_of::origin_of;

/// The most of a line buffer kept between lines, by the SSE parser and the stdio reader: one
/// large message (a long tool list) must not hold its size in an idle session for good.
pub(in crate::transport) const LINE_BUFFER_KEEP: usize = 64 * 1024;

/// UTF-8's byte order mark, which a server may write before its first line or event.
pub(in crate::transport) const BOM: &[u8] = "\u{feff}".as_bytes();

/// What a generation's transport has been doing: when the last message arrived, whether a write
/// is stuck, whether a call ran past its deadline since. Written by the transport wrapper
/// ([`Observed`]) and the call path; read by the probe policy.
#[derive(Debug)]
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub struct Activity {
    base: Instant,
    /// Milliseconds from `base` to the last message received; written by `Observed::receive`.
    last_rx_ms: AtomicU64,
    /// Milliseconds from `base` to the last bytes received of any kind (a chunk of a stream,
    /// an SSE comment, an answer's headers); written by the transports. It only ever puts a
    /// probe off (see `supervisor::heartbeat`), never stands in for a message.
    last_byte_ms: AtomicU64,
    /// Which requests were handed to the transport, and which it could not deliver.
    pub(crate) ledger: ledger::Ledger,
    /// Writes handed to the transport and not finished; changed only by `Observed::send`.
    pending_sends: AtomicUsize,
    /// Woken when the last pending write finishes.
    settled: tokio::sync::Notify,
    /// Told by the transport when this session's own signal became suspect (its standalone
    /// stream ended); the heartbeat of an origin-scoped session then probes for itself at once.
    own_signal: tokio::sync::Notify,
    /// The session's standalone stream is open on a shared HTTP/2 connection whose `PING`s
    /// prove it: set and cleared by the transport as the stream opens and ends.
    stream_held: AtomicBool,
    /// Milliseconds from `base` to the last finished write, or to when writes began to pend.
    send_progress_ms: AtomicU64,
    /// Milliseconds from `base` to the last call that ran past its deadline (0: none).
    overdue_ms: AtomicU64,
    /// True when a finished write means the bytes were handed to the peer (a pipe): a write
    /// that pends then means the peer stopped reading. Over HTTP a write finishes only when the
    /// server answers, so a pending one says no more than the silence itself.
    pub(crate) local_writes: bool,
    /// The `Mcp-Session-Id` the server gave the generation (2025-era Streamable HTTP only);
    /// set once by the transport, from the answer to `initialize`.
    pub(crate) session_id: std::sync::OnceLock<Box<str>>,
    /// The heartbeat's way around rmcp's session (the remote transports); set once by the
    /// attempt that built the transport.
    pub(crate) direct_probe: std::sync::OnceLock<direct::DirectProbe>,
    /// The server's authorization, when it has one; set once by the attempt. Its count of
    /// refusals tells a probe that the server answered while a token was being renewed.
    pub(crate) authorizer: std::sync::OnceLock<Arc<crate::auth::Authorizer>>,
}

impl Activity {
    /// The activity of a stdio generation (`local_writes`) or a remote one.
    #[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
    pub fn new(local_writes: bool) -> Arc<Self> {
        Arc::new(Activity {
            local_writes,
            base: Instant::now(),
            last_rx_ms: AtomicU64::new(0),
            last_byte_ms: AtomicU64::new(0),
            pending_sends: AtomicUsize::new(0),
            send_progress_ms: AtomicU64::new(0),
            overdue_ms: AtomicU64::new(0),
            ledger: ledger::Ledger::default(),
            settled: tokio::sync::Notify::new(),
            own_signal: tokio::sync::Notify::new(),
            stream_held: AtomicBool::new(false),
            session_id: std::sync::OnceLock::new(),
            direct_probe: std::sync::OnceLock::new(),
            authorizer: std::sync::OnceLock::new(),
        })
    }

    fn now_ms(&self) -> u64 {
        self.base.elapsed().as_millis() as u64
    }

    /// How many requests the server has refused for their token (a 401, or a 403 asking for
    /// scopes) so far; always 0 without authorization.
    pub(crate) fn refusals(&self) -> u64 {
        self.authorizer.get().map_or(0, |auth| auth.refusals())
    }

    /// Records that a message arrived now.
    pub(in crate::transport) fn touch(&self) {
        self.last_rx_ms.fetch_max(self.now_ms(), Ordering::Relaxed);
    }

    /// Records that bytes arrived now (not necessarily a whole message).
    pub(in crate::transport) fn bytes_arrived(&self) {
        self.last_byte_ms
            .fetch_max(self.now_ms(), Ordering::Relaxed);
    }

    /// How long since the last bytes of any kind arrived, messages included (or since the
    /// generation began).
    pub(crate) fn quiet(&self) -> Duration {
        let last = self
            .last_byte_ms
            .load(Ordering::Relaxed)
            .max(self.last_rx_ms.load(Ordering::Relaxed));
        self.base
            .elapsed()
            .saturating_sub(Duration::from_millis(last))
    }

    /// How long since the last message (or since the generation began).
    #[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
    pub fn idle(&self) -> Duration {
        let since_base = self.base.elapsed();
        since_base.saturating_sub(Duration::from_millis(
            self.last_rx_ms.load(Ordering::Relaxed),
        ))
    }

    /// How long the server itself has left us without a message: [`idle`](Self::idle), less
    /// the time spent on its authorization server (zero while a token is being fetched or
    /// renewed, at most the time since that ended). What a hedge judges an attempt by.
    pub(crate) fn unanswered(&self) -> Duration {
        let idle = self.idle();
        match self.authorizer.get().map(|auth| auth.since_exchange()) {
            None => idle,
            Some(None) => Duration::ZERO,
            Some(Some(since)) => idle.min(since),
        }
    }

    fn send_started(&self) {
        if self.pending_sends.fetch_add(1, Ordering::AcqRel) == 0 {
            self.send_progress_ms
                .store(self.now_ms(), Ordering::Release);
        }
    }

    fn send_finished(&self) {
        self.send_progress_ms
            .fetch_max(self.now_ms(), Ordering::AcqRel);
        if self.pending_sends.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.settled.notify_waiters();
        }
    }

    /// This session's own signal is suspect (its stream ended): its heartbeat probes for
    /// itself at once, whatever its origin's answers say. Kept until the heartbeat takes it.
    pub(crate) fn suspect_own_signal(&self) {
        self.own_signal.notify_one();
    }

    /// Records whether the session's standalone stream is open on a shared HTTP/2 connection
    /// kept proven by `PING`s (see [`stream_held`](Self::stream_held)).
    pub(crate) fn hold_stream(&self, held: bool) {
        self.stream_held.store(held, Ordering::Relaxed);
    }

    /// Whether the session's standalone stream is open on a shared HTTP/2 connection that
    /// `PING`s keep proven: every reopening of it checked the session (a 404 is its death),
    /// and a cut or a dead connection would have ended it. The heartbeat then checks the
    /// session itself less often ([`crate::config::HeartbeatScope`]).
    pub(crate) fn stream_held(&self) -> bool {
        self.stream_held.load(Ordering::Relaxed)
    }

    /// Resolves when the transport said this session's own signal is suspect
    /// ([`suspect_own_signal`](Self::suspect_own_signal)).
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: a signal is taken only by the future that resolves with it.
    pub(crate) fn own_signal(&self) -> tokio::sync::futures::Notified<'_> {
        self.own_signal.notified()
    }

    /// Resolves once no write is pending.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: it only waits.
    pub(crate) async fn writes_settled(&self) {
        loop {
            let notified = self.settled.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.pending_sends.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }

    /// True when a write has been pending for longer than `limit` with no write finishing
    /// meanwhile: the peer stopped reading (a full pipe, a black-holed socket).
    pub(crate) fn write_stalled(&self, limit: Duration) -> bool {
        if !self.local_writes || self.pending_sends.load(Ordering::Acquire) == 0 {
            return false;
        }
        let progress = self.send_progress_ms.load(Ordering::Acquire);
        self.now_ms().saturating_sub(progress) > limit.as_millis() as u64
    }

    /// Records that a call ran past its deadline now.
    pub(crate) fn mark_overdue(&self) {
        self.overdue_ms
            .fetch_max(self.now_ms().max(1), Ordering::Relaxed);
    }

    /// True when a call ran past its deadline and no message has arrived since.
    pub(crate) fn overdue(&self) -> bool {
        let overdue = self.overdue_ms.load(Ordering::Relaxed);
        overdue != 0 && overdue >= self.last_rx_ms.load(Ordering::Relaxed)
    }
}

/// The first fatal condition a transport observed; later ones are ignored.
pub(crate) type DeathSlot = Arc<OnceLock<Death>>;

/// How a generation's process is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// An orderly close (restart, shutdown): stdin closed, then `stdin_close_grace` to exit by
    /// itself, then SIGTERM, `term_grace`, SIGKILL.
    Graceful,
    /// The generation was judged dead (or never became one): the escalation starts after a short
    /// grace, whatever the session loop is doing — a child blocked on a full pipe never reads
    /// its stdin EOF.
    Dead,
}

/// What a generation must release when it ends, beyond the rmcp session itself.
#[derive(Debug)]
pub(crate) enum Guard {
    /// The child process (and its process group).
    Stdio(Box<stdio::ChildGuard>),
    /// Nothing beyond the session (remote transports end with their session task).
    Nothing,
}

impl Guard {
    /// The exit status (without reaping), if the process already ended or ends within `within`.
    pub(crate) async fn exit_detail(&mut self, within: Duration) -> Option<String> {
        match self {
            Guard::Stdio(child) => child.exit_detail(within).await,
            Guard::Nothing => None,
        }
    }

    /// True when there is a process to stop (and a close to confirm by its reaping).
    pub(crate) fn has_process(&self) -> bool {
        matches!(self, Guard::Stdio(_))
    }

    /// Releases everything within `limit`; for stdio, returns once the whole process group has
    /// been signalled and the leader reaped (or `limit` ran out: `reaped` is then false).
    pub(crate) async fn dispose(self, stop: Stop, limit: Duration) -> stdio::Disposed {
        match self {
            Guard::Stdio(child) => child.dispose(stop, limit).await,
            Guard::Nothing => stdio::Disposed::nothing(),
        }
    }
}
