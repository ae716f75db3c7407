//! One live generation: its session, its watchers, and how it reports its own death.
//!
//! # Invariants
//!
//! 1. Every watcher of a generation (the monitor, the heartbeat, the call path) reports death
//!    through [`Live::report_death`], which fails in-flight calls at once (the `dead` token) and
//!    asks the [`RetryGuard`](super::retry_guard::RetryGuard) for the single permit.
//! 2. The monitor task owns the rmcp session and the transport guard. It ends only after the
//!    session loop has ended and the guard is disposed (for stdio: the child group reaped), so
//!    awaiting it *is* the close barrier.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU32, Ordering},
    },
    time::Duration,
};

use rmcp::{
    Peer, RoleClient, ServiceError,
    model::{ClientRequest, DiscoverRequest, DiscoverRequestParams, PingRequest, ServerResult},
    service::RunningService,
};
use tokio::{sync::mpsc, task::JoinHandle};
use tokio_util::sync::CancellationToken;

use super::{actor::Msg, handler::GenerationHandler, retry_guard::RetryGuard};
use crate::{
    state::{Cause, Death, Generation},
    transport::{Activity, DeathSlot, Guard},
};

/// What the rest of the crate may use of the current generation.
#[derive(Debug)]
pub(crate) struct Live {
    pub(crate) server: Arc<str>,
    pub(crate) generation: Generation,
    pub(crate) peer: Peer<RoleClient>,
    pub(crate) activity: Arc<Activity>,
    /// Cancelled once this generation's death has been reported by anyone.
    pub(crate) dead: CancellationToken,
    /// Consecutive unanswered probes (heartbeat and pre-call probes alike).
    pub(crate) misses: AtomicU32,
    /// Set when the server answered `ping` with method-not-found: probe with `server/discover`.
    discover: AtomicBool,
    guard: Arc<RetryGuard>,
    tx: mpsc::UnboundedSender<Msg>,
}

impl Live {
    /// Reports this generation dead. Returns true if this report started the recovery.
    pub(crate) fn report_death(&self, death: Death) -> bool {
        self.dead.cancel();
        let Some(permit) = self.guard.try_begin(self.generation) else {
            tracing::debug!(server = %self.server, generation = self.generation, cause = %death.cause, "death already reported");
            return false;
        };
        tracing::debug!(server = %self.server, generation = self.generation, cause = %death.cause, "death reported");
        self.tx.send(Msg::Died { death, permit }).is_ok()
    }

    /// Sends one probe with `timeout`.
    pub(crate) async fn probe(&self, timeout: Duration) -> ProbeOutcome {
        let request = if self.discover.load(Ordering::Relaxed) {
            ClientRequest::DiscoverRequest(DiscoverRequest::new(DiscoverRequestParams::default()))
        } else {
            ClientRequest::PingRequest(PingRequest::default())
        };
        match tokio::time::timeout(timeout, self.peer.send_request(request)).await {
            Err(_) => ProbeOutcome::Missed(format!("probe unanswered after {timeout:?}")),
            Ok(Ok(ServerResult::EmptyResult(_) | ServerResult::DiscoverResult(_))) => {
                ProbeOutcome::Answered
            }
            Ok(Ok(_)) => ProbeOutcome::Answered,
            Ok(Err(ServiceError::McpError(e)))
                if e.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND
                    && !self.discover.swap(true, Ordering::Relaxed) =>
            {
                tracing::info!(server = %self.server, generation = self.generation, "server has no ping; probing with server/discover");
                ProbeOutcome::Answered
            }
            // Any JSON-RPC answer proves the server is alive.
            Ok(Err(ServiceError::McpError(_))) => ProbeOutcome::Answered,
            Ok(Err(e)) => match classify(&e, &self.peer) {
                Some(death) => ProbeOutcome::Dead(death),
                None if self.peer.is_transport_closed() => ProbeOutcome::Closed,
                None => ProbeOutcome::Missed(e.to_string()),
            },
        }
    }
}

/// The result of one probe.
#[derive(Debug)]
pub(crate) enum ProbeOutcome {
    Answered,
    /// No answer in time (or an error that proves nothing by itself).
    Missed(String),
    /// The transport proved the generation dead.
    Dead(Death),
    /// The session loop already ended; the monitor reports the precise cause.
    Closed,
}

/// Maps a request error to a death, or `None` if it says nothing about the connection.
///
/// A send error is classified by its type, not its text: Streamable HTTP's
/// `StreamableHttpError::SessionExpired` (HTTP 404 on a live session, or 400 where
/// `treat_400_as_expired`) and legacy SSE's 404/410 are [`Cause::SessionExpired`]; anything else
/// (connection refused, reset, a 5xx) is [`Cause::TransportError`].
///
/// `TransportClosed` on a transport whose session loop already ended is left to the monitor,
/// which knows the precise cause (an exit status, an SSE stream end).
pub(crate) fn classify(error: &ServiceError, peer: &Peer<RoleClient>) -> Option<Death> {
    use crate::transport::{http::HttpError, sse::SendError};
    match error {
        ServiceError::TransportSend(e) => {
            let source = &*e.error;
            let expired = match (
                source.downcast_ref::<HttpError>(),
                source.downcast_ref::<SendError>(),
            ) {
                (Some(http), _) => matches!(http, HttpError::SessionExpired),
                (None, Some(sse)) => sse.cause() == Some(Cause::SessionExpired),
                (None, None) => false,
            };
            let cause = if expired {
                Cause::SessionExpired
            } else {
                Cause::TransportError
            };
            // The display shows `source` itself; its own sources (e.g. "connection refused"
            // under a reqwest error) are appended.
            let mut detail = e.to_string();
            let mut next = source.source();
            while let Some(inner) = next {
                detail.push_str(&format!(": {inner}"));
                next = inner.source();
            }
            Some(Death::new(cause, detail))
        }
        ServiceError::TransportClosed if peer.is_transport_closed() => None,
        ServiceError::TransportClosed => {
            Some(Death::new(Cause::TransportError, "transport closed"))
        }
        _ => None,
    }
}

/// A generation owned by the supervisor.
pub(crate) struct Running {
    pub(crate) live: Arc<Live>,
    session_ct: CancellationToken,
    monitor: JoinHandle<()>,
    heartbeat: Option<JoinHandle<()>>,
}

/// What an attempt hands over once the session is up.
pub(crate) struct Session {
    pub(crate) running: RunningService<RoleClient, GenerationHandler>,
    pub(crate) guard: Guard,
    pub(crate) slot: DeathSlot,
    pub(crate) activity: Arc<Activity>,
    pub(crate) session_ct: CancellationToken,
}

impl Running {
    /// Starts watching `session` as generation `generation`.
    pub(crate) fn start(
        server: Arc<str>,
        generation: Generation,
        session: Session,
        guard: Arc<RetryGuard>,
        tx: mpsc::UnboundedSender<Msg>,
        heartbeat: Option<super::heartbeat::Heartbeat>,
    ) -> Running {
        let live = Arc::new(Live {
            server,
            generation,
            peer: session.running.peer().clone(),
            activity: session.activity.clone(),
            dead: CancellationToken::new(),
            misses: AtomicU32::new(0),
            discover: AtomicBool::new(false),
            guard,
            tx,
        });
        let session_ct = session.session_ct.clone();
        let monitor = tokio::spawn(monitor(session, live.clone()));
        let heartbeat = heartbeat.map(|hb| tokio::spawn(hb.run(live.clone())));
        Running {
            live,
            session_ct,
            monitor,
            heartbeat,
        }
    }

    /// Closes the session and waits until it is confirmed closed (child reaped), at most `limit`.
    /// Returns false if that could not be confirmed in time.
    pub(crate) async fn close(self, limit: Duration) -> bool {
        self.live.dead.cancel();
        self.session_ct.cancel();
        if let Some(heartbeat) = self.heartbeat {
            heartbeat.abort();
            let _ = heartbeat.await;
        }
        let mut monitor = self.monitor;
        match tokio::time::timeout(limit, &mut monitor).await {
            Ok(_) => true,
            Err(_) => {
                monitor.abort();
                false
            }
        }
    }
}

async fn monitor(session: Session, live: Arc<Live>) {
    let Session {
        running,
        mut guard,
        slot,
        session_ct,
        ..
    } = session;
    let quit = running.waiting().await;
    if !session_ct.is_cancelled() {
        let exit = guard.exit_detail(Duration::from_millis(100)).await;
        let death = match (slot.get(), exit) {
            (Some(death), _) => death.clone(),
            (None, Some(status)) => Death::new(Cause::ProcessExited, status),
            (None, None) => Death::new(Cause::StreamClosed, format!("session ended ({quit:?})")),
        };
        live.report_death(death);
    }
    guard.dispose().await;
}
