//! The whole state of one remote mock server: what its sessions share ([`Shared`]), its
//! transports' sessions, the faults it applies and what it records. Everything else in
//! `remote/` reads and changes it through here; it imports nothing from them but the types it
//! holds ([`Injections`], [`LegacySessions`], [`Authority`], [`RecordedRequest`]).
//!
//! # Invariants
//!
//! 1. Every stream opened before [`ServerState::drop_streams`] ends when it is called; streams
//!    opened after it are unaffected (each stream holds the drop token current at its start).
//! 2. Cancelling `kill` ends every stream, session and connection; `refuse` only affects new
//!    connections.
//! 3. `streams` counts the [`StreamGuard`]s alive, and nothing else changes it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::inject::Injections;
use super::legacy::sessions::LegacySessions;
use super::oauth::Authority;
use super::report::RecordedRequest;
use super::wire::Wire;
use crate::shared::Shared;

/// Counts one open GET stream while it lives.
pub(crate) struct StreamGuard(watch::Sender<usize>);

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// One remote server's state; shared by its routes, its accept loop and its [`Faults`]
/// handles (`Arc`).
///
/// [`Faults`]: crate::Faults
pub(crate) struct ServerState {
    pub(crate) shared: Arc<Shared>,
    /// Delay applied before each MCP request is handled; 0 = off. Set by `set_slow` only.
    slow_ms: AtomicU64,
    /// Delay applied before each GET (a stream) is handled, on top of `slow_ms`; 0 = off.
    slow_streams_ms: AtomicU64,
    /// Set by `set_stale_400` only.
    stale_400: AtomicBool,
    /// Absolute endpoint announced by new legacy streams instead of the relative one.
    cross_origin: Mutex<Option<String>>,
    /// Size of the oversized event; each change makes open legacy streams send one.
    pub(crate) oversized: watch::Sender<usize>,
    /// Cancelled (and replaced) by `drop_streams`; a child of `kill`.
    drop_streams: Mutex<CancellationToken>,
    /// Set by `refuse` only.
    refuse: AtomicBool,
    /// Streamable HTTP without sessions; set only by `MockServer::start` and `set_stateless`.
    stateless: AtomicBool,
    /// Status fault and redirect; see [`super::inject`].
    pub(crate) inject: Injections,
    /// Cancelled by `kill()`, by the in-process `crash` tool, and by shutdown.
    pub(crate) kill: CancellationToken,
    /// Appended to by the gate only (`record`); cleared by `clear_requests`.
    requests: Mutex<Vec<RecordedRequest>>,
    /// Open GET streams; changed only by [`StreamGuard`]s.
    streams: watch::Sender<usize>,
    pub(crate) legacy: Arc<LegacySessions>,
    pub(crate) streamable: Arc<LocalSessionManager>,
    /// The authorization server in OAuth mode; set only by `MockServer::start`.
    pub(crate) oauth: Option<Arc<Authority>>,
    /// How often open legacy SSE streams carry a keep-alive comment.
    pub(crate) legacy_keep_alive: Duration,
    /// The connections' protocol, counters and faults; see [`super::wire`].
    pub(crate) wire: Arc<Wire>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn millis(delay: Duration) -> u64 {
    u64::try_from(delay.as_millis()).unwrap_or(u64::MAX)
}

impl ServerState {
    pub(crate) fn new(
        shared: Arc<Shared>,
        kill: CancellationToken,
        streamable: Arc<LocalSessionManager>,
        stateless: bool,
        oauth: Option<Arc<Authority>>,
        legacy_keep_alive: Duration,
        wire: Wire,
    ) -> Self {
        Self {
            legacy_keep_alive,
            wire: Arc::new(wire),
            stateless: AtomicBool::new(stateless),
            shared: shared.clone(),
            slow_ms: AtomicU64::new(0),
            slow_streams_ms: AtomicU64::new(0),
            stale_400: AtomicBool::new(false),
            cross_origin: Mutex::new(None),
            oversized: watch::Sender::new(0),
            drop_streams: Mutex::new(kill.child_token()),
            refuse: AtomicBool::new(false),
            inject: Injections::default(),
            legacy: Arc::new(LegacySessions::new(shared, kill.child_token())),
            kill,
            requests: Mutex::new(Vec::new()),
            streams: watch::Sender::new(0),
            streamable,
            oauth,
        }
    }

    pub(crate) fn slow(&self) -> Duration {
        Duration::from_millis(self.slow_ms.load(Ordering::SeqCst))
    }

    pub(crate) fn set_slow(&self, delay: Duration) {
        self.slow_ms.store(millis(delay), Ordering::SeqCst);
    }

    pub(crate) fn slow_streams(&self) -> Duration {
        Duration::from_millis(self.slow_streams_ms.load(Ordering::SeqCst))
    }

    pub(crate) fn set_slow_streams(&self, delay: Duration) {
        self.slow_streams_ms.store(millis(delay), Ordering::SeqCst);
    }

    pub(crate) fn stale_400(&self) -> bool {
        self.stale_400.load(Ordering::SeqCst)
    }

    pub(crate) fn set_stale_400(&self, on: bool) {
        self.stale_400.store(on, Ordering::SeqCst);
    }

    pub(crate) fn refusing(&self) -> bool {
        self.refuse.load(Ordering::SeqCst)
    }

    pub(crate) fn refuse(&self, on: bool) {
        self.refuse.store(on, Ordering::SeqCst);
    }

    pub(crate) fn stateless(&self) -> bool {
        self.stateless.load(Ordering::SeqCst)
    }

    pub(crate) fn set_stateless(&self, on: bool) {
        self.stateless.store(on, Ordering::SeqCst);
    }

    pub(crate) fn cross_origin(&self) -> Option<String> {
        lock(&self.cross_origin).clone()
    }

    pub(crate) fn set_cross_origin(&self, endpoint: Option<String>) {
        *lock(&self.cross_origin) = endpoint;
    }

    /// The token that ends streams opened now.
    pub(crate) fn stream_token(&self) -> CancellationToken {
        lock(&self.drop_streams).clone()
    }

    /// Ends every stream opened so far (invariant 1); the sessions are left to the caller.
    pub(crate) fn drop_streams(&self) {
        let next = self.kill.child_token();
        let old = std::mem::replace(&mut *lock(&self.drop_streams), next);
        old.cancel();
    }

    pub(crate) fn stream_opened(&self) -> StreamGuard {
        self.streams.send_modify(|n| *n += 1);
        StreamGuard(self.streams.clone())
    }

    /// GET streams open now.
    pub(crate) fn open_streams(&self) -> usize {
        *self.streams.borrow()
    }

    /// Resolves once at least `count` GET streams are open.
    ///
    /// # Cancel safety
    /// Cancel safe; it only observes a counter.
    pub(crate) async fn wait_streams(&self, count: usize) {
        let mut streams = self.streams.subscribe();
        // The sender lives in `self`, so this cannot fail while we borrow it.
        let _ = streams.wait_for(|open| *open >= count).await;
    }

    pub(crate) fn record(&self, request: RecordedRequest) {
        lock(&self.requests).push(request);
    }

    pub(crate) fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.requests).clone()
    }

    pub(crate) fn clear_requests(&self) {
        lock(&self.requests).clear();
    }
}
