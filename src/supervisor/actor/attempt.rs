//! Connecting: starting attempts, keeping track of those in flight, and taking their results.
//!
//! The hedging of a stuck remote attempt is `hedge`; making a connected attempt the current
//! generation is `current`.

use std::{sync::Arc, time::Duration};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

use super::Actor;
use crate::supervisor::actor::transition::Note;
use crate::{
    config::{ServerConfig, TransportConfig},
    state::{Cause, ConnectionState, Death, Generation, Reason},
    supervisor::reconnect::policy,
    supervisor::session::connect::{self, AttemptFailure, Connected},
    transport::Activity,
};

/// The smallest hedge interval: below it, an ordinary TLS handshake would be hedged.
const HEDGE_MIN: Duration = Duration::from_secs(1);

pub(super) struct AttemptTask {
    pub(super) generation: Generation,
    pub(super) ct: CancellationToken,
    /// Stamped by every answer the attempt gets; how the hedge tells stuck from slow.
    pub(super) activity: Arc<Activity>,
    pub(super) task: JoinHandle<Result<Box<Connected>, AttemptFailure>>,
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
    pub(super) current: Option<AttemptTask>,
    /// A remote attempt that was hedged; it may still win.
    pub(super) straggler: Option<AttemptTask>,
    /// None for stdio (never hedged); else the next hedge interval.
    pub(super) hedge_delay: Option<Duration>,
    pub(super) first_hedge: Duration,
    pub(super) max_hedge: Duration,
    pub(super) multiplier: f64,
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
    pub(super) fn start_attempt(&mut self, hedged: bool) {
        let generation = self.next_generation;
        self.next_generation = generation.next();
        let attempt = match &mut self.outage {
            Some(outage) => {
                outage.tries += 1;
                outage.tries
            }
            None => 1,
        };
        if hedged {
            tracing::debug!(server = %self.server(), %generation, attempt, "connecting beside a stuck attempt");
        } else if self.outage.is_none() {
            self.transition(
                ConnectionState::Connecting { attempt },
                generation,
                Note::Plain,
            );
        } else {
            tracing::debug!(server = %self.server(), %generation, attempt, "connecting");
        }
        let ct = CancellationToken::new();
        let local = matches!(self.config.transport, TransportConfig::Stdio(_));
        let activity = Activity::new(local);
        let attempt = connect::attempt(connect::Attempt {
            config: self.config.clone(),
            context: self.context.clone(),
            generation,
            tx: self.tx.clone(),
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
            self.hedge = Some(self.paced(tokio::time::sleep(delay)));
        }
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
                    tracing::error!(server = %self.server(), generation = %attempt.generation, "an attempt did not stop within {limit:?}; aborting it");
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
                tracing::debug!(server = %self.server(), %generation, "a hedged attempt failed: {}", failure.death.detail);
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
}
