//! The live status page: `/status` (HTML, readable without JavaScript), `/status.json` (the
//! same facts as JSON) and `/status/events` (that JSON again on every change, as Server-Sent
//! Events, for the page's script).
//!
//! # Invariants
//!
//! 1. Every path here passes the guards `/mcp` passes: the gateway is not stopping (503), the
//!    same tokens (401), the same allowed `Host` and `Origin` (403).
//! 2. Nothing a host sent as a credential reaches a page: callers are named by their token's
//!    name (or `token #N`, a JWT's identity), never by the token; sessions are counted, never
//!    named by id.
//! 3. Text from a server (tool names, death details) is bounded where it is kept
//!    (`track.rs`, `calls.rs`) and escaped where it is written (`page.rs`; JSON by serde).
//! 4. Bounded: at most [`feed::MAX_WATCHERS`] event streams at once, each sent at most one
//!    snapshot per [`feed::MIN_GAP`].

mod doorway;
mod feed;
mod page;
mod snapshot;
mod tables;
mod track;

pub(in crate::http) use doorway::Doorway;

use std::{
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
    time::SystemTime,
};

use axum::{
    Router,
    extract::{Request, State},
    http::StatusCode,
    middleware::{self, Next},
    response::Response,
    routing::get,
};
use tokio::{sync::Notify, task::JoinHandle};
use tokio_util::sync::CancellationToken;

use super::{admit::Admission, guard::Gate, hub::Hub, refusal::refuse};

/// What the fleet's store did here: take-overs, records shared, claims that failed.
#[derive(Debug, Default)]
pub(in crate::http) struct StoreCounts {
    pub(in crate::http) takeovers: AtomicU64,
    pub(in crate::http) shared: AtomicU64,
    pub(in crate::http) claims_failed: AtomicU64,
    /// Whether the last claim got an answer from the store (0 none yet, 1 yes, 2 no).
    pub(in crate::http) last_claim: AtomicU64,
}

impl StoreCounts {
    pub(in crate::http) fn claimed(&self, answered: bool) {
        if !answered {
            self.claims_failed.fetch_add(1, Ordering::Relaxed);
        }
        let last = if answered { 1 } else { 2 };
        self.last_claim.store(last, Ordering::Relaxed);
    }
}

/// What the status paths read.
#[derive(Debug)]
pub(in crate::http) struct Board {
    hub: Arc<Hub>,
    gate: Arc<Gate>,
    admission: Admission,
    doorway: Doorway,
    /// This replica's name on the page (its listening address).
    replica: String,
    store: Arc<StoreCounts>,
    host_store: Arc<dyn crate::state::HostStore>,
    tracks: Vec<(String, track::Shared)>,
    /// Told after every upstream change; the feed also looks every [`feed::MIN_GAP`].
    changed: Arc<Notify>,
    watchers: Arc<tokio::sync::Semaphore>,
    stop: CancellationToken,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

/// What a [`Board`] is made of.
#[derive(Debug)]
pub(in crate::http) struct Parts {
    pub(in crate::http) hub: Arc<Hub>,
    pub(in crate::http) gate: Arc<Gate>,
    pub(in crate::http) admission: Admission,
    pub(in crate::http) doorway: Doorway,
    pub(in crate::http) replica: String,
    pub(in crate::http) store: Arc<StoreCounts>,
    pub(in crate::http) host_store: Arc<dyn crate::state::HostStore>,
}

impl Board {
    /// Starts one tracker per shared upstream; they end with [`close`](Self::close).
    pub(in crate::http) fn start(parts: Parts) -> Arc<Self> {
        let (changed, stop) = (Arc::new(Notify::new()), CancellationToken::new());
        let mut tracks = Vec::new();
        let mut tasks = Vec::new();
        for upstream in &parts.hub.common.list {
            let shared = track::Shared::default();
            let task = track::spawn(
                upstream.clone(),
                shared.clone(),
                changed.clone(),
                stop.clone(),
            );
            tracks.push((upstream.name().to_owned(), shared));
            tasks.push(task);
        }
        Arc::new(Board {
            hub: parts.hub,
            gate: parts.gate,
            admission: parts.admission,
            doorway: parts.doorway,
            replica: parts.replica,
            store: parts.store,
            host_store: parts.host_store,
            tracks,
            changed,
            watchers: Arc::new(tokio::sync::Semaphore::new(feed::MAX_WATCHERS)),
            stop,
            tasks: Mutex::new(tasks),
        })
    }

    /// Ends the trackers and the event streams, and waits for the trackers.
    pub(in crate::http) async fn close(&self) {
        self.stop.cancel();
        let tasks = std::mem::take(&mut *self.tasks.lock().unwrap_or_else(PoisonError::into_inner));
        for task in tasks {
            let _ = task.await;
        }
    }

    /// The facts, as `/status.json` answers them.
    pub(in crate::http) fn snapshot(&self) -> serde_json::Value {
        snapshot::take(self, SystemTime::now())
    }
}

/// The status routes, behind their guard (invariant 1).
pub(in crate::http) fn routes(board: Arc<Board>) -> Router {
    Router::new()
        .route("/status", get(page::page))
        .route("/status.json", get(page::json))
        .route("/status/events", get(feed::events))
        .layer(middleware::from_fn_with_state(board.clone(), guard))
        .with_state(board)
}

/// Invariant 1: what `/mcp`'s guard and rmcp's checks refuse, refused the same way.
async fn guard(State(board): State<Arc<Board>>, request: Request, next: Next) -> Response {
    if board.gate.stopping.is_cancelled() {
        return refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            "the gateway is shutting down",
        );
    }
    if let Err(header) = board.doorway.check(request.headers()) {
        let message = format!("Forbidden: {header} header is not allowed");
        return refuse(StatusCode::FORBIDDEN, &message);
    }
    let authorization = request.headers().get(axum::http::header::AUTHORIZATION);
    let authorization = authorization.map(|value| value.as_bytes());
    if let Err(refused) = board.gate.doors.identify(authorization).await {
        return super::guard::unauthorized(&board.gate.metadata, refused);
    }
    next.run(request).await
}
