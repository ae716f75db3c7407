//! Fault controls of a remote mock server: the `/_mock/*` routes and [`Faults`] in-process.
//!
//! # Invariants
//!
//! 1. Every stream opened before `drop_streams()` ends when it is called; streams opened after
//!    it are unaffected (each stream holds the drop token current at its start).
//! 2. `kill()` ends every stream, session and connection; `refuse` only affects new connections.
//!
//! The faults that answer requests in the server's place (status, redirect, modern-only) are in
//! [`super::inject`].

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde::Serialize;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::inject::Injections;
use super::legacy::LegacySessions;
use super::oauth::Authority;
use crate::shared::{SetTools, Shared};

/// One MCP request the server received (admin routes are not recorded).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordedRequest {
    /// The HTTP method, e.g. `"POST"`.
    pub method: String,
    /// The request path without the query, e.g. `"/mcp"`.
    pub path: String,
    /// Header names (lowercase) and values (lossy UTF-8); a repeated header keeps its last value.
    pub headers: BTreeMap<String, String>,
    /// The JSON-RPC `method` of each message in a POST's body (requests and notifications, in
    /// order); empty for other requests and for bodies that are not JSON-RPC.
    pub rpc_methods: Vec<String>,
    /// A POST's body (lossy UTF-8) when it is at most 4 KiB; empty otherwise
    /// (the benchmark replays a probe's exact bytes from it).
    pub body: String,
    /// When the request arrived, in microseconds since the Unix epoch (the benchmark lines these
    /// up with client-side times of another process on the same machine).
    pub at_us: u64,
}

/// The largest POST body a [`RecordedRequest`] keeps.
pub(crate) const RECORDED_BODY: usize = 4096;

/// What `GET /_mock/state` reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MockState {
    /// The server's boot id (`--boot-id` or random).
    pub boot_id: String,
    /// The process id serving.
    pub pid: u32,
    /// Open sessions, legacy SSE and Streamable HTTP together.
    pub sessions: usize,
    /// `tools/call` requests received so far.
    pub calls: u64,
    /// Open GET streams (legacy `GET /sse` and Streamable HTTP standalone `GET /mcp`).
    pub streams: usize,
    /// MCP requests the gate answered itself (status faults, redirects, modern-only
    /// rejections) instead of the server.
    pub faults_injected: u64,
    /// JSON-RPC requests received so far by method, counted on arrival (also those a fault
    /// answered); the same map `whoami` reports.
    pub methods: BTreeMap<String, u64>,
    /// Live `subscriptions/listen` subscriptions (registered and not ended).
    pub listens: usize,
    /// Whether Streamable HTTP runs without sessions now ([`Faults::set_stateless`]).
    pub stateless: bool,
    /// The value of `mock://counter` ([`Faults::bump_counter`], the `bump` tool).
    pub counter: u64,
    /// Live resource subscriptions: one per (initialize-era session, URI) of
    /// `resources/subscribe`, plus one per URI accepted by each running 2026-07-28
    /// `subscriptions/listen` (the same number `whoami` reports). Poll it to see a client
    /// re-subscribe after a restart.
    pub resource_subscriptions: usize,
    /// The level the last `logging/setLevel` set (`"debug"` … `"emergency"`), if any.
    pub log_level: Option<String>,
    /// Calls of `sleep`, `block` and `progress` that ended because their request was
    /// cancelled (`notifications/cancelled`, a 2026-07-28 client closing the response stream,
    /// or the session ending).
    pub cancelled: u64,
}

/// Counts one open GET stream while it lives.
pub(crate) struct StreamGuard(watch::Sender<usize>);

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// Fault injection for one running [`MockServer`](crate::MockServer); cheap to clone.
#[derive(Clone)]
pub struct Faults {
    pub(crate) state: Arc<FaultState>,
}

pub(crate) struct FaultState {
    pub(crate) shared: Arc<Shared>,
    /// Delay applied before each MCP request is handled; 0 = off.
    slow_ms: AtomicU64,
    /// Delay applied before each GET (a stream) is handled, on top of `slow_ms`; 0 = off.
    slow_streams_ms: AtomicU64,
    stale_400: AtomicBool,
    /// Absolute endpoint announced by new legacy streams instead of the relative one.
    cross_origin: Mutex<Option<String>>,
    /// Size of the oversized event; each change makes open legacy streams send one.
    pub(crate) oversized: watch::Sender<usize>,
    /// Cancelled (and replaced) by `drop_streams`; a child of `kill`.
    drop_streams: Mutex<CancellationToken>,
    refuse: AtomicBool,
    /// Streamable HTTP without sessions; set only by `MockServer::start` and `set_stateless`.
    stateless: AtomicBool,
    /// Status fault and redirect; see [`super::inject`].
    pub(crate) inject: Injections,
    /// Cancelled by `kill()`, by the in-process `crash` tool, and by shutdown.
    pub(crate) kill: CancellationToken,
    requests: Mutex<Vec<RecordedRequest>>,
    /// Open GET streams; changed only by [`StreamGuard`]s.
    streams: watch::Sender<usize>,
    pub(crate) legacy: Arc<LegacySessions>,
    pub(crate) streamable: Arc<LocalSessionManager>,
    /// The authorization server in OAuth mode; set only by `MockServer::start`.
    pub(crate) oauth: Option<Arc<Authority>>,
    /// How often open legacy SSE streams carry a keep-alive comment.
    pub(crate) legacy_keep_alive: Duration,
}

impl FaultState {
    pub(crate) fn new(
        shared: Arc<Shared>,
        kill: CancellationToken,
        streamable: Arc<LocalSessionManager>,
        stateless: bool,
        oauth: Option<Arc<Authority>>,
        legacy_keep_alive: Duration,
    ) -> Self {
        Self {
            legacy_keep_alive,
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

    pub(crate) fn slow_streams(&self) -> Duration {
        Duration::from_millis(self.slow_streams_ms.load(Ordering::SeqCst))
    }

    pub(crate) fn stale_400(&self) -> bool {
        self.stale_400.load(Ordering::SeqCst)
    }

    pub(crate) fn refusing(&self) -> bool {
        self.refuse.load(Ordering::SeqCst)
    }

    pub(crate) fn stateless(&self) -> bool {
        self.stateless.load(Ordering::SeqCst)
    }

    pub(crate) fn cross_origin(&self) -> Option<String> {
        lock(&self.cross_origin).clone()
    }

    /// The token that ends streams opened now.
    pub(crate) fn stream_token(&self) -> CancellationToken {
        lock(&self.drop_streams).clone()
    }

    pub(crate) fn stream_opened(&self) -> StreamGuard {
        self.streams.send_modify(|n| *n += 1);
        StreamGuard(self.streams.clone())
    }

    pub(crate) fn record(&self, request: RecordedRequest) {
        lock(&self.requests).push(request);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Faults {
    /// From now on no MCP request is answered and nothing is sent on open streams.
    pub fn hang(&self) {
        self.state.shared.set_hang(true);
    }

    /// Ends a hang: held requests and stream events go out.
    pub fn unhang(&self) {
        self.state.shared.set_hang(false);
    }

    /// Ends every open SSE stream (legacy and Streamable HTTP) and forgets every session.
    pub async fn drop_streams(&self) {
        let next = self.state.kill.child_token();
        let old = std::mem::replace(&mut *lock(&self.state.drop_streams), next);
        old.cancel();
        self.expire_sessions().await;
    }

    /// Forgets every session: legacy POSTs and Streamable HTTP requests then get 404.
    pub async fn expire_sessions(&self) {
        self.state.legacy.forget_all();
        self.state.streamable.sessions.write().await.clear();
    }

    /// While on, a Streamable HTTP request with an unknown `Mcp-Session-Id` gets 400, not 404.
    pub fn set_stale_400(&self, on: bool) {
        self.state.stale_400.store(on, Ordering::SeqCst);
    }

    /// Delays every MCP request by `delay` (zero turns it off).
    pub fn set_slow(&self, delay: Duration) {
        let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        self.state.slow_ms.store(ms, Ordering::SeqCst);
    }

    /// Delays every GET (the Streamable HTTP standalone stream, the legacy SSE stream) by
    /// `delay` before the server sees it (zero turns it off): the stream opens late, and what
    /// the server sends outside a request's own stream meanwhile has nowhere to go.
    pub fn set_slow_streams(&self, delay: Duration) {
        let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        self.state.slow_streams_ms.store(ms, Ordering::SeqCst);
    }

    /// New legacy SSE streams announce `endpoint` (absolute) instead of `/message?…`; `None` resets.
    pub fn set_cross_origin(&self, endpoint: Option<String>) {
        *lock(&self.state.cross_origin) = endpoint;
    }

    /// Every open legacy SSE stream, and every new one, sends one `message` event of `bytes`
    /// bytes (0 turns it off for new streams).
    pub fn set_oversized(&self, bytes: usize) {
        self.state.oversized.send_replace(bytes);
    }

    /// Same as the `set_tools` tool; returns the number of tools afterwards.
    pub async fn set_tools(&self, change: SetTools) -> usize {
        self.state.shared.set_tools(&change).await
    }

    /// Adds one to `mock://counter` and sends `notifications/resources/updated` for it to every
    /// subscriber (initialize-era `resources/subscribe` sessions and 2026-07-28 listen
    /// subscriptions whose filter names it); returns the new value. Same as the `bump` tool.
    ///
    /// # Cancel safety
    /// The counter is bumped before the first await; dropping the future may leave some
    /// subscribers un-notified.
    pub async fn bump_counter(&self) -> u64 {
        self.state.shared.bump_counter().await
    }

    /// Every `tools/list` page from now on carries this `ttlMs` (a 2026-07-28 cache hint: list
    /// again after it); `None` leaves it out, as by default.
    pub fn set_list_ttl(&self, ttl: Option<Duration>) {
        self.state.shared.set_list_ttl(ttl);
    }

    /// Every MCP request received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.state.requests).clone()
    }

    /// Forgets the recorded requests.
    pub fn clear_requests(&self) {
        lock(&self.state.requests).clear();
    }

    /// Ends every live `subscriptions/listen` subscription. Graceful: each gets its final
    /// `SubscriptionsListenResult`. Not graceful: the HTTP response of each listen request
    /// that arrived so far ends without it (the SSE stream is cut; nothing else is written).
    pub fn end_listens(&self, graceful: bool) {
        self.state.shared.end_listens(graceful);
    }

    /// Switches Streamable HTTP between sessions (off, the default) and none (on), for
    /// requests arriving from now on; see [`MockOptions::stateless`](crate::MockOptions).
    /// Sessions opened before stay known to the session manager but are not consulted while
    /// on. Legacy SSE is not affected.
    pub fn set_stateless(&self, on: bool) {
        self.state.stateless.store(on, Ordering::SeqCst);
    }

    /// Boot id, pid, open sessions, calls served, answers injected, requests by method, live
    /// subscriptions, the stateless switch, the counter, live resource subscriptions, the last
    /// log level set and cancelled calls.
    pub async fn state(&self) -> MockState {
        let streamable = self.state.streamable.sessions.read().await.len();
        MockState {
            boot_id: self.state.shared.boot_id.clone(),
            pid: self.state.shared.pid,
            sessions: self.state.legacy.open_count() + streamable,
            calls: self.state.shared.calls(),
            streams: *self.state.streams.borrow(),
            faults_injected: self.faults_injected(),
            methods: self.state.shared.methods(),
            listens: self.state.shared.listens.count(),
            stateless: self.state.stateless(),
            counter: self.state.shared.counter(),
            resource_subscriptions: self.state.shared.resource_subscriptions(),
            log_level: self.state.shared.log_level.name(),
            cancelled: self.state.shared.cancelled(),
        }
    }

    /// Resolves once at least `count` GET streams are open. A server notification reaches a
    /// Streamable HTTP client only through its standalone stream, so tests that trigger
    /// `list_changed` wait for it first.
    ///
    /// # Cancel safety
    /// Cancel safe; it only observes a counter.
    pub async fn wait_streams(&self, count: usize) {
        let mut streams = self.state.streams.subscribe();
        // The sender lives in `self.state`, so this cannot fail while we borrow it.
        let _ = streams.wait_for(|open| *open >= count).await;
    }

    /// Dies like a crash: stops accepting and aborts every connection and session. The port is
    /// free again once the server task has noticed (a `MockServer::start` on it waits for that).
    pub fn kill(&self) {
        self.state.kill.cancel();
    }

    /// While on, accepted connections are closed at once.
    pub fn refuse(&self, on: bool) {
        self.state.refuse.store(on, Ordering::SeqCst);
    }
}
