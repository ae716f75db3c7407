//! The supervisor task: one per server, the only owner of that server's mutable state.
//!
//! An event loop in the house style: [`Step`] is the event enum, [`Actor::next_step`] is the
//! `select!` that produces events, and [`Actor::run`] hands each to its own method. The methods
//! live by concern: `attempt` (connecting), `hedge` (a stuck remote attempt), `current` (becoming
//! the current generation), `outage` (deaths,
//! failures, backoff, the budget, permanent refusals), `sync` (tool re-listing) and `lifecycle`
//! (closing, restart, shutdown). Over 300 lines: the loop and the state it owns are one concept,
//! and this file is the loop; every step it dispatches to lives in a child.
//!
//! # Invariants
//!
//! 1. One live generation: an attempt starts only after the previous generation's close barrier
//!    ([`Running::close`]) confirmed it; if it could not within `close_timeout`, the server fails
//!    closed instead of risking two server processes. Remote attempts may be hedged (two at
//!    once, the older abandoned), stdio attempts never: never two children.
//! 2. Fence: the retry guard's fence moves to a new generation *before* any of its watchers
//!    start, and the previous recovery's permit is dropped in between, so no death report of the
//!    new generation can find the fence elsewhere or the permit taken. List-changed requests and
//!    sync results from any generation but the current one are dropped; the registry refuses
//!    older generations as well.
//! 3. One sync at a time per server; a request that arrives during a sync runs once after it,
//!    even when the sync task panicked.
//! 4. After `shutdown` starts nothing new is scheduled; every task this actor spawned (attempts,
//!    sync, monitors, heartbeats, abandoned sessions still cleaning up) has been awaited (or, past
//!    `close_timeout`, aborted) when `shutdown` returns.

mod attempt;
mod current;
mod hedge;
mod lifecycle;
mod outage;
mod sync;
pub(crate) mod transition;

use std::{pin::Pin, sync::Arc};

use tokio::{
    sync::mpsc,
    task::JoinHandle,
    time::{Instant, Sleep},
};

use crate::{
    config::ServerConfig,
    registry::ToolRegistry,
    state::{ConnectionState, Generation},
};
use crate::{
    supervisor::actor::transition::{Note, Transition},
    supervisor::board::Board,
    supervisor::mailbox::{Depth, Msg},
    supervisor::reconnect::{
        backoff::Budget,
        retry_guard::{RetryGuard, RetryPermit},
    },
    supervisor::session::{connect, generation::Running, listing::Listing, relay::Relay},
};

enum Step {
    Msg(Msg),
    AttemptDone(attempt::Done),
    SyncDone(Generation, Result<Listing, crate::state::Death>),
    Refresh,
    BackoffElapsed,
    Hedge,
    Stable,
}

/// The outage in progress: from a lost generation or a failed first attempt until a generation
/// is ready again.
struct Outage {
    started: Instant,
    /// Attempts started in this outage (hedged ones included); the next is `tries + 1`. An
    /// outage opened by a lost generation starts at 0, one opened by the first attempt's
    /// failure at 1.
    tries: u32,
}

impl Outage {
    fn new(tries: u32) -> Self {
        Outage {
            started: Instant::now(),
            tries,
        }
    }
}

/// What the actor shares with the handle and with its generations.
pub(in crate::supervisor) struct Wiring {
    pub(in crate::supervisor) server: Arc<str>,
    /// The status: written here only.
    pub(in crate::supervisor) board: Arc<Board>,
    /// The actor's own mailbox, for the watchers of its generations.
    pub(in crate::supervisor) tx: mpsc::UnboundedSender<Msg>,
    /// Progress routes and resource subscriptions, shared with every generation.
    pub(in crate::supervisor) relay: Arc<Relay>,
    /// The mailbox's peak depth: noted here, read by the handle.
    pub(in crate::supervisor) depth: Arc<Depth>,
}

pub(in crate::supervisor) struct Actor {
    server: Arc<str>,
    board: Arc<Board>,
    tx: mpsc::UnboundedSender<Msg>,
    relay: Arc<Relay>,
    /// The single-retrier guard of this server's generations.
    guard: Arc<RetryGuard>,
    config: Arc<ServerConfig>,
    context: connect::ConnectContext,
    registry: ToolRegistry,
    rx: mpsc::UnboundedReceiver<Msg>,
    /// How deep `rx` was at most; noted by `next_step` only.
    depth: Arc<Depth>,
    /// The number the next attempt gets; only `begin_attempt` increments it.
    next_generation: Generation,
    /// The last generation that became current (none before any); set by `become_current`.
    last_current: Option<Generation>,
    /// The ready generation, if any; set by `become_current`, taken by death, restart, shutdown.
    running: Option<Running>,
    /// True once `running` stayed ready for the stability window.
    stable: bool,
    /// The permit of the recovery in progress; dropped once a new generation is current.
    permit: Option<RetryPermit>,
    budget: Budget,
    /// Set from the first failure or loss until a generation is ready again.
    outage: Option<Outage>,
    /// The attempts in flight (one; two while a remote attempt is hedged).
    attempts: attempt::Attempts,
    /// The wait before the next attempt: its backoff, cut short when the server's origin,
    /// seen refusing connections, accepts one again ([`crate::supervisor::reconnect::origin`]).
    backoff: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    /// The `host:port` watched while the server is down; `None` for stdio.
    origin: Option<String>,
    /// Fires when the current remote attempt should be hedged (after its turn in the origin's
    /// attempt budget).
    hedge: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    /// Fires when the current generation's tool list reached its `ttlMs`.
    refresh: Option<Pin<Box<Sleep>>>,
    stability: Option<Pin<Box<Sleep>>>,
    sync: sync::SyncState,
    /// True once this supervisor published a tool set (the first publish is always announced).
    published: bool,
    /// Closed generations' monitors and abandoned attempts still finishing rmcp's cleanup.
    lingering: Vec<JoinHandle<()>>,
    /// Set when a close could not be confirmed (the server failed closed); `restart()` then waits
    /// for the lingering closes before it starts anything.
    unconfirmed: bool,
    /// Set once by shutdown.
    stopping: bool,
}

impl Actor {
    pub(in crate::supervisor) fn new(
        wiring: Wiring,
        config: Arc<ServerConfig>,
        context: connect::ConnectContext,
        registry: ToolRegistry,
        rx: mpsc::UnboundedReceiver<Msg>,
    ) -> Self {
        let budget = Budget::new(&config.reconnect);
        let origin = match &config.transport {
            crate::config::TransportConfig::Remote(remote) => {
                crate::transport::origin_of(&remote.url)
            }
            crate::config::TransportConfig::Stdio(_) => None,
        };
        let attempts = attempt::Attempts::new(&config);
        let Wiring {
            server,
            board,
            tx,
            relay,
            depth,
        } = wiring;
        Actor {
            server,
            board,
            tx,
            relay,
            guard: Arc::new(RetryGuard::default()),
            config,
            context,
            registry,
            rx,
            depth,
            next_generation: Generation::FIRST,
            last_current: None,
            running: None,
            stable: false,
            permit: None,
            budget,
            outage: None,
            attempts,
            backoff: None,
            origin,
            hedge: None,
            refresh: None,
            stability: None,
            sync: sync::SyncState::default(),
            published: false,
            lingering: Vec::new(),
            unconfirmed: false,
            stopping: false,
        }
    }

    pub(in crate::supervisor) async fn run(mut self) {
        // The metrics' series of this server exist from its first status on.
        let first = self.board.status();
        crate::telemetry::transition(&self.server, &first.state, &first.state, None);
        self.begin_first();
        // Handlers that await are boxed: inline, they sized every idle actor (3,160 B, not 1,976).
        loop {
            match self.next_step().await {
                Step::Msg(Msg::Died(died)) => {
                    let super::mailbox::Died { death, permit } = *died;
                    Box::pin(self.on_died(death, permit)).await
                }
                Step::Msg(Msg::ListChanged(change)) => {
                    change.queued.take();
                    self.on_list_changed(change.generation);
                }
                Step::Msg(Msg::Restart { done }) => {
                    Box::pin(self.on_restart()).await;
                    let _ = done.send(());
                }
                Step::Msg(Msg::Shutdown) => {
                    Box::pin(self.on_shutdown()).await;
                    return;
                }
                Step::AttemptDone(done) => Box::pin(self.on_attempt_done(done)).await,
                Step::SyncDone(generation, result) => self.on_sync_done(generation, result),
                Step::BackoffElapsed => self.begin_attempt(),
                Step::Hedge => self.on_hedge(),
                Step::Refresh => {
                    if let Some(generation) = self.running.as_ref().map(|r| r.live.generation) {
                        self.on_list_changed(generation);
                    }
                }
                Step::Stable => self.on_stable(),
            }
            self.lingering.retain(|task| !task.is_finished());
        }
    }

    async fn next_step(&mut self) -> Step {
        // Messages first: a death report queued before an attempt finished holds the retry
        // permit, and must release it before the new generation's watchers can report.
        tokio::select! {
            biased;
            msg = self.rx.recv() => {
                self.depth.took(self.rx.len());
                Step::Msg(msg.unwrap_or(Msg::Shutdown))
            }
            done = self.attempts.done() => Step::AttemptDone(done),
            (generation, result) = self.sync.done() => Step::SyncDone(generation, result),
            () = elapsed(&mut self.backoff) => Step::BackoffElapsed,
            () = elapsed(&mut self.hedge) => Step::Hedge,
            () = elapsed(&mut self.stability) => Step::Stable,
            () = elapsed(&mut self.refresh) => Step::Refresh,
        }
    }

    fn server(&self) -> &Arc<str> {
        &self.server
    }

    /// Changes the status: one [`Transition`] for the log, the metrics and the board (whose
    /// event follows the watch). A change to what the board already shows is no change.
    fn transition(
        &self,
        state: ConnectionState,
        generation: impl Into<Option<Generation>>,
        note: Note,
    ) {
        let transition = Transition {
            server: self.server.clone(),
            state,
            generation: generation.into(),
            note,
        };
        let live = transition.live().cloned();
        if !self
            .board
            .would_change(&transition.state, transition.generation, live.as_ref())
        {
            return;
        }
        transition.log();
        transition.record(&self.board.status().state);
        self.board
            .publish(transition.state, transition.generation, live);
    }
}

async fn elapsed<F: Future<Output = ()> + ?Sized>(slot: &mut Option<Pin<Box<F>>>) {
    let Some(sleep) = slot else {
        return std::future::pending().await;
    };
    sleep.await;
    *slot = None;
}
