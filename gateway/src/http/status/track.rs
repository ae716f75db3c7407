//! What the status page knows of one shared upstream beyond its current status: when it became
//! ready, its last death (cause, detail, time), and the last hour's deaths and recoveries.
//!
//! # Invariants
//!
//! 1. A track holds at most [`MAX_MARKS`] marks, none older than [`WINDOW`]; a death's detail
//!    (the server's or the transport's text) is kept within [`MAX_DETAIL`] bytes.
//! 2. Only the upstream's tracker task writes a track; readers copy it out under a short lock.

use std::{
    collections::VecDeque,
    sync::{Arc, Mutex, PoisonError},
    time::{Duration, SystemTime},
};

use tokio::{task::JoinHandle, time::Instant};
use tokio_util::sync::CancellationToken;

use mcp_resilient::{ConnectionState, state::RecvError};

use crate::{calls::bounded, upstream::Upstream};

/// How far back the timeline goes.
pub(in crate::http) const WINDOW: Duration = Duration::from_secs(3600);
/// The most marks one upstream's timeline keeps (a crash loop fills it; the oldest go first).
pub(in crate::http) const MAX_MARKS: usize = 512;
/// The longest death detail kept, in bytes.
pub(in crate::http) const MAX_DETAIL: usize = 200;

/// One point of the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::http) enum Mark {
    Died,
    Ready,
}

/// The last death seen.
#[derive(Debug, Clone)]
pub(in crate::http) struct LastDeath {
    pub(in crate::http) cause: &'static str,
    pub(in crate::http) detail: String,
    pub(in crate::http) at: SystemTime,
}

/// One upstream's history, as its tracker saw it.
#[derive(Debug, Default)]
pub(in crate::http) struct Track {
    /// When the current ready generation became ready; `None` while not ready.
    pub(in crate::http) ready_since: Option<Instant>,
    pub(in crate::http) last_death: Option<LastDeath>,
    /// `(when, what)`, oldest first.
    pub(in crate::http) marks: VecDeque<(SystemTime, Mark)>,
    /// When the current reconnection's next attempt starts, if one is waiting.
    pub(in crate::http) next_attempt: Option<SystemTime>,
}

impl Track {
    /// Takes in a new status (invariant 1).
    pub(in crate::http) fn see(&mut self, state: &ConnectionState, now: SystemTime, at: Instant) {
        self.next_attempt = None;
        match state {
            ConnectionState::Ready { .. } if self.ready_since.is_none() => {
                self.ready_since = Some(at);
                self.mark(now, Mark::Ready);
            }
            ConnectionState::Reconnecting { death, delay, .. } => {
                self.next_attempt = now.checked_add(*delay);
                self.died(death, now);
            }
            ConnectionState::Failed {
                death, retry_in, ..
            } => {
                self.next_attempt = retry_in.and_then(|d| now.checked_add(d));
                self.died(death, now);
            }
            _ => {}
        }
    }

    fn died(&mut self, death: &mcp_resilient::state::Death, now: SystemTime) {
        // A death ends a ready generation (or the first attempt); a failed attempt during
        // the outage only updates the last cause.
        let fresh = self.ready_since.take().is_some() || self.marks.is_empty();
        self.last_death = Some(LastDeath {
            cause: death.cause.as_str(),
            detail: bounded(&death.detail, MAX_DETAIL),
            at: now,
        });
        if fresh {
            self.mark(now, Mark::Died);
        }
    }

    fn mark(&mut self, now: SystemTime, mark: Mark) {
        self.marks.push_back((now, mark));
        while self.marks.len() > MAX_MARKS {
            self.marks.pop_front();
        }
        self.prune(now);
    }

    /// Drops the marks older than [`WINDOW`].
    pub(in crate::http) fn prune(&mut self, now: SystemTime) {
        while let Some((at, _)) = self.marks.front() {
            match now.duration_since(*at) {
                Ok(age) if age > WINDOW => {
                    self.marks.pop_front();
                }
                _ => break,
            }
        }
    }
}

/// A track shared between its tracker and the readers.
pub(in crate::http) type Shared = Arc<Mutex<Track>>;

pub(in crate::http) fn lock(track: &Shared) -> std::sync::MutexGuard<'_, Track> {
    track.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Starts `upstream`'s tracker: it reads the supervisor's events until `stop`, and tells
/// `changed` after each change.
pub(in crate::http) fn spawn(
    upstream: Arc<Upstream>,
    track: Shared,
    changed: Arc<tokio::sync::Notify>,
    stop: CancellationToken,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let supervisor = &upstream.supervisor;
        let mut events = supervisor.events();
        lock(&track).see(
            &supervisor.status().state,
            SystemTime::now(),
            Instant::now(),
        );
        loop {
            let status = tokio::select! {
                _ = stop.cancelled() => return,
                event = events.recv() => match event {
                    Ok(mcp_resilient::state::Event::State { status, .. }) => status,
                    Ok(_) => continue,
                    // Missed events: the current status is the catch-up.
                    Err(RecvError::Lagged(_)) => supervisor.status(),
                    Err(RecvError::Closed) => return,
                },
            };
            if upstream.retired() {
                // A reload removed or replaced it: its stop is not a death.
                return;
            }
            lock(&track).see(&status.state, SystemTime::now(), Instant::now());
            changed.notify_waiters();
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_resilient::state::{Cause, Death, Generation, Reason};

    fn lost(detail: &str) -> ConnectionState {
        ConnectionState::Reconnecting {
            attempt: 1,
            delay: Duration::from_millis(100),
            reason: Reason::ConnectionLost,
            death: Death::new(Cause::ProcessExited, detail),
        }
    }

    fn ready() -> ConnectionState {
        ConnectionState::Ready {
            generation: Generation::new(1).unwrap(),
            protocol: "2025-11-25".into(),
        }
    }

    #[test]
    fn the_timeline_keeps_at_most_its_bound_of_marks_and_a_bounded_detail() {
        let mut track = Track::default();
        let start = SystemTime::now();
        for i in 0..(MAX_MARKS as u64) {
            let now = start + Duration::from_millis(i * 10);
            track.see(&ready(), now, Instant::now());
            track.see(
                &lost(&"x".repeat(10_000)),
                now + Duration::from_millis(5),
                Instant::now(),
            );
        }
        assert_eq!(track.marks.len(), MAX_MARKS);
        let death = track.last_death.as_ref().unwrap();
        assert!(death.detail.len() <= MAX_DETAIL + '…'.len_utf8());
        assert_eq!(death.cause, "process_exited");
    }

    #[test]
    fn marks_older_than_the_window_are_dropped() {
        let mut track = Track::default();
        let long_ago = SystemTime::now() - WINDOW - Duration::from_secs(60);
        track.see(&ready(), long_ago, Instant::now());
        track.see(&lost("gone"), SystemTime::now(), Instant::now());
        assert_eq!(track.marks.len(), 1);
        assert_eq!(track.marks[0].1, Mark::Died);
    }
}
