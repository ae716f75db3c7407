//! The reconnect schedule and the outage budget.
//!
//! Why a budget and not a retry count: a server that crashes once a day should recover every
//! time, while a server that accepts the handshake and dies a second later must not be
//! reconnected forever. So one outage shares `max_attempts` consecutive failures, a generation
//! that dies before the stability window counts as a failure too, and only a generation that
//! stayed ready for the whole window refills the budget.

use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};
use rand::Rng;

use crate::config::Reconnect;

/// Delays from `initial_delay`, ×`multiplier`, capped at `max_delay`, each scaled by a uniform
/// factor in `[1 - jitter, 1 + jitter]` (and still capped).
pub(in crate::supervisor) struct Schedule {
    inner: backon::ExponentialBackoff,
    jitter: f64,
    max: Duration,
}

impl Schedule {
    pub(in crate::supervisor) fn new(policy: &Reconnect) -> Self {
        let inner = ExponentialBuilder::new()
            .with_min_delay(policy.initial_delay)
            .with_max_delay(policy.max_delay)
            .with_factor(policy.multiplier as f32)
            .without_max_times()
            .build();
        Schedule {
            inner,
            jitter: policy.jitter,
            max: policy.max_delay,
        }
    }
}

impl Iterator for Schedule {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        // backon computes in f32; drop the sub-microsecond noise that leaves behind.
        let base = self.inner.next().unwrap_or(self.max);
        let base = Duration::from_micros(base.as_micros() as u64);
        if self.jitter <= 0.0 {
            return Some(base);
        }
        let factor = rand::rng().random_range((1.0 - self.jitter)..=(1.0 + self.jitter));
        Some(base.mul_f64(factor).min(self.max))
    }
}

/// Consecutive failures of the current outage, and the schedule that spaces them.
pub(in crate::supervisor) struct Budget {
    policy: Reconnect,
    schedule: Schedule,
    failures: u32,
}

impl Budget {
    pub(in crate::supervisor) fn new(policy: &Reconnect) -> Self {
        Budget {
            policy: policy.clone(),
            schedule: Schedule::new(policy),
            failures: 0,
        }
    }

    /// Counts one failure; `None` when that spent the budget, else the delay before the next try.
    pub(in crate::supervisor) fn fail(&mut self) -> Option<Duration> {
        self.failures += 1;
        if self.failures >= self.policy.max_attempts {
            return None;
        }
        self.schedule.next()
    }

    /// The next delay without counting a failure (the loss of a stable generation).
    pub(in crate::supervisor) fn next_delay(&mut self) -> Duration {
        self.schedule.next().unwrap_or(self.policy.max_delay)
    }

    /// Consecutive failures so far.
    pub(in crate::supervisor) fn failures(&self) -> u32 {
        self.failures
    }

    /// A full budget and a fresh schedule (after the stability window, or `restart()`).
    pub(in crate::supervisor) fn refill(&mut self) {
        *self = Budget::new(&self.policy);
    }

    /// How long a generation must stay ready to refill the budget.
    pub(in crate::supervisor) fn stability_window(&self) -> Duration {
        self.policy.effective_stability_window()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(jitter: f64, max_attempts: u32) -> Reconnect {
        Reconnect {
            initial_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            multiplier: 2.0,
            jitter,
            max_attempts,
            ..Reconnect::default()
        }
    }

    #[test]
    fn delays_double_up_to_the_cap() {
        let delays: Vec<u64> = Schedule::new(&policy(0.0, 10))
            .take(6)
            .map(|d| d.as_millis() as u64)
            .collect();
        assert_eq!(delays, [100, 200, 400, 800, 1000, 1000]);
    }

    #[test]
    fn jitter_stays_within_bounds_and_varies() {
        let delays: Vec<Duration> = Schedule::new(&policy(0.2, 10)).take(200).collect();
        assert!(delays[0] >= Duration::from_millis(80) && delays[0] <= Duration::from_millis(120));
        assert!(delays.iter().all(|d| *d <= Duration::from_millis(1000)));
        let capped: Vec<_> = delays[10..].iter().collect();
        assert!(capped.iter().all(|d| **d >= Duration::from_millis(800)));
        assert!(
            capped.windows(2).any(|w| w[0] != w[1]),
            "jitter must vary the delays"
        );
    }

    #[test]
    fn budget_is_spent_after_max_attempts_failures() {
        let mut budget = Budget::new(&policy(0.0, 3));
        assert_eq!(budget.failures(), 0);
        assert_eq!(budget.fail(), Some(Duration::from_millis(100)));
        assert_eq!(budget.fail(), Some(Duration::from_millis(200)));
        assert_eq!(budget.fail(), None);
        assert_eq!(budget.failures(), 3);
    }

    #[test]
    fn refill_restores_the_budget_and_the_schedule() {
        let mut budget = Budget::new(&policy(0.0, 3));
        budget.fail();
        budget.fail();
        budget.refill();
        assert_eq!(budget.failures(), 0);
        assert_eq!(budget.fail(), Some(Duration::from_millis(100)));
    }
}
