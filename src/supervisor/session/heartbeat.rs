//! The heartbeat: an idle-only liveness probe per generation.
//!
//! Every `interval`, unless a message arrived within the last `interval`, send a probe (`ping`,
//! or `server/discover` for servers that have no ping) with `timeout`. After a miss the next
//! probe goes out at once, so `failures` consecutive misses are seen within
//! `interval + failures × timeout` of the last message.
//!
//! Bytes that are not a message (an SSE comment or keepalive, part of a long answer) put a probe
//! off too, but by one `interval` at most and never after a miss ([`probe_wait`]): a server
//! that keeps a connection warm without answering is still found out, within
//! `2 × interval + failures × timeout` of its last message. It is the only detector of a dead
//! Streamable HTTP server or a half-open TCP connection, and the one that catches a hung stdio
//! child. What a probe's outcome means is the verdict module's business
//! ([`crate::verdict::probe`]): a busy server is not a dead one, and an overloaded one is alive.
//!
//! With the origin scope ([`super::origin`]), a turn at which the group of this session's
//! endpoint was answered less than an interval ago sends nothing: that answer proves the session
//! alive, and the session rests in its group ([`super::origin_rest`]) until something is due for
//! it. The session still probes for itself when its own signal is suspect (a miss; its stream
//! ended and waits to open again, told by the transport), when the group's answer is stale, and
//! once in every `session_check_every` intervals (once in [`HELD_STREAM_STRETCH`] times that
//! while its standalone stream is held on a `PING`ed HTTP/2 connection).

use std::{sync::Arc, time::Duration};

use tokio::time::Instant;

use rand::Rng;

use super::{
    live::Live,
    origin::{OriginBeat, Turn},
    origin_rest::{Woke, next_turn},
    probe::{Probed, Prober},
};
use crate::verdict::probe::{Stretch, probe_wait};

/// One generation's heartbeat: how often it probes, and with the origin scope, the group whose
/// answers stand in for its own probes ([`super::origin`]). What a probe's outcome means is
/// decided by [`Live::probe`](super::live::Live) (the generation's
/// [`ProbeRules`](super::live::ProbeRules)).
#[derive(Debug)]
pub(in crate::supervisor) struct Heartbeat {
    pub(in crate::supervisor) interval: Duration,
    /// The group of this session's endpoint ([`HeartbeatScope::Origin`] on a remote
    /// transport); `None`: the session probes for itself every interval.
    ///
    /// [`HeartbeatScope::Origin`]: crate::config::HeartbeatScope::Origin
    pub(in crate::supervisor) origin: Option<OriginBeat>,
}

/// Where a heartbeat stands between its turns.
struct Beat {
    stretch: Stretch,
    /// The next probe goes out no earlier than this: an answer that is not a JSON-RPC message
    /// (a 429, a 403) does not reset the idle clock, so without it the loop would spin.
    not_before: Instant,
    /// With the origin scope: when this session's own check is due, whatever the group's
    /// answers say. Started at random, so that sessions started together do not all check
    /// themselves in the same interval.
    own_check: Instant,
    /// The transport said this session's own signal is suspect (its stream ended and waits to
    /// open again): it probes for itself at once.
    own_signal: bool,
    /// Own checks in a row that its held stream stood in for ([`HELD_STREAM_STRETCH`]).
    passed_over: u32,
}

/// With its standalone stream held on a `PING`ed HTTP/2 connection, a session checks itself
/// once in this many of its check periods: the stream stands in for the others (see
/// [`HeartbeatScope`](crate::config::HeartbeatScope)).
const HELD_STREAM_STRETCH: u32 = 4;

impl Heartbeat {
    /// Runs until the generation is reported dead (by anyone) or the task is aborted.
    pub(in crate::supervisor) async fn run(self, live: Arc<Live>) {
        let now = Instant::now();
        let mut beat = Beat {
            stretch: Stretch::default(),
            not_before: now,
            own_check: self.origin.as_ref().map_or(now, |origin| {
                let first = rand::rng().random_range(1..=origin.check_every);
                later(now, self.interval, first)
            }),
            own_signal: false,
            // Started at random too, so that the checks of sessions that hold their streams
            // spread over the longer period from the start.
            passed_over: rand::rng().random_range(0..HELD_STREAM_STRETCH),
        };
        loop {
            let interval = beat.stretch.apply(self.interval);
            let idle = live.activity.idle();
            let suspect = live.misses.count() > 0;
            let wait = probe_wait(interval, idle, live.activity.quiet(), suspect)
                .max(beat.not_before.saturating_duration_since(Instant::now()));
            if !wait.is_zero() && !beat.own_signal {
                if idle < self.interval {
                    live.misses.clear();
                }
                let signal = live.activity.own_signal();
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = live.dead.cancelled() => return,
                    () = signal, if self.origin.is_some() => beat.own_signal = true,
                }
                self.origin.as_ref().inspect(|origin| origin.woke());
                continue;
            }
            if let Some(origin) = &self.origin
                && !beat.own_signal
                && !suspect
                && Instant::now() >= beat.own_check
                && beat.passed_over + 1 < HELD_STREAM_STRETCH
                && live.activity.stream_held()
            {
                // Its held stream stands in for this check: the next is a period later.
                beat.passed_over += 1;
                beat.own_check = later(Instant::now(), self.interval, origin.check_every);
            }
            let mut for_group = false;
            if let Some(origin) = &self.origin
                && !beat.own_signal
                && !suspect
                && Instant::now() < beat.own_check
            {
                let turn = tokio::select! {
                    turn = origin.turn(self.interval) => turn,
                    _ = live.dead.cancelled() => return,
                };
                match turn {
                    // The group's answer proves this session alive for this interval.
                    Turn::Proven => {
                        beat.not_before = crate::clock::deadline_in(interval);
                        match self.rest(&live, &mut beat).await {
                            true => continue,
                            false => return,
                        }
                    }
                    Turn::Probe { for_group: group } => for_group = group,
                }
            }
            beat.own_signal = false;
            let probed = tokio::select! {
                probed = live.probe(Prober::Heartbeat, Duration::MAX) => probed,
                _ = live.dead.cancelled() => return,
            };
            // After a miss the next probe goes out at once; after anything else, an interval later.
            beat.not_before = crate::clock::deadline_in(interval);
            let answered = matches!(probed, Some(Probed::Alive | Probed::Overloaded { .. }));
            if let Some(origin) = &self.origin {
                // A probe on this session's own id is its own check, whoever it was for.
                beat.own_check = later(Instant::now(), self.interval, origin.check_every);
                beat.passed_over = 0;
                match for_group {
                    true => origin.proof.finished(answered),
                    false if answered => origin.proof.answered(),
                    false => {}
                }
            }
            if !self.judged(&live, &mut beat, probed).await {
                return;
            }
            // Answered, it stamped the group: the session rests in it.
            if answered && !self.rest(&live, &mut beat).await {
                return;
            }
        }
    }

    /// Carries out what a heartbeat probe's outcome means for the heartbeat; false when it
    /// ends (the generation is dead, or has no probes).
    async fn judged(&self, live: &Live, beat: &mut Beat, probed: Option<Probed>) -> bool {
        match probed {
            // No probe rules: this generation has no heartbeat after all.
            None => return false,
            Some(Probed::Alive) => beat.stretch.clean(),
            Some(Probed::Overloaded { status }) => {
                beat.stretch.overloaded();
                beat.not_before = crate::clock::deadline_in(beat.stretch.apply(self.interval));
                tracing::debug!(server = %live.server, generation = %live.generation, status, "probe answered overloaded; probing less often");
            }
            // The server is working on a call inside its deadline: look again an interval
            // later. (A heartbeat probe waits the whole probe timeout, so is never cut short.)
            Some(Probed::Busy | Probed::CutShort(_)) => {}
            // No token to probe with: nothing learned about the server; an interval later.
            Some(Probed::NotSent(detail)) => {
                tracing::debug!(server = %live.server, generation = %live.generation, "probe not sent: {detail}");
            }
            Some(Probed::Missed { dead: true, .. } | Probed::Unauthorized(_)) => return false,
            Some(Probed::Missed { .. }) => beat.not_before = Instant::now(),
            Some(Probed::Dead(_)) => {
                live.dead.cancelled().await;
                return false;
            }
        }
        true
    }

    /// With the origin scope, rests in the group until something is due for this session
    /// ([`OriginBeat::rest`]); false when the generation is dead.
    async fn rest(&self, live: &Live, beat: &mut Beat) -> bool {
        let Some(origin) = &self.origin else {
            return true;
        };
        let interval = beat.stretch.apply(self.interval);
        let woke = origin
            .rest(live, interval, beat.not_before, beat.own_check)
            .await;
        match woke {
            Woke::Dead => return false,
            Woke::OwnSignal => beat.own_signal = true,
            // Its next turn on its resting clock, as if it had woken every interval.
            Woke::Stale | Woke::Suspect => {
                beat.not_before = next_turn(beat.not_before, interval, Instant::now());
            }
            Woke::NotLaid | Woke::OwnCheck | Woke::Duty => {}
        }
        true
    }
}

/// `intervals` intervals after `at` (far in the future where that overflows).
fn later(at: Instant, interval: Duration, intervals: u32) -> Instant {
    crate::clock::after(at, interval.saturating_mul(intervals))
}
