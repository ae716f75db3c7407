//! Outages: a generation's death, a failed attempt, the backoff before the next one, the outage
//! budget, and permanent refusals.

use std::{pin::Pin, time::Duration};

use super::{Actor, Outage};
use crate::supervisor::actor::transition::Note;
use crate::supervisor::reconnect::policy::{self, Failure, Next, Why};
use crate::{
    state::{Cause, ConnectionState, Death, Event, Generation, Reason},
    supervisor::reconnect::retry_guard::RetryPermit,
    transport::Stop,
};

impl Actor {
    pub(super) async fn on_died(&mut self, death: Death, permit: RetryPermit) {
        let current = self.running.as_ref().map(|r| r.live.generation);
        if self.stopping || current != Some(permit.generation()) {
            tracing::debug!(server = %self.server(), ?current, reported = %permit.generation(), "ignoring a death report about another generation");
            return;
        }
        let Some(running) = self.running.take() else {
            return;
        };
        let generation = running.live.generation;
        crate::telemetry::lost(&running.live.telemetry, &death);
        self.permit = Some(permit);
        self.stability = None;
        let was_stable = std::mem::take(&mut self.stable);
        // Say what happened before the close barrier, which can take up to `close_timeout`
        // (a hung child's grace periods); the next attempt still waits for it.
        let failure = Failure {
            cause: death.cause,
            lost: true,
            counts: !was_stable,
            retry_after: None,
            tries: self.tries(true),
        };
        self.on_failure(Reason::ConnectionLost, death.clone(), failure, generation);
        self.stop_sync().await;
        let closed = running.close(Stop::Dead, self.config.close_timeout).await;
        self.lingering.push(closed.monitor);
        if !closed.confirmed {
            self.backoff = None;
            self.fail_closed(Some(generation), death);
        }
    }

    /// The outage's tries so far, for a [`Failure`]: a loss opens an outage with no try yet; a
    /// failed attempt outside an outage was the first attempt of all.
    pub(super) fn tries(&self, lost: bool) -> u32 {
        match (&self.outage, lost) {
            (_, true) => 0,
            (Some(outage), false) => outage.tries,
            (None, false) => 1,
        }
    }

    /// Generation `generation` failed (an attempt) or was lost: what follows is the reconnect
    /// rules' answer ([`policy::next`]); this carries it out.
    pub(super) fn on_failure(
        &mut self,
        reason: Reason,
        death: Death,
        failure: Failure,
        generation: Generation,
    ) {
        let tries = failure.tries;
        let next = policy::next(&mut self.budget, &self.config.reconnect, failure);
        match next {
            Next::Refused { retry_in } => {
                self.on_refused(reason, death, retry_in, tries, generation)
            }
            Next::Manual => {
                let state = ConnectionState::Failed {
                    reason,
                    death,
                    manual_recovery: true,
                    retry_in: None,
                };
                self.transition(state, generation, Note::Manual);
            }
            Next::GiveUp(why) => {
                self.outage.get_or_insert(Outage::new(tries));
                self.give_up(reason, death, generation, why == Why::Disabled);
            }
            Next::Retry { delay, attempt } => {
                self.outage.get_or_insert(Outage::new(tries));
                self.retry(reason, death, delay, attempt, generation);
            }
        }
    }

    /// Says that attempt `attempt` follows after `delay`, and arms the backoff.
    fn retry(
        &mut self,
        reason: Reason,
        death: Death,
        delay: Duration,
        attempt: u32,
        generation: Generation,
    ) {
        let state = ConnectionState::Reconnecting {
            reason,
            death,
            attempt,
            delay,
        };
        self.transition(state, generation, Note::Plain);
        let backoff = tokio::time::sleep(delay);
        self.backoff = Some(match self.origin.clone() {
            // Whichever comes first: the backoff, or the server listening again; then the
            // origin's attempt budget.
            Some(origin) => self.paced(async move {
                tokio::select! {
                    () = backoff => {}
                    () = crate::supervisor::reconnect::origin::accepts_again(origin) => {}
                }
            }),
            None => Box::pin(backoff),
        });
    }

    /// The first attempt: at once for stdio; for a web origin after its turn in the origin's
    /// budget, as every attempt (a process that starts many servers of one origin at once is as
    /// much a herd as a restart).
    pub(super) fn begin_first(&mut self) {
        match self.origin {
            Some(_) => self.backoff = Some(self.paced(std::future::ready(()))),
            None => self.begin_attempt(),
        }
    }

    /// `wait`, then the origin's attempt budget when the server has a web origin.
    pub(super) fn paced(
        &self,
        wait: impl Future<Output = ()> + Send + 'static,
    ) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        match self.origin.clone() {
            Some(origin) => {
                let rate = self.config.reconnect.origin_attempts_per_second;
                Box::pin(async move {
                    wait.await;
                    crate::supervisor::reconnect::origin::budget::admit(&origin, rate).await;
                })
            }
            None => Box::pin(wait),
        }
    }

    /// A permanent refusal (`unauthorized`, `rejected`) or a limit exceeded (`limit_exceeded`):
    /// `failed` at once, the tools unregistered, and one more try only after `retry_in`
    /// (`max_delay`, [`policy`] rule 1) — never the normal pace, never the budget.
    fn on_refused(
        &mut self,
        reason: Reason,
        mut death: Death,
        retry_in: Option<Duration>,
        tries: u32,
        generation: Generation,
    ) {
        if death.cause == Cause::Unauthorized {
            // Say what would authorize it: a login, a token, other client credentials.
            let advice = match &self.context.auth {
                Some(auth) => auth.advice(&death.detail),
                None => format!(
                    "the server asks for authorization: configure `auth` (oauth) and run `mcp-resilient login {}`",
                    self.config.name
                ),
            };
            death.detail = format!("{}; {advice}", death.detail);
        }
        self.outage.get_or_insert(Outage::new(tries));
        self.unregister();
        self.backoff = retry_in.map(|wait| self.paced(tokio::time::sleep(wait)));
        let state = ConnectionState::Failed {
            reason,
            death,
            manual_recovery: false,
            retry_in,
        };
        self.transition(state, generation, Note::Refused);
    }

    /// Gives up: the budget is spent, or (`disabled`) reconnect is disabled.
    pub(super) fn give_up(
        &mut self,
        reason: Reason,
        death: Death,
        generation: Generation,
        disabled: bool,
    ) {
        // A hedged attempt still in flight must not bring a given-up server back.
        self.abandon_all();
        self.unregister();
        let state = ConnectionState::Failed {
            reason,
            death,
            manual_recovery: false,
            retry_in: None,
        };
        let failures = self.budget.failures();
        self.transition(state, generation, Note::GaveUp { failures, disabled });
    }

    /// The close barrier could not confirm a process gone: stop for good (two live servers are
    /// worse than none). Says so once: a server already `failed` keeps its state.
    pub(super) fn fail_closed(&mut self, generation: Option<Generation>, death: Death) {
        self.backoff = None;
        self.abandon_all();
        self.unconfirmed = true;
        let already = matches!(
            self.board.status().state,
            ConnectionState::Failed { retry_in: None, .. }
        );
        self.unregister();
        if already {
            tracing::error!(server = %self.server(), "could not confirm a generation closed within {:?}; staying failed", self.config.close_timeout);
            return;
        }
        let death = Death::new(
            death.cause,
            format!("{}; close not confirmed", death.detail),
        );
        let state = ConnectionState::Failed {
            reason: Reason::ConnectionLost,
            death,
            manual_recovery: false,
            retry_in: None,
        };
        let limit = self.config.close_timeout;
        self.transition(state, generation, Note::CloseUnconfirmed { limit });
    }

    pub(super) fn unregister(&self) {
        if let Some(change) = self.registry.unregister(self.server()) {
            crate::telemetry::tools(&change);
            self.board.event(Event::Tools(change));
        }
    }

    pub(super) fn on_stable(&mut self) {
        self.stable = true;
        self.budget.refill();
        if let Some(running) = &self.running {
            let generation = running.live.generation;
            tracing::debug!(server = %self.server(), %generation, "generation stable; outage budget refilled");
            self.board.event(Event::Stable {
                server: self.server().clone(),
                generation,
            });
        }
    }
}
