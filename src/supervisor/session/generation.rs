//! One running generation: its watchers, and the close barrier.
//!
//! # Invariants
//!
//! 1. The monitor task owns the client session ([`Served`]: rmcp's, or the lean link) and the
//!    transport guard. When the session ends by itself it reports the death (with the precise
//!    cause from the transport's slot or the exit status) and stops what is left.
//! 2. A close never waits on the rmcp session loop before stopping the process: the kill
//!    escalation starts at once (after the grace of the [`Stop`] mode), so a session wedged on a
//!    full pipe cannot stall it. The barrier is confirmed by the reap (stdio) — or, for remote
//!    transports, which own no process, by the session loop ending (orderly close) or at once
//!    (a generation judged dead).
//! 3. The monitor outlives the barrier only to let rmcp's cleanup finish (bounded by
//!    [`SESSION_LINGER`]); its handle goes back to the supervisor, which awaits it at shutdown.

use std::{sync::Arc, time::Duration};

use rmcp::{RoleClient, service::RunningService};
use tokio::{
    sync::{mpsc, oneshot},
    task::JoinHandle,
};
use tokio_util::sync::CancellationToken;

use super::{handler::GenerationHandler, link::Link, live::Live};
use crate::{
    state::{Cause, Death, Generation},
    transport::{Activity, DeathSlot, Guard, Stop},
};
use crate::{supervisor::mailbox::Msg, supervisor::reconnect::retry_guard::RetryGuard};

/// How long a monitor waits for rmcp's own cleanup after the barrier (rmcp bounds it: a 2 s
/// drain, then for Streamable HTTP a DELETE of at most 5 s).
const SESSION_LINGER: Duration = Duration::from_secs(10);
/// How long the close of a dead remote generation waits for its writes in flight to finish.
const WRITES_SETTLE: Duration = Duration::from_millis(500);
/// How long an orderly close waits for the listener to cancel its listen request.
const LISTEN_END: Duration = Duration::from_millis(250);
/// How long an orderly close waits for the cancellations of abandoned calls to be written to a
/// child's stdin.
const CANCELS_OUT: Duration = Duration::from_millis(500);

/// A generation's client session: rmcp's, or the lean link of a Streamable HTTP session of
/// either era ([`crate::transport::http::link`]).
pub(in crate::supervisor) enum Served {
    Rmcp(RunningService<RoleClient, GenerationHandler>),
    Lean(Arc<crate::transport::http::link::Link>),
}

impl Served {
    /// The session as the supervisor uses it.
    pub(in crate::supervisor) fn link(&self) -> Link {
        match self {
            Served::Rmcp(running) => Link::Rmcp(running.peer().clone()),
            Served::Lean(link) => Link::Lean(link.clone()),
        }
    }

    /// Resolves once the session ended by itself, or was ended through `session_ct`, and its
    /// cleanup finished; says how it ended.
    pub(in crate::supervisor) async fn waiting(self, session_ct: CancellationToken) -> String {
        match self {
            Served::Rmcp(running) => format!("{:?}", running.waiting().await),
            Served::Lean(link) => {
                let why = tokio::select! {
                    () = link.ended() => "the transport stopped",
                    () = session_ct.cancelled() => "closed",
                };
                // Boxed: the close (a DELETE through the HTTP/2 set: 8.9 KiB of future) is
                // made only at the end, not held beside the wait for the session's life.
                Box::pin(link.close()).await;
                why.to_owned()
            }
        }
    }
}

/// What an attempt hands over once the session is up.
pub(in crate::supervisor) struct Session {
    pub(in crate::supervisor) running: Served,
    pub(in crate::supervisor) guard: Guard,
    pub(in crate::supervisor) slot: DeathSlot,
    pub(in crate::supervisor) activity: Arc<Activity>,
    pub(in crate::supervisor) session_ct: CancellationToken,
}

/// A generation owned by the supervisor.
pub(in crate::supervisor) struct Running {
    pub(in crate::supervisor) live: Arc<Live>,
    /// Tells the monitor to close; taken by `close`.
    stop: oneshot::Sender<Stop>,
    /// Resolves once the barrier holds (see the invariants).
    closed: oneshot::Receiver<()>,
    has_process: bool,
    monitor: JoinHandle<()>,
    heartbeat: Option<JoinHandle<()>>,
    /// The listen stream of a 2026-07-28 generation, or the resource subscriptions of a 2025
    /// one (see [`super::listen`]).
    listener: Option<JoinHandle<()>>,
}

/// The result of [`Running::close`].
pub(in crate::supervisor) struct Closed {
    /// False when a process could not be confirmed gone within the limit.
    pub(in crate::supervisor) confirmed: bool,
    /// The monitor, still finishing rmcp's cleanup; the supervisor owns it from here.
    pub(in crate::supervisor) monitor: JoinHandle<()>,
}

impl Running {
    /// Starts watching `session` as `live`'s generation. The caller has already moved the fence
    /// to this generation, so a report from any watcher started here finds its permit.
    /// `close_limit` bounds stopping the process (the close barrier's own bound).
    pub(in crate::supervisor) fn start(
        live: Arc<Live>,
        session: Session,
        heartbeat: Option<super::heartbeat::Heartbeat>,
        listen: super::listen::Listener,
        close_limit: Duration,
    ) -> Running {
        let (stop, stop_rx) = oneshot::channel();
        let (closed_tx, closed) = oneshot::channel();
        let has_process = session.guard.has_process();
        let watch = Monitor {
            live: live.clone(),
            stop: stop_rx,
            closed: closed_tx,
            close_limit,
        };
        let monitor = tokio::spawn(watch.run(session));
        let heartbeat = heartbeat.map(|hb| tokio::spawn(hb.run(live.clone())));
        let listener = listen
            .needed(&live)
            .then(|| tokio::spawn(super::listen::run(listen, live.clone())));
        Running {
            live,
            stop,
            closed,
            has_process,
            monitor,
            heartbeat,
            listener,
        }
    }

    /// Closes the generation and waits for the barrier, at most `limit`.
    pub(in crate::supervisor) async fn close(mut self, stop: Stop, limit: Duration) -> Closed {
        self.live.dead.cancel();
        // An orderly close lets the listener cancel a 2026-07-28 listen first: a server waits
        // for its open requests before it exits on stdin's end (rmcp's servers for 5 s), which
        // would cost the whole stdin grace.
        if stop == Stop::Graceful
            && let Some(mut listener) = self.listener.take()
            && tokio::time::timeout(LISTEN_END, &mut listener)
                .await
                .is_err()
        {
            self.listener = Some(listener);
        }
        // Likewise for a child's calls abandoned just before (the command line's `call` on
        // SIGINT): told of none, it would wait for them after its stdin ends. Not over HTTP,
        // where each cancellation is a POST of its own that a hung server would hold.
        if stop == Stop::Graceful && self.live.activity.local_writes {
            self.live.cancels.close();
            let _ = tokio::time::timeout(CANCELS_OUT, self.live.cancels.wait()).await;
        }
        let _ = self.stop.send(stop);
        for watcher in [self.heartbeat.take(), self.listener.take()]
            .into_iter()
            .flatten()
        {
            watcher.abort();
            let _ = watcher.await;
        }
        let confirmed = match tokio::time::timeout(limit, &mut self.closed).await {
            Ok(Ok(())) => true,
            // The monitor ended without confirming: it panicked, and `kill_on_drop` did not wait.
            Ok(Err(_)) => !self.has_process,
            // A remote generation owns no process that could outlive it.
            Err(_) => !self.has_process,
        };
        Closed {
            confirmed,
            monitor: self.monitor,
        }
    }
}

/// Builds the [`Live`] of a new generation.
#[expect(
    clippy::too_many_arguments,
    reason = "one generation's parts, each named at the one call site"
)]
pub(in crate::supervisor) fn live(
    server: Arc<str>,
    generation: Generation,
    session: &Session,
    protocol: rmcp::model::ProtocolVersion,
    guard: Arc<RetryGuard>,
    tx: mpsc::UnboundedSender<Msg>,
    transport: &'static str,
    probes: Option<super::live::ProbeRules>,
) -> Arc<Live> {
    Arc::new(Live::new(
        server,
        generation,
        session.running.link(),
        protocol,
        session.activity.clone(),
        guard,
        tx,
        transport,
        probes,
    ))
}

/// The monitor task of one generation (see the module invariants).
struct Monitor {
    live: Arc<Live>,
    stop: oneshot::Receiver<Stop>,
    /// Sent once the barrier holds; never sent if the child could not be reaped.
    closed: oneshot::Sender<()>,
    close_limit: Duration,
}

impl Monitor {
    async fn run(self, session: Session) {
        let Session {
            running,
            guard,
            slot,
            session_ct,
            activity,
        } = session;
        let Monitor {
            live,
            stop,
            closed,
            close_limit,
        } = self;
        let mut guard = guard;
        let has_process = guard.has_process();
        let mut waiting = Box::pin(running.waiting(session_ct.clone()));
        let requested = tokio::select! {
            quit = &mut waiting => {
                let exit = guard.exit_detail(Duration::from_millis(100)).await;
                let death = match (slot.get(), exit) {
                    (Some(death), _) => death.clone(),
                    (None, Some(status)) => Death::new(Cause::ProcessExited, status),
                    (None, None) => Death::new(Cause::StreamClosed, format!("session ended ({quit})")),
                };
                live.report_death(death);
                let disposed = guard.dispose(Stop::Dead, close_limit).await;
                if disposed.reaped {
                    let _ = closed.send(());
                }
                disposed.finish().await;
                return;
            }
            stop = stop => stop.unwrap_or(Stop::Dead),
        };
        if !has_process && requested == Stop::Dead {
            // Let the writes in flight finish first (a POST to a dead server is refused at
            // once): their outcome tells their callers whether the request left, and so whether
            // it may go to the next generation (see `transport::ledger`).
            let _ = tokio::time::timeout(WRITES_SETTLE, activity.writes_settled()).await;
        }
        session_ct.cancel();
        if has_process {
            let disposed = guard.dispose(requested, close_limit).await;
            if disposed.reaped {
                let _ = closed.send(());
            }
            disposed.finish().await;
            linger(waiting).await;
        } else if requested == Stop::Dead {
            let _ = closed.send(());
            linger(waiting).await;
        } else {
            linger(waiting).await;
            let _ = closed.send(());
        }
    }
}

async fn linger<F: Future>(waiting: F) {
    if tokio::time::timeout(SESSION_LINGER, waiting).await.is_err() {
        tracing::warn!("session cleanup did not finish within {SESSION_LINGER:?}; abandoning it");
    }
}
