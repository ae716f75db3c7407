//! The one timer of a liveness group ([`super::origin`]): it drives the group's probe, so that a
//! member the group proved alive sleeps until its own check is due instead of waking every
//! interval to look at the group's answer.
//!
//! A group of N idle members then wakes about twice per interval (the timer, and the member it
//! hands the group's probe to) plus the members' own checks (one each per
//! `session_check_every` intervals), instead of N times per interval: at 10,000 sessions and a
//! 30 s heartbeat, a few wake-ups a second where there were 333.
//!
//! # Invariants
//!
//! 1. The timer holds its group weakly: it ends at its first tick after the last member let the
//!    group go, and the group aborts it when dropped. A timer whose runtime ended is started
//!    again by the next member that rests ([`OriginBeat::keep_timer`]).
//! 2. When the group's answer is stale and no member's probe for the group is under way, the
//!    timer hands the probe to one resting member ([`OriginProof::duty`]) and asks again after
//!    one probe timeout if the group is still unanswered then (the member it woke may have
//!    ended meanwhile).
//! 3. A member rests ([`Rest`]) only while the group's answer is less than an interval old,
//!    and wakes for its own check, the group's probe handed to it, its own signal, or the
//!    group's probe going unanswered ([`OriginProof::stale`]): then every resting member wakes
//!    and probes for itself, as when its own turn finds the group's answer stale.

use std::sync::{Arc, Weak, atomic::Ordering};

use tokio::time::Instant;

use super::origin::{OriginBeat, OriginProof};

/// Why a resting member woke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::supervisor) enum Rest {
    /// Its own check is due.
    Due,
    /// The timer handed it the group's probe.
    Duty,
    /// The group's probe went unanswered (or the group's answer was already stale): probe for
    /// itself.
    Stale,
    /// Its own signal is suspect (told by the transport).
    OwnSignal,
}

impl OriginBeat {
    /// Rests until `own_due`, or until the group hands this member its probe, the group's probe
    /// goes unanswered, or `own_signal` resolves (invariant 3). Returns at once with
    /// [`Rest::Stale`] when the group's answer is already an interval old.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: it only waits. A duty handed to a member whose rest was dropped is handed
    /// again after one probe timeout (invariant 2).
    pub(in crate::supervisor) async fn rest(
        &self,
        own_due: Instant,
        own_signal: impl std::future::Future<Output = ()>,
    ) -> Rest {
        self.keep_timer();
        let stale = self.proof.stale.notified();
        tokio::pin!(stale);
        // Registered before the answer is read, so an unanswered probe ending meanwhile wakes us.
        stale.as_mut().enable();
        if !self.proof.answered_within(self.interval) {
            return Rest::Stale;
        }
        let woke = tokio::select! {
            () = tokio::time::sleep_until(own_due) => Rest::Due,
            () = self.proof.duty.notified() => Rest::Duty,
            () = stale => Rest::Stale,
            () = own_signal => Rest::OwnSignal,
        };
        self.woke();
        woke
    }

    /// Counts one wake-up of a member's heartbeat (for the tests' hook).
    pub(in crate::supervisor) fn woke(&self) {
        self.proof.counts.wakes.fetch_add(1, Ordering::Relaxed);
    }

    /// Starts the group's timer unless it runs (invariant 1).
    pub(in crate::supervisor) fn keep_timer(&self) {
        let mut timer = self.proof.timer();
        if timer.as_ref().is_some_and(|task| !task.is_finished()) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let group = Arc::downgrade(&self.proof);
        *timer = Some(runtime.spawn(drive(group, self.interval, self.timeout)));
    }
}

/// The group's timer: each tick, the next moment something may be due (invariant 2).
async fn drive(
    group: Weak<OriginProof>,
    interval: std::time::Duration,
    timeout: std::time::Duration,
) {
    loop {
        let next = {
            let Some(proof) = group.upgrade() else {
                return;
            };
            proof.counts.wakes.fetch_add(1, Ordering::Relaxed);
            proof.tick(interval, timeout)
        };
        tokio::time::sleep_until(next).await;
    }
}

impl OriginProof {
    /// One tick of the timer: hands the group's probe to a resting member when it is due, and
    /// says when to look again.
    fn tick(&self, interval: std::time::Duration, timeout: std::time::Duration) -> Instant {
        let now = Instant::now();
        let mut state = self.state();
        if let Some(sent) = state.probing
            && now < sent + timeout
        {
            return sent + timeout;
        }
        if let Some(last) = state.last
            && now < last + interval
        {
            return last + interval;
        }
        if let Some(asked) = state.asked
            && now < asked + timeout
        {
            return asked + timeout;
        }
        state.asked = Some(now);
        drop(state);
        self.duty.notify_one();
        now + timeout
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::supervisor::session::origin::{Turn, join};

    const S: Duration = Duration::from_secs(1);

    fn url(s: &str) -> url::Url {
        url::Url::parse(s).unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn a_resting_member_is_handed_the_groups_probe_when_its_answer_goes_stale() {
        let url = url("http://127.0.0.1:9/duty");
        let group = join(&url, S, S / 3, 20).unwrap();
        assert_eq!(group.turn().await, Turn::Probe { for_group: true });
        group.proof.finished(true);
        let member = join(&url, S, S / 3, 20).unwrap();
        let far = Instant::now() + 20 * S;
        let resting = tokio::spawn(async move { member.rest(far, std::future::pending()).await });
        assert_eq!(resting.await.unwrap(), Rest::Duty);
        // Woken when the answer went stale, not at its own check.
        assert!(Instant::now() < far);
    }

    #[tokio::test(start_paused = true)]
    async fn an_unanswered_group_probe_wakes_every_resting_member() {
        let url = url("http://127.0.0.1:9/stale");
        let prober = join(&url, S, S / 3, 20).unwrap();
        assert_eq!(prober.turn().await, Turn::Probe { for_group: true });
        prober.proof.finished(true);
        let far = Instant::now() + 20 * S;
        let mut resting = Vec::new();
        for _ in 0..3 {
            let member = join(&url, S, S / 3, 20).unwrap();
            resting.push(tokio::spawn(async move {
                member.rest(far, std::future::pending()).await
            }));
        }
        tokio::task::yield_now().await;
        assert_eq!(prober.turn().await, Turn::Proven);
        // The group's next probe goes out (as if handed to it) and is not answered.
        prober.proof.finished(false);
        for member in resting {
            assert_eq!(member.await.unwrap(), Rest::Stale);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_member_rests_only_while_the_groups_answer_is_fresh() {
        let group = join(&url("http://127.0.0.1:9/fresh"), S, S / 3, 20).unwrap();
        let far = Instant::now() + 20 * S;
        assert_eq!(group.rest(far, std::future::pending()).await, Rest::Stale);
    }
}
