//! The reconnect rules, as one pure step: what happened goes in, what to do next comes out.
//!
//! The actor (`actor/outage.rs`) carries the answer out (state, logs, timers, the tools); the
//! rules themselves live here, where each can be tested alone: the outage budget, the backoff,
//! a session the server forgot, `Retry-After`, permanent refusals, and `reconnect.enabled`.
//! The shape follows tower's `retry::Policy`: one function of the failure and the budget.
//!
//! # Rules
//!
//! 1. A permanent cause (`unauthorized`, `rejected`, `limit_exceeded`) is a refusal: the budget
//!    is refilled and the server tried once more only after `max_delay` (never when reconnect is
//!    disabled): the server or its configuration may be fixed meanwhile.
//! 2. A generation lost while reconnect is disabled waits for `restart()`.
//! 3. Otherwise the failure counts against the budget (unless the generation that was lost had
//!    outlived the stability window); a spent budget, or reconnect disabled, gives up.
//! 4. A session the server expired is rebuilt at once, but only as the first failure since the
//!    budget was last full: a server that expires every new session still meets the backoff.
//! 5. A `Retry-After` lengthens the delay, capped at `max_delay`; it never shortens it.

use std::time::Duration;

use super::backoff::Budget;
use crate::{config::Reconnect, state::Cause};

/// A failure, as the rules see it.
#[derive(Debug, Clone, Copy)]
pub(in crate::supervisor) struct Failure {
    pub(in crate::supervisor) cause: Cause,
    /// A ready generation was lost (rather than an attempt failing).
    pub(in crate::supervisor) lost: bool,
    /// The failure counts against the budget: false only for the loss of a generation that
    /// had outlived the stability window (and so refilled the budget).
    pub(in crate::supervisor) counts: bool,
    /// The server's own request to wait.
    pub(in crate::supervisor) retry_after: Option<Duration>,
    /// Attempts made in this outage so far, the failed one included: 0 when a ready generation
    /// was lost (no reconnect has been tried yet).
    pub(in crate::supervisor) tries: u32,
}

/// What to do after a [`Failure`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::supervisor) enum Next {
    /// Try again after `delay`; the try is the outage's `attempt`th (1-based): 1 for the first
    /// reconnect after a loss, one more than the failed attempt otherwise.
    Retry { delay: Duration, attempt: u32 },
    /// Stop trying (`failed`, no automatic retry).
    GiveUp(Why),
    /// Reconnect is disabled and a generation was lost: `failed`, `restart()` recovers.
    Manual,
    /// A permanent refusal: `failed` at once, one more try after `retry_in` (none when
    /// reconnect is disabled).
    Refused { retry_in: Option<Duration> },
}

/// Why [`Next::GiveUp`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::supervisor) enum Why {
    /// `max_attempts` consecutive failures.
    Spent,
    /// Reconnect is disabled.
    Disabled,
}

/// The next step after `failure`, counting it in `budget` (see the [rules](self)).
pub(in crate::supervisor) fn next(
    budget: &mut Budget,
    reconnect: &Reconnect,
    failure: Failure,
) -> Next {
    if failure.cause.is_permanent() {
        budget.refill();
        let retry_in = reconnect.enabled.then_some(reconnect.max_delay);
        return Next::Refused { retry_in };
    }
    if failure.lost && !reconnect.enabled {
        return Next::Manual;
    }
    let delay = match failure.counts {
        true => budget.fail(),
        false => Some(budget.next_delay()),
    };
    let Some(mut delay) = delay else {
        return Next::GiveUp(Why::Spent);
    };
    if !reconnect.enabled {
        return Next::GiveUp(Why::Disabled);
    }
    if failure.cause == Cause::SessionExpired && budget.failures() <= 1 {
        delay = Duration::ZERO;
    }
    if let Some(wait) = failure.retry_after {
        delay = delay.max(wait.min(reconnect.max_delay));
    }
    Next::Retry {
        delay,
        attempt: failure.tries.saturating_add(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn policy(max_attempts: u32) -> Reconnect {
        Reconnect {
            initial_delay: 100 * MS,
            max_delay: 1000 * MS,
            multiplier: 2.0,
            jitter: 0.0,
            max_attempts,
            ..Reconnect::default()
        }
    }

    fn failed(cause: Cause) -> Failure {
        Failure {
            cause,
            lost: false,
            counts: true,
            retry_after: None,
            tries: 0,
        }
    }

    fn lost(cause: Cause, counts: bool) -> Failure {
        Failure {
            lost: true,
            counts,
            ..failed(cause)
        }
    }

    fn retry(delay: Duration, attempt: u32) -> Next {
        Next::Retry { delay, attempt }
    }

    /// Runs `failures` in order through one budget, counting the outage's tries as the actor
    /// does: a lost generation opens an outage with none, each failed attempt is one more (the
    /// first attempt of all is try 1).
    fn run(reconnect: &Reconnect, failures: &[Failure]) -> Vec<Next> {
        let mut budget = Budget::new(reconnect);
        let mut tries = 0;
        failures
            .iter()
            .map(|f| {
                tries = if f.lost { 0 } else { tries + 1 };
                next(&mut budget, reconnect, Failure { tries, ..*f })
            })
            .collect()
    }

    #[test]
    fn failures_back_off_until_the_budget_is_spent() {
        let steps = run(&policy(4), &[failed(Cause::ConnectFailed); 4]);
        assert_eq!(
            steps,
            [
                retry(100 * MS, 2),
                retry(200 * MS, 3),
                retry(400 * MS, 4),
                Next::GiveUp(Why::Spent),
            ]
        );
    }

    #[test]
    fn an_expired_session_is_rebuilt_at_once_only_as_the_first_failure() {
        let expired = lost(Cause::SessionExpired, true);
        let steps = run(
            &policy(10),
            &[expired, failed(Cause::SessionExpired), expired],
        );
        // The first: at once. The ones after it meet the backoff, as any other failure.
        // A loss opens an outage: its first reconnect is attempt 1.
        assert_eq!(
            steps,
            [
                retry(Duration::ZERO, 1),
                retry(200 * MS, 2),
                retry(400 * MS, 1)
            ]
        );
    }

    #[test]
    fn retry_after_lengthens_the_delay_up_to_max_delay_and_never_shortens_it() {
        let with = |wait: u32| Failure {
            retry_after: Some(wait * MS),
            ..failed(Cause::ConnectFailed)
        };
        let steps = run(&policy(10), &[with(5000), with(300), with(10)]);
        assert_eq!(
            steps,
            [retry(1000 * MS, 2), retry(300 * MS, 3), retry(400 * MS, 4)]
        );
    }

    #[test]
    fn a_permanent_refusal_refills_the_budget_and_waits_max_delay() {
        let reconnect = policy(3);
        for cause in [Cause::Unauthorized, Cause::Rejected, Cause::LimitExceeded] {
            let steps = run(
                &reconnect,
                &[
                    failed(Cause::ConnectFailed),
                    failed(cause),
                    failed(Cause::ConnectFailed),
                ],
            );
            let refused = Next::Refused {
                retry_in: Some(1000 * MS),
            };
            // After the refusal the budget is full again: the next failure waits the first
            // delay again. The outage goes on: the try after the refusal failed as its third.
            assert_eq!(
                steps,
                [retry(100 * MS, 2), refused, retry(100 * MS, 4)],
                "{cause}"
            );
            let lost_to_it = run(&reconnect, &[lost(cause, true)]);
            assert_eq!(lost_to_it, [refused], "{cause} on a live generation");
        }
        let disabled = Reconnect {
            enabled: false,
            ..policy(3)
        };
        let steps = run(&disabled, &[failed(Cause::Rejected)]);
        assert_eq!(steps, [Next::Refused { retry_in: None }]);
    }

    #[test]
    fn a_generation_that_outlived_the_stability_window_starts_a_fresh_outage() {
        let reconnect = policy(3);
        let mut budget = Budget::new(&reconnect);
        let brief = lost(Cause::ProcessExited, true);
        // Each loss opens an outage whose first reconnect is attempt 1; the budget still counts
        // every brief generation.
        assert_eq!(next(&mut budget, &reconnect, brief), retry(100 * MS, 1));
        assert_eq!(next(&mut budget, &reconnect, brief), retry(200 * MS, 1));
        // The next generation stays ready for the window: the actor refills the budget.
        budget.refill();
        let stable = lost(Cause::ProcessExited, false);
        assert_eq!(next(&mut budget, &reconnect, stable), retry(100 * MS, 1));
        assert_eq!(
            budget.failures(),
            0,
            "the loss of a stable generation is not counted"
        );
        // Without the window, two brief generations and one more failure spend a budget of 3.
        assert_eq!(next(&mut budget, &reconnect, brief), retry(200 * MS, 1));
        assert_eq!(next(&mut budget, &reconnect, brief), retry(400 * MS, 1));
        assert_eq!(
            next(&mut budget, &reconnect, brief),
            Next::GiveUp(Why::Spent)
        );
    }

    #[test]
    fn with_reconnect_disabled_a_loss_waits_for_restart_and_an_attempt_gives_up() {
        let disabled = Reconnect {
            enabled: false,
            ..policy(3)
        };
        let steps = run(
            &disabled,
            &[
                lost(Cause::ProcessExited, true),
                failed(Cause::ConnectFailed),
            ],
        );
        assert_eq!(steps, [Next::Manual, Next::GiveUp(Why::Disabled)]);
    }
}
