//! The legacy sessions of one server: each a task running the mock's handler behind a pair of
//! channels, found by its id. The routes ([`super`]) open them and post to them; the fault
//! controls forget them; shutdown ends them.
//!
//! # Invariants
//!
//! 1. A known session whose server has ended, or whose stream was dropped, answers 410; a
//!    forgotten (or never issued) id answers 404.
//! 2. Every session task is tracked and ends when its token (a child of the kill token) is
//!    cancelled.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::http::StatusCode;
use futures::SinkExt;
use futures::channel::mpsc;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::serve_server_with_ct;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::handler::MockHandler;
use crate::random::random_hex;
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
pub(super) struct StreamGuard(CancellationToken);

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

    fn map(&self) -> MutexGuard<'_, HashMap<String, Session>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts a session's server; returns its id and the messages it sends.
    pub(super) fn open(&self) -> (String, mpsc::Receiver<ServerJsonRpcMessage>, StreamGuard) {
        let id = random_hex(16);
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

    pub(super) async fn post(&self, id: &str, message: ClientJsonRpcMessage) -> StatusCode {
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
