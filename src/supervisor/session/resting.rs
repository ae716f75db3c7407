//! A member resting in its liveness group, as the group sees it ([`super::origin_rest`]): what
//! its own rules say about probing, and how to wake it.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU8, Ordering},
    },
    time::Duration,
};

use tokio::{sync::Notify, time::Instant};

use crate::{clock::after, transport::Activity, verdict::probe::probe_wait};

/// What ended a member's rest, or why it did not lie down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(in crate::supervisor) enum Woke {
    /// It did not rest: alone in its group, suspect, or the group's answer stale.
    NotLaid,
    /// Its own check is due.
    OwnCheck,
    /// The timer handed it the group's probe.
    Duty,
    /// The group's probe went unanswered: probe for itself at its next turn.
    Stale,
    /// One of its own probes or calls was a miss: probe for itself at its next turn.
    Suspect,
    /// The transport said its own signal is suspect: probe for itself at once.
    OwnSignal,
    /// Its generation ended.
    Dead,
}

/// A resting member, as the group sees it: what its rules say, and how to wake it.
#[derive(Debug)]
pub(in crate::supervisor) struct Resting {
    activity: Arc<Activity>,
    /// Its heartbeat interval as it stands (stretched after "overloaded").
    interval: Duration,
    /// Its next turn when it lay down: no probe before it (after "overloaded", the backoff).
    not_before: Instant,
    pub(super) wake: Notify,
    why: AtomicU8,
}

impl Resting {
    pub(super) fn new(activity: Arc<Activity>, interval: Duration, not_before: Instant) -> Self {
        Resting {
            activity,
            interval,
            not_before,
            wake: Notify::new(),
            why: AtomicU8::new(Woke::Stale as u8),
        }
    }

    /// The earliest moment this member's rules allow a probe, as of `now`.
    pub(super) fn due(&self, now: Instant) -> Instant {
        let activity = &self.activity;
        let wait = probe_wait(self.interval, activity.idle(), activity.quiet(), false);
        self.not_before.max(after(now, wait))
    }

    /// Wakes the member, for `why`. Each member is woken once: whoever wakes it takes it off
    /// the group's list first.
    pub(super) fn wake(&self, why: Woke) {
        self.why.store(why as u8, Ordering::Release);
        self.wake.notify_one();
    }

    pub(super) fn why(&self) -> Woke {
        match self.why.load(Ordering::Acquire) {
            x if x == Woke::Duty as u8 => Woke::Duty,
            _ => Woke::Stale,
        }
    }
}
