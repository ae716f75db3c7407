//! A member's rest in its liveness group ([`super::origin`]), and the group's one timer: so that
//! a member the group proved alive sleeps until something is due for it, instead of waking every
//! interval to look at the group's answer.
//!
//! A resting member wakes for its own check (once in `session_check_every` intervals), its own
//! signal (a miss counted, its stream ended), the group's probe handed to it, or the group's
//! probe going unanswered. The timer wakes when the group's answer goes stale and hands the next
//! probe to one resting member, the one resting longest whose own rules allow a probe then. A
//! group of N idle members thus wakes about three times per interval (the timer, the member it
//! hands the probe to) plus the members' own checks, where N own timers woke N times.
//!
//! # Invariants
//!
//! 1. A member's own rules decide when it probes, whoever wakes it: the timer hands the group's
//!    probe only to a member whose rules (its byte clock, its backoff after "overloaded") allow
//!    one at that moment, and the member, awake, still waits out its own rules before its turn.
//! 2. A member alone in its group does not rest: it keeps its own clock, as a session probing
//!    for itself does.
//! 3. A member lies down only while the group's answer is less than an interval old, checked
//!    under the lock under which an unanswered group probe wakes every resting member, so that
//!    wake is never missed. Woken so (or by a miss of its own), a member probes at its next
//!    turn (its resting clock's, one interval apart), not at once: N members do not probe a hung
//!    origin in one burst.
//! 4. The timer holds its group weakly and the group aborts it when dropped. A timer whose
//!    runtime ended is started again by the next member that lies down.

use std::{
    sync::{Arc, Weak, atomic::Ordering},
    time::Duration,
};

use tokio::{sync::Notify, time::Instant};

pub(in crate::supervisor) use super::resting::{Resting, Woke};
use super::{
    live::Live,
    origin::{OriginBeat, OriginProof},
};
use crate::clock::after;

/// A member on the group's list; taken off when its rest ends, however it ends.
struct Laid<'a> {
    proof: &'a OriginProof,
    key: u64,
}

impl Drop for Laid<'_> {
    fn drop(&mut self) {
        self.proof.state().resting.remove(&self.key);
    }
}

impl OriginBeat {
    /// Rests this member until something is due for it (see the module), given its rules:
    /// its `interval` as it stands, its next turn `not_before`, and when its own check is due.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: the member leaves the group's list when the future is dropped, and a probe
    /// handed to it meanwhile is handed again after one probe timeout.
    pub(in crate::supervisor) async fn rest(
        &self,
        live: &Live,
        interval: Duration,
        not_before: Instant,
        own_check: Instant,
    ) -> Woke {
        if self.proof.members() < 2 {
            return Woke::NotLaid;
        }
        let suspicion = live.misses.counted();
        tokio::pin!(suspicion);
        suspicion.as_mut().enable();
        if live.misses.count() > 0 {
            return Woke::NotLaid;
        }
        let member = Arc::new(Resting::new(live.activity.clone(), interval, not_before));
        let Some(_laid) = self.lay(&member) else {
            return Woke::NotLaid;
        };
        self.keep_timer();
        let woke = tokio::select! {
            () = tokio::time::sleep_until(own_check) => Woke::OwnCheck,
            () = member.wake.notified() => member.why(),
            () = suspicion => Woke::Suspect,
            () = live.activity.own_signal() => Woke::OwnSignal,
            () = live.dead.cancelled() => Woke::Dead,
        };
        self.woke();
        woke
    }

    /// Counts one wake-up of a member's heartbeat (for the tests' hook).
    pub(in crate::supervisor) fn woke(&self) {
        self.proof.wakes.fetch_add(1, Ordering::Relaxed);
    }

    /// Puts `member` on the group's list, unless the group's answer is stale (invariant 3).
    fn lay(&self, member: &Arc<Resting>) -> Option<Laid<'_>> {
        let proof = &*self.proof;
        let mut state = proof.state();
        if state.last.is_none_or(|at| at.elapsed() >= proof.interval) {
            return None;
        }
        let key = state.next_rest;
        state.next_rest += 1;
        state.resting.insert(key, member.clone());
        let poke = std::mem::take(&mut state.timer_waits);
        drop(state);
        if poke {
            proof.poke.notify_one();
        }
        Some(Laid { proof, key })
    }

    /// Starts the group's timer unless it runs (invariant 4).
    fn keep_timer(&self) {
        let mut timer = self.proof.timer();
        if timer.as_ref().is_some_and(|task| !task.is_finished()) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let group = Arc::downgrade(&self.proof);
        *timer = Some(runtime.spawn(drive(group, self.proof.poke.clone())));
    }
}

/// The group's timer: each tick, the next moment something may be due, or none while no member
/// rests (a member lying down pokes it then).
async fn drive(group: Weak<OriginProof>, poke: Arc<Notify>) {
    loop {
        let next = match group.upgrade() {
            Some(proof) => {
                proof.wakes.fetch_add(1, Ordering::Relaxed);
                proof.tick(Instant::now())
            }
            None => return,
        };
        let poked = poke.notified();
        match next {
            Some(at) => tokio::select! {
                () = tokio::time::sleep_until(at) => {}
                () = poked => {}
            },
            None => poked.await,
        }
    }
}

impl OriginProof {
    /// One tick of the timer at `now`: when the group's answer is stale and nobody probes for
    /// it, hands the probe to the member resting longest whose rules allow one now
    /// (invariant 1). Says when to look again.
    fn tick(&self, now: Instant) -> Option<Instant> {
        let mut state = self.state();
        state.timer_waits = false;
        let waits = [
            (state.probing, self.timeout),
            (state.last, self.interval),
            (state.asked, self.timeout),
        ];
        for (since, wait) in waits {
            if let Some(until) = since.map(|at| after(at, wait))
                && now < until
            {
                return Some(until);
            }
        }
        let mut earliest: Option<Instant> = None;
        let mut chosen = None;
        for (&key, member) in &state.resting {
            let due = member.due(now);
            if due <= now {
                chosen = Some(key);
                break;
            }
            earliest = Some(earliest.map_or(due, |at| at.min(due)));
        }
        if let Some(member) = chosen.and_then(|key| state.resting.remove(&key)) {
            state.asked = Some(now);
            drop(state);
            member.wake(Woke::Duty);
            return Some(after(now, self.timeout));
        }
        // Nobody rests: the next member to lie down pokes the timer.
        state.timer_waits = earliest.is_none();
        earliest
    }
}

/// The first turn of a resting clock (turns `interval` apart from `anchor`) at or after `now`.
pub(in crate::supervisor) fn next_turn(
    anchor: Instant,
    interval: Duration,
    now: Instant,
) -> Instant {
    if anchor >= now || interval.is_zero() {
        return anchor.max(now);
    }
    let (behind, interval) = ((now - anchor).as_nanos(), interval.as_nanos());
    let ahead = behind.div_ceil(interval) * interval - behind;
    after(
        now,
        Duration::from_nanos(u64::try_from(ahead).unwrap_or(u64::MAX)),
    )
}

#[cfg(test)]
#[path = "origin_rest_tests.rs"]
mod tests;
