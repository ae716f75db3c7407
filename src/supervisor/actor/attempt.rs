//! Connecting: starting attempts, hedging a stuck remote attempt, and making a connected attempt
//! the current generation.
//!
//! Why hedge: an attempt started while the path to a remote server is black-holed (a half-open
//! NAT entry, a partition) waits out its whole `connect_timeout` even after the path heals. So a
//! remote attempt that has had no answer at all for a hedge interval (`max(delay, 1 s)`, growing
//! like the backoff up to `max(max_delay, 1 s)`) gets a fresh attempt beside it. The stuck one may
//! still win; with two in flight, the next hedge abandons the older one — only if it is still
//! getting no answer — and that counts as a failed attempt. After a partition heals, a server is
//! ready again within one hedge interval. An attempt that is slow but answering (each handshake
//! step takes a while) is never hedged or abandoned: it has its `connect_timeout`. Stdio attempts
//! are never hedged: that would mean two children.

use std::{sync::Arc, time::Duration};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

use super::{Actor, Outage};
use crate::{
    config::{ServerConfig, TransportConfig},
    state::{Cause, ConnectionState, Death, Event, Generation, Reason},
    supervisor::{
        connect::{self, AttemptFailure, Connected},
        generation::{self, Running},
        heartbeat::Heartbeat,
        policy,
    },
    transport::Activity,
};

/// The smallest hedge interval: below it, an ordinary TLS handshake would be hedged.
const HEDGE_MIN: Duration = Duration::from_secs(1);

pub(super) struct AttemptTask {
    pub(super) generation: Generation,
    ct: CancellationToken,
    /// Stamped by every answer the attempt gets; how the hedge tells stuck from slow.
    activity: Arc<Activity>,
    task: JoinHandle<Result<Box<Connected>, AttemptFailure>>,
}

/// The outcome of one attempt.
pub(super) struct Done {
    generation: Generation,
    /// True when the attempt was the abandoned-but-still-allowed-to-win one.
    straggler: bool,
    result: Result<Box<Connected>, AttemptFailure>,
}

/// The attempts in flight. Written only by the actor.
pub(super) struct Attempts {
    current: Option<AttemptTask>,
    /// A remote attempt that was hedged; it may still win.
    straggler: Option<AttemptTask>,
    /// None for stdio (never hedged); else the next hedge interval.
    hedge_delay: Option<Duration>,
    first_hedge: Duration,
    max_hedge: Duration,
    multiplier: f64,
}

impl Attempts {
    pub(super) fn new(config: &ServerConfig) -> Self {
        let reconnect = &config.reconnect;
        let first_hedge = reconnect.initial_delay.max(HEDGE_MIN);
        let remote = matches!(config.transport, TransportConfig::Remote(_));
        Attempts {
            current: None,
            straggler: None,
            hedge_delay: remote.then_some(first_hedge),
            first_hedge,
            max_hedge: reconnect.max_delay.max(HEDGE_MIN),
            multiplier: reconnect.multiplier.max(1.0),
        }
    }

    /// Resolves when an attempt in flight ends.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: a finished attempt is taken out of its slot only in the poll that returns it.
    pub(super) async fn done(&mut self) -> Done {
        tokio::select! {
            (generation, result) = join(&mut self.current) => Done { generation, straggler: false, result },
            (generation, result) = join(&mut self.straggler) => Done { generation, straggler: true, result },
        }
    }

    /// True when `generation` is an attempt in flight.
    pub(super) fn has(&self, generation: Generation) -> bool {
        [&self.current, &self.straggler]
            .iter()
            .any(|slot| slot.as_ref().is_some_and(|a| a.generation == generation))
    }

    /// Takes every attempt in flight.
    pub(super) fn take_all(&mut self) -> Vec<AttemptTask> {
        self.current
            .take()
            .into_iter()
            .chain(self.straggler.take())
            .collect()
    }
}

async fn join(
    slot: &mut Option<AttemptTask>,
) -> (Generation, Result<Box<Connected>, AttemptFailure>) {
    let Some(attempt) = slot else {
        return std::future::pending().await;
    };
    let joined = (&mut attempt.task).await;
    let generation = attempt.generation;
    *slot = None;
    let result = joined.unwrap_or_else(|e| {
        Err(Death::new(Cause::ConnectFailed, format!("attempt task failed: {e}")).into())
    });
    (generation, result)
}

impl Actor {
    pub(super) fn begin_attempt(&mut self) {
        self.start_attempt(false);
    }

    /// Starts attempt `next_generation`; `hedged` when it goes beside a stuck one (the state
    /// is not announced again).
    fn start_attempt(&mut self, hedged: bool) {
        let generation = self.next_generation;
        self.next_generation += 1;
        let attempt = match &mut self.outage {
            Some(outage) => {
                outage.tries += 1;
                outage.tries
            }
            None => 1,
        };
        if self.outage.is_none() && !hedged {
            self.set_state(ConnectionState::Connecting { attempt }, generation);
        }
        tracing::debug!(server = %self.server(), generation, attempt, hedged, "connecting");
        let ct = CancellationToken::new();
        let local = matches!(self.config.transport, TransportConfig::Stdio(_));
        let activity = Activity::new(local);
        let attempt = connect::attempt(connect::Attempt {
            config: self.config.clone(),
            context: self.context.clone(),
            generation,
            tx: self.link.tx.clone(),
            ct: ct.clone(),
            activity: activity.clone(),
        });
        let task = tokio::spawn(async move { attempt.await.map(Box::new) });
        self.attempts.current = Some(AttemptTask {
            generation,
            ct,
            activity,
            task,
        });
        if let Some(delay) = self.attempts.hedge_delay {
            self.hedge = Some(Box::pin(tokio::time::sleep(delay)));
        }
    }

    /// The hedge timer of the current remote attempt fired: if it has had no answer for a whole
    /// hedge interval, start a fresh attempt beside it (see the module docs).
    pub(super) fn on_hedge(&mut self) {
        let Some(delay) = self.attempts.hedge_delay else {
            return;
        };
        let Some(current) = &self.attempts.current else {
            return;
        };
        let quiet = current.activity.idle();
        if quiet < delay {
            // It is getting answers: slow, not stuck. Look again when it could be stuck.
            self.hedge = Some(Box::pin(tokio::time::sleep(delay - quiet)));
            return;
        }
        if let Some(older) = &self.attempts.straggler
            && older.activity.idle() < delay
        {
            // The older one has started to answer: let both run, start no third.
            self.hedge = Some(Box::pin(tokio::time::sleep(delay)));
            return;
        }
        let Some(stuck) = self.attempts.current.take() else {
            return;
        };
        let next = delay.mul_f64(self.attempts.multiplier);
        self.attempts.hedge_delay = Some(next.min(self.attempts.max_hedge));
        tracing::info!(server = %self.server(), generation = stuck.generation, "no answer within {delay:?}; starting a fresh attempt beside it");
        if let Some(older) = self.attempts.straggler.replace(stuck) {
            let generation = older.generation;
            self.abandon(older);
            let death = Death::new(
                Cause::ConnectFailed,
                "no answer for two hedge intervals; abandoned for a fresh attempt",
            );
            if !self.count_abandoned(death, generation) {
                return;
            }
        }
        self.start_attempt(true);
    }

    /// The abandoned attempt `generation` counts as a failure; false when that spent the budget
    /// (the server is then `failed` and nothing is in flight any more).
    fn count_abandoned(&mut self, death: Death, generation: Generation) -> bool {
        if self.budget.fail().is_none() {
            self.give_up(Reason::ConnectionFailed, death, generation);
            return false;
        }
        let tries = self.tries(false);
        let attempt = self.outage.get_or_insert(Outage::new(tries)).tries + 1;
        tracing::warn!(server = %self.server(), generation, cause = %death.cause, attempt, "connection failed; retrying: {}", death.detail);
        self.set_state(
            ConnectionState::Reconnecting {
                reason: Reason::ConnectionFailed,
                death,
                attempt,
                delay: Duration::ZERO,
            },
            generation,
        );
        true
    }

    /// Cancels every attempt in flight and stops hedging (the server is failing or failed).
    pub(super) fn abandon_all(&mut self) {
        self.hedge = None;
        for attempt in self.attempts.take_all() {
            self.abandon(attempt);
        }
    }

    /// Cancels an attempt; whatever it built is cleaned up by a task the actor owns. If that
    /// task is aborted (at shutdown), the attempt task is aborted with it.
    pub(super) fn abandon(&mut self, attempt: AttemptTask) {
        attempt.ct.cancel();
        let limit = self.config.close_timeout;
        let task = AbortOnDropHandle::new(attempt.task);
        self.lingering.push(tokio::spawn(async move {
            if let Ok(Ok(connected)) = task.await {
                connect::discard(connected.session, limit).await;
            }
        }));
    }

    /// Cancels every attempt and waits until each has cleaned up (the child reaped), at most
    /// `close_timeout` each; one that does not finish is aborted (its child killed on drop).
    pub(super) async fn stop_attempts(&mut self) {
        self.backoff = None;
        self.hedge = None;
        let limit = self.config.close_timeout;
        for attempt in self.attempts.take_all() {
            attempt.ct.cancel();
            let mut task = attempt.task;
            match tokio::time::timeout(limit, &mut task).await {
                Ok(Ok(Ok(connected))) => connect::discard(connected.session, limit).await,
                Ok(_) => {}
                Err(_) => {
                    tracing::error!(server = %self.server(), generation = attempt.generation, "an attempt did not stop within {limit:?}; aborting it");
                    task.abort();
                    let _ = task.await;
                }
            }
        }
    }

    pub(super) async fn on_attempt_done(&mut self, done: Done) {
        let Done {
            generation,
            straggler,
            result,
        } = done;
        if let Err(failure) = &result
            && (!straggler || failure.death.cause.is_permanent())
        {
            crate::telemetry::attempt_failed(self.server(), &failure.death);
        }
        match result {
            Ok(connected) => {
                // A straggler can win after the current attempt failed and a backoff was armed.
                self.backoff = None;
                self.hedge = None;
                for other in self.attempts.take_all() {
                    self.abandon(other);
                }
                self.attempts.hedge_delay =
                    self.attempts.hedge_delay.map(|_| self.attempts.first_hedge);
                self.become_current(generation, *connected);
            }
            Err(failure) if failure.death.cause.is_permanent() => {
                self.abandon_all();
                let refusal = policy::Failure {
                    cause: failure.death.cause,
                    lost: false,
                    counts: true,
                    retry_after: None,
                    tries: self.tries(false),
                };
                self.on_failure(Reason::ConnectionFailed, failure.death, refusal, generation);
            }
            // The hedged older attempt failed; the current one goes on.
            Err(failure) if straggler => {
                tracing::debug!(server = %self.server(), generation, "a hedged attempt failed: {}", failure.death.detail);
            }
            Err(failure) => {
                self.hedge = None;
                let counted = policy::Failure {
                    cause: failure.death.cause,
                    lost: false,
                    counts: true,
                    retry_after: failure.retry_after,
                    tries: self.tries(false),
                };
                self.on_failure(Reason::ConnectionFailed, failure.death, counted, generation);
            }
        }
    }

    /// Makes `connected` the current generation: fence, permit, watchers, tools, state.
    fn become_current(&mut self, generation: Generation, connected: Connected) {
        let Connected {
            session,
            tools,
            ttl,
            subscription,
            wanted,
            protocol,
            elapsed,
        } = connected;
        // Fence first, then free the permit, then start the watchers (invariant 2): a late report
        // about the old generation finds it stale; a report about this one finds the permit free.
        self.link.guard.set_current(generation);
        self.last_current = generation;
        self.permit = None;
        let live = generation::live(
            self.server().clone(),
            generation,
            &session,
            protocol.clone(),
            self.link.guard.clone(),
            self.link.tx.clone(),
            crate::telemetry::transport(&self.config, self.context.detected.get()),
        );
        let heartbeat = self.config.heartbeat.enabled.then(|| Heartbeat {
            interval: self.config.heartbeat.interval,
            timeout: self.config.heartbeat.timeout,
            failures: self.config.heartbeat.failures,
            events: self.link.events.clone(),
        });
        self.publish(generation, tools);
        let listen = crate::supervisor::listen::Listener {
            subscription,
            wanted,
            tx: self.link.tx.clone(),
            relay: self.link.relay.clone(),
            handlers: self.config.handlers.clone(),
        };
        let running = Running::start(
            live.clone(),
            session,
            heartbeat,
            listen,
            self.config.close_timeout,
        );
        self.refresh_after(ttl);
        let outage = self.outage.as_ref().map(|o| o.started.elapsed());
        crate::telemetry::ready(&live.telemetry, outage);
        self.link.live.send_replace(Some(live));
        self.running = Some(running);
        self.stable = false;
        self.stability = Some(Box::pin(tokio::time::sleep(self.budget.stability_window())));
        let handshake_ms = elapsed.as_millis() as u64;
        match self.outage.take() {
            Some(outage) => tracing::info!(
                server = %self.server(), generation, handshake_ms, %protocol,
                downtime_ms = outage.started.elapsed().as_millis() as u64, "recovered"
            ),
            None => {
                tracing::info!(server = %self.server(), generation, handshake_ms, %protocol, "connected")
            }
        }
        let protocol = protocol.to_string();
        self.set_state(
            ConnectionState::Ready {
                generation,
                protocol,
            },
            generation,
        );
        if self.sync.take_pending(generation) {
            self.on_list_changed(generation);
        }
    }

    /// Registers a new generation's tools; announces them only when something changed (or on
    /// this supervisor's first publish), so a reconnect to an unchanged server is silent.
    fn publish(&mut self, generation: Generation, tools: Vec<rmcp::model::Tool>) {
        match self.registry.publish(self.server(), generation, tools) {
            Ok(change) if change.is_empty() && self.published => {}
            Ok(change) => {
                self.published = true;
                crate::telemetry::tools(&change);
                let _ = self.link.events.send(Event::Tools(change));
            }
            Err(e) => {
                tracing::error!(server = %self.server(), generation, "tool list rejected, keeping the previous set: {e}")
            }
        }
    }
}
