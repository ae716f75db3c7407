//! The own front's sessions: an entry per host session, and the one sweeper that ends the idle
//! ones.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, MutexGuard, PoisonError,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use bytes::Bytes;
use rmcp::{
    Peer, RoleServer,
    model::{ProgressToken, RequestId},
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::ProxyHandler;

/// The shortest pause between two sweeps (a short idle bound, in tests).
const SWEEP_AT_LEAST: Duration = Duration::from_millis(50);

/// One host session.
pub(super) struct Session {
    pub(super) handler: ProxyHandler,
    /// What rmcp's dispatch reads the host's revision from; its service has ended, so nothing
    /// sent through it reaches anyone.
    pub(super) peer: Peer<RoleServer>,
    /// Milliseconds since the table's start at the last request's end.
    touched: AtomicU64,
    /// Requests in flight and the standalone stream: a busy session is not idle.
    busy: AtomicUsize,
    /// Whether the standalone stream is open (or waiting for the drainer).
    pub(super) streaming: AtomicBool,
    /// Held by whatever drains the session's outbox: the standalone stream, or a call that
    /// asked for progress while no stream was open.
    pub(super) drainer: Arc<tokio::sync::Mutex<()>>,
    /// The requests in flight that a `notifications/cancelled` may end.
    running: Mutex<HashMap<RequestId, CancellationToken>>,
    /// Where the progress of a request that asked for it goes (its own response), whoever
    /// drains the outbox.
    routes: Mutex<HashMap<ProgressToken, mpsc::Sender<Bytes>>>,
    /// Cancelled when the session ends: its stream and its requests end with it.
    pub(super) ended: CancellationToken,
    /// The server's requests to the host, and the host's requests they may ride (`asks.rs`).
    pub(super) asks: Mutex<super::questions::Asks>,
    /// The request streams' events, for a resumption (`replay.rs`).
    pub(super) logs: Mutex<super::replay::Logs>,
    /// The standalone stream's events.
    pub(super) standalone: Arc<super::replay::Log>,
}

/// Keeps a session busy while it lives.
pub(super) struct Busy(Arc<Session>, Option<RequestId>, Instant);

impl Drop for Busy {
    fn drop(&mut self) {
        if let Some(id) = self.1.take() {
            lock(&self.0.running).remove(&id);
        }
        self.0.touched.store(millis(self.2), Ordering::Relaxed);
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Session {
    /// A session of `handler`'s host.
    pub(super) fn new(handler: ProxyHandler, peer: Peer<RoleServer>) -> Arc<Self> {
        Arc::new(Self {
            handler,
            peer,
            touched: AtomicU64::new(0),
            busy: AtomicUsize::new(0),
            streaming: AtomicBool::new(false),
            drainer: Arc::default(),
            running: Mutex::default(),
            routes: Mutex::default(),
            ended: CancellationToken::new(),
            asks: Mutex::default(),
            logs: Mutex::default(),
            standalone: super::replay::Log::new(
                super::replay::STANDALONE,
                crate::http::lost::process().to_owned(),
            ),
        })
    }

    /// Marks the session busy (a request `id` in flight, cancellable with `cancel`, or a
    /// stream) until the guard drops; it was last used then.
    pub(super) fn busy(
        self: &Arc<Self>,
        table: &Table,
        request: Option<(RequestId, CancellationToken)>,
    ) -> Busy {
        self.busy.fetch_add(1, Ordering::AcqRel);
        let id = request.map(|(id, cancel)| {
            lock(&self.running).insert(id.clone(), cancel);
            id
        });
        Busy(self.clone(), id, table.start)
    }

    /// The host cancelled request `id`.
    pub(super) fn cancel(&self, id: &RequestId) {
        if let Some(cancel) = lock(&self.running).get(id) {
            cancel.cancel();
        }
    }

    /// The progress of `token` goes to `events` while the guard lives.
    pub(super) fn route(
        self: &Arc<Self>,
        token: ProgressToken,
        events: mpsc::Sender<Bytes>,
    ) -> Route {
        lock(&self.routes).insert(token.clone(), events);
        Route(self.clone(), token)
    }

    /// Where the progress of `token` goes, if a request waits for it.
    pub(super) fn routed(&self, token: &ProgressToken) -> Option<mpsc::Sender<Bytes>> {
        lock(&self.routes).get(token).cloned()
    }

    /// Its state, in a line (the fuzz checks compare it before and after).
    #[cfg(feature = "fuzzing")]
    pub(super) fn describe(&self) -> String {
        format!(
            "ended:{} busy:{} streaming:{} running:{} routes:{} queued:{}",
            self.ended.is_cancelled(),
            self.busy.load(Ordering::Acquire),
            self.streaming.load(Ordering::Acquire),
            lock(&self.running).len(),
            lock(&self.routes).len(),
            self.handler.shared.link.outbox.mark(),
        )
    }

    pub(super) fn end(&self) {
        self.ended.cancel();
        for cancel in lock(&self.running).values() {
            cancel.cancel();
        }
    }
}

/// A request's progress route, while it lives.
pub(super) struct Route(Arc<Session>, ProgressToken);

impl Drop for Route {
    fn drop(&mut self) {
        lock(&self.0.routes).remove(&self.1);
    }
}

/// The sessions by id.
pub(super) struct Table {
    sessions: Mutex<HashMap<Arc<str>, Arc<Session>>>,
    start: Instant,
    idle: Duration,
}

impl Table {
    pub(super) fn new(idle: Duration) -> Self {
        Self {
            sessions: Mutex::default(),
            start: Instant::now(),
            idle,
        }
    }

    fn now(&self) -> u64 {
        millis(self.start)
    }

    /// How often the idle sessions are looked for.
    pub(super) fn sweep_every(&self) -> Duration {
        (self.idle / 4).max(SWEEP_AT_LEAST)
    }

    pub(super) fn get(&self, id: &str) -> Option<Arc<Session>> {
        lock(&self.sessions).get(id).cloned()
    }

    pub(super) fn insert(&self, id: &str, session: Arc<Session>) {
        session.touched.store(self.now(), Ordering::Relaxed);
        lock(&self.sessions).insert(Arc::from(id), session);
    }

    pub(super) fn remove(&self, id: &str) -> Option<Arc<Session>> {
        lock(&self.sessions).remove(id)
    }

    pub(super) fn ids(&self) -> Vec<Arc<str>> {
        lock(&self.sessions).keys().cloned().collect()
    }

    /// The sessions with nothing in flight and no request for longer than the idle bound.
    pub(super) fn idle(&self) -> Vec<Arc<str>> {
        let now = self.now();
        let bound = u64::try_from(self.idle.as_millis()).unwrap_or(u64::MAX);
        lock(&self.sessions)
            .iter()
            .filter(|(_, s)| s.busy.load(Ordering::Acquire) == 0)
            .filter(|(_, s)| now.saturating_sub(s.touched.load(Ordering::Relaxed)) >= bound)
            .map(|(id, _)| id.clone())
            .collect()
    }
}

/// Milliseconds since `start`.
fn millis(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
