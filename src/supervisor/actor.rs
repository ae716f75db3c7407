//! The supervisor task: one per server, the only owner of that server's mutable state.
//!
//! An event loop in the house style: [`Step`] is the event enum, [`Actor::next_step`] is the
//! `select!` that produces events, and [`Actor::run`] hands each to its own method.
//!
//! # Invariants
//!
//! 1. One live generation: an attempt starts only after the previous generation's close barrier
//!    ([`Running::close`]) returned true; if it did not within `close_timeout`, the server fails
//!    closed instead of risking two server processes.
//! 2. Fence: list-changed requests and sync results from any generation but the current one are
//!    dropped; the registry refuses older generations as well.
//! 3. One sync at a time per server; a request that arrives during a sync runs once after it.
//! 4. After `shutdown` starts nothing new is scheduled; every task this actor spawned (attempt,
//!    sync, monitor, heartbeat) has been awaited when `shutdown` returns.

use std::{pin::Pin, sync::Arc};

use rmcp::model::Tool;
use tokio::{
    sync::{mpsc, oneshot},
    task::JoinHandle,
    time::{Instant, Sleep},
};
use tokio_util::sync::CancellationToken;

use super::{
    Link,
    backoff::Budget,
    connect::{self, Connected},
    generation::Running,
    heartbeat::Heartbeat,
    retry_guard::RetryPermit,
};
use crate::{
    config::ServerConfig,
    registry::ToolRegistry,
    state::{Cause, ConnectionState, Death, Event, Generation, Reason},
};

/// Messages from handles, watchers and rmcp handlers to the supervisor task.
#[derive(Debug)]
pub(crate) enum Msg {
    /// A generation died; the sender won the retry permit.
    Died { death: Death, permit: RetryPermit },
    /// `notifications/tools/list_changed` (or a host request) for `generation`.
    ListChanged { generation: Generation },
    /// Close what runs, refill the budget, connect again.
    Restart { done: oneshot::Sender<()> },
    /// Stop everything.
    Shutdown { done: Option<oneshot::Sender<()>> },
}

enum Step {
    Msg(Msg),
    AttemptDone(Generation, Result<Box<Connected>, Death>),
    SyncDone(Generation, Result<Vec<Tool>, String>),
    BackoffElapsed,
    Stable,
}

struct AttemptTask {
    generation: Generation,
    ct: CancellationToken,
    task: JoinHandle<Result<Box<Connected>, Death>>,
}

struct Outage {
    started: Instant,
}

type SyncTask = JoinHandle<(Generation, Result<Vec<Tool>, String>)>;

pub(crate) struct Actor {
    link: Arc<Link>,
    config: Arc<ServerConfig>,
    context: connect::ConnectContext,
    registry: ToolRegistry,
    rx: mpsc::UnboundedReceiver<Msg>,
    /// The number the next attempt gets; only `begin_attempt` increments it.
    next_generation: Generation,
    /// The ready generation, if any; set by `on_attempt_done`, taken by death, restart, shutdown.
    running: Option<Running>,
    /// True once `running` stayed ready for the stability window.
    stable: bool,
    /// The permit of the recovery in progress; dropped once a new generation is current.
    permit: Option<RetryPermit>,
    budget: Budget,
    /// Set from the first failure or loss until a generation is ready again.
    outage: Option<Outage>,
    attempt: Option<AttemptTask>,
    backoff: Option<Pin<Box<Sleep>>>,
    stability: Option<Pin<Box<Sleep>>>,
    sync: Option<SyncTask>,
    /// A list-changed arrived while a sync (or the attempt's own first listing) ran.
    sync_again: bool,
    /// Set once by shutdown.
    stopping: bool,
}

impl Actor {
    pub(crate) fn new(
        link: Arc<Link>,
        config: Arc<ServerConfig>,
        context: connect::ConnectContext,
        registry: ToolRegistry,
        rx: mpsc::UnboundedReceiver<Msg>,
    ) -> Self {
        let budget = Budget::new(&config.reconnect);
        Actor {
            link,
            config,
            context,
            registry,
            rx,
            next_generation: 1,
            running: None,
            stable: false,
            permit: None,
            budget,
            outage: None,
            attempt: None,
            backoff: None,
            stability: None,
            sync: None,
            sync_again: false,
            stopping: false,
        }
    }

    pub(crate) async fn run(mut self) {
        self.begin_attempt();
        loop {
            match self.next_step().await {
                Step::Msg(Msg::Died { death, permit }) => self.on_died(death, permit).await,
                Step::Msg(Msg::ListChanged { generation }) => self.on_list_changed(generation),
                Step::Msg(Msg::Restart { done }) => {
                    self.on_restart().await;
                    let _ = done.send(());
                }
                Step::Msg(Msg::Shutdown { done }) => {
                    self.on_shutdown().await;
                    if let Some(done) = done {
                        let _ = done.send(());
                    }
                    return;
                }
                Step::AttemptDone(generation, result) => {
                    self.on_attempt_done(generation, result).await
                }
                Step::SyncDone(generation, result) => self.on_sync_done(generation, result),
                Step::BackoffElapsed => self.begin_attempt(),
                Step::Stable => self.on_stable(),
            }
        }
    }

    async fn next_step(&mut self) -> Step {
        tokio::select! {
            msg = self.rx.recv() => Step::Msg(msg.unwrap_or(Msg::Shutdown { done: None })),
            (generation, result) = attempt_done(&mut self.attempt) => Step::AttemptDone(generation, result),
            (generation, result) = sync_done(&mut self.sync) => Step::SyncDone(generation, result),
            () = elapsed(&mut self.backoff) => Step::BackoffElapsed,
            () = elapsed(&mut self.stability) => Step::Stable,
        }
    }

    fn server(&self) -> &Arc<str> {
        &self.link.server
    }

    /// Publishes a state: the event first, then the watch, so whoever saw the new state in the
    /// watch and subscribes to events afterwards does not receive that same change again.
    fn set_state(&self, state: ConnectionState, generation: Generation) {
        let _ = self.link.events.send(Event::State {
            server: self.server().clone(),
            state: state.clone(),
            generation,
        });
        self.link.state.send_replace(state);
    }

    fn begin_attempt(&mut self) {
        let generation = self.next_generation;
        self.next_generation += 1;
        self.sync_again = false;
        if self.outage.is_none() {
            self.set_state(
                ConnectionState::Connecting {
                    attempt: self.budget.next_attempt(),
                },
                generation,
            );
        }
        tracing::debug!(server = %self.server(), generation, attempt = self.budget.next_attempt(), "connecting");
        let ct = CancellationToken::new();
        let attempt = connect::attempt(
            self.config.clone(),
            self.context.clone(),
            generation,
            self.link.tx.clone(),
            ct.clone(),
        );
        let task = tokio::spawn(async move { attempt.await.map(Box::new) });
        self.attempt = Some(AttemptTask {
            generation,
            ct,
            task,
        });
    }

    async fn on_attempt_done(
        &mut self,
        generation: Generation,
        result: Result<Box<Connected>, Death>,
    ) {
        let connected = match result {
            Ok(connected) => connected,
            Err(death) => return self.on_failure(Reason::ConnectionFailed, death, true),
        };
        let tools = connected.tools;
        match self.registry.publish(self.server(), generation, tools) {
            Ok(change) => {
                let _ = self.link.events.send(Event::Tools(change));
            }
            Err(e) => {
                tracing::error!(server = %self.server(), generation, "tool list rejected, keeping the previous set: {e}")
            }
        }
        let heartbeat = self.config.heartbeat.enabled.then(|| Heartbeat {
            interval: self.config.heartbeat.interval,
            timeout: self.config.heartbeat.timeout,
            failures: self.config.heartbeat.failures,
            events: self.link.events.clone(),
        });
        let running = Running::start(
            self.server().clone(),
            generation,
            connected.session,
            self.link.guard.clone(),
            self.link.tx.clone(),
            heartbeat,
        );
        self.link.live.send_replace(Some(running.live.clone()));
        // Move the fence first, then free the permit: a late report about the old generation
        // must find it stale rather than start a second recovery.
        self.link.guard.set_current(generation);
        self.permit = None;
        self.running = Some(running);
        self.stable = false;
        self.stability = Some(Box::pin(tokio::time::sleep(self.budget.stability_window())));
        match self.outage.take() {
            Some(outage) => tracing::info!(
                server = %self.server(), generation,
                downtime_ms = outage.started.elapsed().as_millis() as u64,
                handshake_ms = connected.elapsed.as_millis() as u64,
                "recovered"
            ),
            None => {
                tracing::info!(server = %self.server(), generation, handshake_ms = connected.elapsed.as_millis() as u64, "connected")
            }
        }
        self.set_state(ConnectionState::Ready { generation }, generation);
        if std::mem::take(&mut self.sync_again) {
            self.on_list_changed(generation);
        }
    }

    async fn on_died(&mut self, death: Death, permit: RetryPermit) {
        let current = self.running.as_ref().map(|r| r.live.generation);
        if self.stopping || current != Some(permit.generation()) {
            tracing::debug!(server = %self.server(), ?current, reported = permit.generation(), "ignoring a death report about another generation");
            return;
        }
        let Some(running) = self.running.take() else {
            return;
        };
        let generation = running.live.generation;
        self.permit = Some(permit);
        self.link.live.send_replace(None);
        self.stability = None;
        let was_stable = std::mem::take(&mut self.stable);
        // Say what happened before the close barrier, which can take up to `close_timeout`
        // (a hung child's grace periods); the next attempt still waits for it.
        let cause = death.cause;
        if self.config.reconnect.enabled {
            self.on_failure(Reason::ConnectionLost, death.clone(), !was_stable);
        } else {
            tracing::error!(
                server = %self.server(), generation, cause = %cause,
                "connection lost; reconnect is disabled, call restart() to recover: {}", death.detail
            );
            let state = ConnectionState::Failed {
                reason: Reason::ConnectionLost,
                death: death.clone(),
                manual_recovery: true,
            };
            self.set_state(state, generation);
        }
        self.stop_sync().await;
        if !running.close(self.config.close_timeout).await {
            self.backoff = None;
            self.fail_closed(generation, death);
        }
    }

    /// One failed attempt or lost generation: schedule the next attempt or give up.
    /// `counts` is false only for the loss of a generation that had refilled the budget.
    fn on_failure(&mut self, reason: Reason, death: Death, counts: bool) {
        let generation = self.next_generation - 1;
        let first = self.outage.is_none();
        self.outage.get_or_insert(Outage {
            started: Instant::now(),
        });
        let delay = if counts {
            self.budget.fail()
        } else {
            Some(self.budget.next_delay())
        };
        let Some(mut delay) = delay else {
            return self.give_up(reason, death, generation);
        };
        if !self.config.reconnect.enabled {
            tracing::error!(server = %self.server(), generation, cause = %death.cause, "connection failed; reconnect is disabled: {}", death.detail);
            return self.give_up(reason, death, generation);
        }
        // The server is up and merely forgot us: rebuild at once, once.
        if first && death.cause == Cause::SessionExpired {
            delay = std::time::Duration::ZERO;
        }
        let attempt = self.budget.next_attempt();
        match reason {
            Reason::ConnectionFailed => tracing::warn!(
                server = %self.server(), generation, cause = %death.cause, attempt,
                delay_ms = delay.as_millis() as u64, "connection failed; retrying: {}", death.detail
            ),
            Reason::ConnectionLost => tracing::warn!(
                server = %self.server(), generation, cause = %death.cause, attempt,
                delay_ms = delay.as_millis() as u64, "connection lost; reconnecting: {}", death.detail
            ),
        }
        self.set_state(
            ConnectionState::Reconnecting {
                reason,
                death,
                attempt,
                delay,
            },
            generation,
        );
        self.backoff = Some(Box::pin(tokio::time::sleep(delay)));
    }

    fn give_up(&mut self, reason: Reason, death: Death, generation: Generation) {
        tracing::error!(
            server = %self.server(), generation, cause = %death.cause, failures = self.budget.failures(),
            "giving up: {}", death.detail
        );
        self.unregister();
        let state = ConnectionState::Failed {
            reason,
            death,
            manual_recovery: false,
        };
        self.set_state(state, generation);
    }

    fn fail_closed(&mut self, generation: Generation, death: Death) {
        tracing::error!(
            server = %self.server(), generation,
            "giving up: could not confirm generation {generation} closed within {:?}; not reconnecting to avoid two live servers",
            self.config.close_timeout
        );
        self.unregister();
        let death = Death::new(
            death.cause,
            format!("{}; close not confirmed", death.detail),
        );
        let state = ConnectionState::Failed {
            reason: Reason::ConnectionLost,
            death,
            manual_recovery: false,
        };
        self.set_state(state, generation);
    }

    fn unregister(&self) {
        if let Some(change) = self.registry.unregister(self.server(), Generation::MAX) {
            let _ = self.link.events.send(Event::Tools(change));
        }
    }

    fn on_stable(&mut self) {
        self.stable = true;
        self.budget.refill();
        if let Some(running) = &self.running {
            let generation = running.live.generation;
            tracing::debug!(server = %self.server(), generation, "generation stable; outage budget refilled");
            let _ = self.link.events.send(Event::Stable {
                server: self.server().clone(),
                generation,
            });
        }
    }

    fn on_list_changed(&mut self, generation: Generation) {
        let Some(running) = &self.running else {
            // A change announced while the attempt's own listing was under way: sync once more
            // as soon as that generation is ready, or the set could miss the change.
            if self
                .attempt
                .as_ref()
                .is_some_and(|a| a.generation == generation)
            {
                self.sync_again = true;
            }
            return;
        };
        if running.live.generation != generation {
            tracing::debug!(server = %self.server(), generation, current = running.live.generation, "ignoring list_changed from a replaced generation");
            return;
        }
        if self.sync.is_some() {
            self.sync_again = true;
            return;
        }
        let peer = running.live.peer.clone();
        let pages = self.config.max_tool_pages;
        let timeout = self.config.call_timeout;
        self.sync = Some(tokio::spawn(async move {
            let listed =
                tokio::time::timeout(timeout, super::sync::list_all_tools(&peer, pages)).await;
            (
                generation,
                listed.unwrap_or_else(|_| Err(format!("tools/list timed out after {timeout:?}"))),
            )
        }));
    }

    fn on_sync_done(&mut self, generation: Generation, result: Result<Vec<Tool>, String>) {
        if self.running.as_ref().map(|r| r.live.generation) != Some(generation) {
            return;
        }
        match result.map(|tools| self.registry.publish(self.server(), generation, tools)) {
            Ok(Ok(change)) if change.is_empty() => {}
            Ok(Ok(change)) => {
                tracing::info!(server = %self.server(), generation, added = change.added.len(), removed = change.removed.len(), changed = change.changed.len(), "tools changed");
                let _ = self.link.events.send(Event::Tools(change));
            }
            Ok(Err(e)) => {
                tracing::warn!(server = %self.server(), generation, "tool list rejected, keeping the previous set: {e}")
            }
            Err(e) => {
                tracing::warn!(server = %self.server(), generation, "tool sync failed, keeping the previous set: {e}")
            }
        }
        if std::mem::take(&mut self.sync_again) {
            self.on_list_changed(generation);
        }
    }

    async fn stop_sync(&mut self) {
        self.sync_again = false;
        if let Some(sync) = self.sync.take() {
            sync.abort();
            let _ = sync.await;
        }
    }

    async fn stop_attempt(&mut self) {
        self.backoff = None;
        if let Some(attempt) = self.attempt.take() {
            attempt.ct.cancel();
            if let Ok(Ok(connected)) = attempt.task.await {
                connect::discard(connected.session, self.config.close_timeout).await;
            }
        }
    }

    /// Closes the current generation on the supervisor's own initiative (restart, shutdown).
    async fn close_current(&mut self) -> bool {
        self.stability = None;
        self.stable = false;
        self.stop_sync().await;
        let Some(running) = self.running.take() else {
            return true;
        };
        // Reports about a generation we close ourselves are not deaths.
        self.link.guard.set_current(0);
        self.link.live.send_replace(None);
        let generation = running.live.generation;
        let closed = running.close(self.config.close_timeout).await;
        if !closed {
            tracing::error!(server = %self.server(), generation, "could not confirm generation {generation} closed within {:?}", self.config.close_timeout);
        }
        closed
    }

    async fn on_restart(&mut self) {
        self.stop_attempt().await;
        if !self.close_current().await {
            let death = Death::new(Cause::ConnectFailed, "restart requested");
            return self.fail_closed(self.next_generation - 1, death);
        }
        tracing::info!(server = %self.server(), "restart requested");
        self.budget.refill();
        self.outage = None;
        self.begin_attempt();
    }

    async fn on_shutdown(&mut self) {
        self.stopping = true;
        self.link.guard.close();
        self.stop_attempt().await;
        self.close_current().await;
        self.unregister();
        self.registry.detach(self.server());
        self.permit = None;
        tracing::info!(server = %self.server(), "stopped");
        self.set_state(ConnectionState::Stopped, self.next_generation - 1);
    }
}

async fn attempt_done(
    slot: &mut Option<AttemptTask>,
) -> (Generation, Result<Box<Connected>, Death>) {
    let Some(attempt) = slot else {
        return std::future::pending().await;
    };
    let joined = (&mut attempt.task).await;
    let generation = attempt.generation;
    *slot = None;
    let result = joined.unwrap_or_else(|e| {
        Err(Death::new(
            Cause::ConnectFailed,
            format!("attempt task failed: {e}"),
        ))
    });
    (generation, result)
}

async fn sync_done(slot: &mut Option<SyncTask>) -> (Generation, Result<Vec<Tool>, String>) {
    let Some(sync) = slot else {
        return std::future::pending().await;
    };
    let joined = sync.await;
    *slot = None;
    joined.unwrap_or_else(|e| (0, Err(format!("sync task failed: {e}"))))
}

async fn elapsed(slot: &mut Option<Pin<Box<Sleep>>>) {
    let Some(sleep) = slot else {
        return std::future::pending().await;
    };
    sleep.await;
    *slot = None;
}
