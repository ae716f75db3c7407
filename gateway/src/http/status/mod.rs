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
mod reloads;
mod snapshot;
mod tables;
mod track;

pub(in crate::http) use doorway::Doorway;

use std::{
    sync::{Arc, Mutex, PoisonError},
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

use super::{admit::Admission, guard::Gate, hub::Hub, refusal::refuse, restore::StoreCounts};

/// What the status paths read.
#[derive(Debug)]
pub(in crate::http) struct Board {
    hub: Arc<Hub>,
    gate: Arc<Gate>,
    admission: Admission,
    doorway: Doorway,
    /// This replica's name on the page (its listening address).
    replica: String,
    /// The host-facing front serving `/mcp` (`rmcp` or `own`).
    front: &'static str,
    store: Arc<StoreCounts>,
    host_store: Arc<dyn crate::state::HostStore>,
    /// One per upstream serving, by name; a reload's replacement keeps its name's history.
    tracks: Mutex<Vec<Tracked>>,
    /// Told after every upstream change; the feed also looks every [`feed::MIN_GAP`].
    changed: Arc<Notify>,
    watchers: Arc<tokio::sync::Semaphore>,
    stop: CancellationToken,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    /// The reloads' outcomes.
    pub(in crate::http) reloads: Mutex<reloads::Reloads>,
}

/// One upstream's track and the upstream its tracker reads.
#[derive(Debug)]
struct Tracked {
    upstream: Arc<crate::upstream::Upstream>,
    track: track::Shared,
}

/// What a [`Board`] is made of.
#[derive(Debug)]
pub(in crate::http) struct Parts {
    pub(in crate::http) hub: Arc<Hub>,
    pub(in crate::http) gate: Arc<Gate>,
    pub(in crate::http) admission: Admission,
    pub(in crate::http) doorway: Doorway,
    pub(in crate::http) replica: String,
    pub(in crate::http) front: &'static str,
    pub(in crate::http) store: Arc<StoreCounts>,
    pub(in crate::http) host_store: Arc<dyn crate::state::HostStore>,
}

impl Board {
    /// Starts one tracker per shared upstream; they end with [`close`](Self::close).
    pub(in crate::http) fn start(parts: Parts) -> Arc<Self> {
        let (changed, stop) = (Arc::new(Notify::new()), CancellationToken::new());
        let board = Arc::new(Board {
            hub: parts.hub,
            gate: parts.gate,
            admission: parts.admission,
            doorway: parts.doorway,
            replica: parts.replica,
            front: parts.front,
            store: parts.store,
            host_store: parts.host_store,
            tracks: Mutex::new(Vec::new()),
            changed,
            watchers: Arc::new(tokio::sync::Semaphore::new(feed::MAX_WATCHERS)),
            stop,
            tasks: Mutex::new(Vec::new()),
            reloads: Mutex::new(reloads::Reloads::default()),
        });
        board.follow();
        board
    }

    /// Tracks the upstreams serving now: a new one gets a track, one a reload replaced keeps
    /// its name's track under a new tracker, one removed loses its track.
    pub(in crate::http) fn follow(&self) {
        let serving = self.hub.common.serving();
        let mut tracks = self.tracks.lock().unwrap_or_else(PoisonError::into_inner);
        tracks.retain(|t| serving.iter().any(|u| u.name() == t.upstream.name()));
        let mut started = Vec::new();
        for upstream in serving {
            let known = tracks
                .iter_mut()
                .find(|t| t.upstream.name() == upstream.name());
            let track = match known {
                Some(known) if Arc::ptr_eq(&known.upstream, &upstream) => continue,
                Some(known) => {
                    known.upstream = upstream.clone();
                    track::lock(&known.track).ready_since = None;
                    known.track.clone()
                }
                None => {
                    let track = track::Shared::default();
                    let upstream = upstream.clone();
                    tracks.push(Tracked {
                        upstream,
                        track: track.clone(),
                    });
                    track
                }
            };
            let (changed, stop) = (self.changed.clone(), self.stop.clone());
            started.push(track::spawn(upstream, track, changed, stop));
        }
        drop(tracks);
        let mut tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        tasks.retain(|task| !task.is_finished());
        tasks.extend(started);
    }

    /// Every track, with its upstream, in the order of the upstreams.
    fn tracked(&self) -> Vec<(Arc<crate::upstream::Upstream>, track::Shared)> {
        self.follow();
        let tracks = self.tracks.lock().unwrap_or_else(PoisonError::into_inner);
        tracks
            .iter()
            .map(|t| (t.upstream.clone(), t.track.clone()))
            .collect()
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
    if board.gate.drain.over.is_cancelled() {
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
