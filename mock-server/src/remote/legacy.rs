//! Legacy HTTP+SSE transport (spec 2024-11-05), hand-written because rmcp has none.
//!
//! `GET /sse` opens a session: the stream's first event `endpoint` names
//! `/message?sessionId=<id>`, then every server message follows as a `message` event. The client
//! POSTs its messages there; each is answered `202 Accepted` and handed to the session's rmcp
//! server, whose replies travel on the stream.
//!
//! # Invariants
//!
//! 1. A known session whose server has ended, or whose stream was dropped, answers 410; a
//!    forgotten (or never issued) id answers 404.
//! 2. Every session task is tracked and ends when its token (a child of the kill token) is
//!    cancelled.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::channel::mpsc;
use futures::{SinkExt, Stream, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::serve_server_with_ct;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::faults::FaultState;
use crate::handler::MockHandler;
use crate::shared::Shared;

const CHANNEL: usize = 64;

struct Session {
    to_server: mpsc::Sender<ClientJsonRpcMessage>,
    /// Set when the session's server ended or its stream was dropped.
    closed: Arc<AtomicBool>,
    ct: CancellationToken,
}

/// The legacy sessions of one server. Only the routes below and the fault controls touch it.
pub(crate) struct LegacySessions {
    shared: Arc<Shared>,
    map: Mutex<HashMap<String, Session>>,
    tasks: TaskTracker,
    /// Parent of every session token.
    root: CancellationToken,
}

/// Cancels the session when the SSE body is dropped (client gone or stream ended).
struct StreamGuard(CancellationToken);

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

impl LegacySessions {
    pub(crate) fn new(shared: Arc<Shared>, root: CancellationToken) -> Self {
        Self {
            shared,
            map: Mutex::new(HashMap::new()),
            tasks: TaskTracker::new(),
            root,
        }
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts a session's server; returns its id and the messages it sends.
    fn open(&self) -> (String, mpsc::Receiver<ServerJsonRpcMessage>, StreamGuard) {
        let id = crate::random_hex(16);
        let (to_server, from_client) = mpsc::channel(CHANNEL);
        let (to_client, from_server) = mpsc::channel(CHANNEL);
        let ct = self.root.child_token();
        let closed = Arc::new(AtomicBool::new(false));
        let handler = MockHandler::new(self.shared.clone());
        let (task_ct, task_closed) = (ct.clone(), closed.clone());
        self.tasks.spawn(async move {
            match serve_server_with_ct(handler, (to_client, from_client), task_ct).await {
                Ok(running) => {
                    let _ = running.waiting().await;
                }
                Err(error) => tracing::debug!(%error, "legacy session ended before initialize"),
            }
            task_closed.store(true, Ordering::SeqCst);
        });
        let guard = StreamGuard(ct.clone());
        let session = Session {
            to_server,
            closed,
            ct,
        };
        self.map().insert(id.clone(), session);
        (id, from_server, guard)
    }

    async fn post(&self, id: &str, message: ClientJsonRpcMessage) -> StatusCode {
        let sender = match self.map().get(id) {
            None => return StatusCode::NOT_FOUND,
            Some(s) if s.closed.load(Ordering::SeqCst) || s.ct.is_cancelled() => {
                return StatusCode::GONE;
            }
            Some(s) => s.to_server.clone(),
        };
        let mut sender = sender;
        match sender.send(message).await {
            Ok(()) => StatusCode::ACCEPTED,
            Err(_) => StatusCode::GONE,
        }
    }

    /// Forgets (and ends) every session.
    pub(crate) fn forget_all(&self) {
        for (_, session) in self.map().drain() {
            session.ct.cancel();
        }
    }

    pub(crate) fn open_count(&self) -> usize {
        self.map()
            .values()
            .filter(|s| !s.closed.load(Ordering::SeqCst) && !s.ct.is_cancelled())
            .count()
    }

    /// Ends every session and waits for their tasks.
    pub(crate) async fn shutdown(&self) {
        self.root.cancel();
        self.map().clear();
        self.tasks.close();
        self.tasks.wait().await;
    }
}

/// `GET /sse`.
pub(crate) async fn open_stream(
    State(faults): State<Arc<FaultState>>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let (id, from_server, guard) = faults.legacy.open();
    let keep_alive = faults.legacy_keep_alive;
    let endpoint = faults
        .cross_origin()
        .unwrap_or_else(|| format!("/message?sessionId={id}"));
    let mut oversized = faults.oversized.subscribe();
    let first_oversized = *oversized.borrow_and_update();
    let head = futures::stream::iter(
        std::iter::once(Event::default().event("endpoint").data(endpoint))
            .chain((first_oversized > 0).then(|| oversized_event(first_oversized))),
    );
    let state = (from_server, oversized, guard);
    let tail = futures::stream::unfold(state, |(mut from_server, mut oversized, guard)| async {
        let event = next_event(&mut from_server, &mut oversized).await?;
        Some((event, (from_server, oversized, guard)))
    });
    Sse::new(head.chain(tail).map(Ok)).keep_alive(KeepAlive::new().interval(keep_alive))
}

/// The next event of a stream, or `None` once the session's server is gone.
async fn next_event(
    from_server: &mut mpsc::Receiver<ServerJsonRpcMessage>,
    oversized: &mut watch::Receiver<usize>,
) -> Option<Event> {
    loop {
        tokio::select! {
            message = from_server.next() => {
                let json = serde_json::to_string(&message?).ok()?;
                return Some(Event::default().event("message").data(json));
            }
            Ok(()) = oversized.changed() => {
                let bytes = *oversized.borrow_and_update();
                if bytes > 0 {
                    return Some(oversized_event(bytes));
                }
            }
        }
    }
}

fn oversized_event(bytes: usize) -> Event {
    Event::default().event("message").data("x".repeat(bytes))
}

/// `POST /message?sessionId=<id>`.
pub(crate) async fn post_message(
    State(faults): State<Arc<FaultState>>,
    Query(query): Query<HashMap<String, String>>,
    body: Bytes,
) -> StatusCode {
    let Some(id) = query.get("sessionId") else {
        return StatusCode::BAD_REQUEST;
    };
    let Ok(message) = serde_json::from_slice::<ClientJsonRpcMessage>(&body) else {
        return StatusCode::BAD_REQUEST;
    };
    faults.legacy.post(id, message).await
}
