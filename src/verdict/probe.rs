//! The probe policy: which silences count as misses, how misses add up, and how an overloaded
//! server stretches the heartbeat.
//!
//! # Invariants
//!
//! 1. Misses are *consecutive in time*: a probe that was sent before the last counted miss was
//!    observed overlapped that miss, and does not count again. Ten callers probing one dead
//!    connection at once are one miss, not ten.
//! 2. Silence while a call is in flight inside its deadline is [`Verdict::Busy`](super::Verdict)
//!    and never counts — unless the transport has not been able to write for a whole probe
//!    timeout (a full pipe is not busy, it is wedged), or a call already ran past its deadline
//!    with no answer since.
//! 3. An overloaded probe answer proves the server alive; the interval doubles, capped at 4×
//!    the configured one, and returns to 1× after a clean interval.

use std::sync::Mutex;

use tokio::time::Instant;

/// Consecutive misses of one generation, shared by the heartbeat, pre-call probes and suspect
/// call answers.
#[derive(Debug, Default)]
pub(crate) struct Misses {
    state: Mutex<MissState>,
    /// Woken at each counted miss: a heartbeat resting in its origin's group wakes for it.
    counted: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct MissState {
    count: u32,
    /// When the last counted miss was observed.
    last_counted: Option<Instant>,
}

impl Misses {
    fn lock(&self) -> std::sync::MutexGuard<'_, MissState> {
        // The state is two plain fields, never left half-written.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Proof of life: the next miss is the first again.
    pub(crate) fn clear(&self) {
        *self.lock() = MissState::default();
    }

    /// Records the miss of a probe (or a suspect answer to a request) sent at `sent`. Returns
    /// the consecutive count including it, or `None` when it overlapped a miss already counted.
    pub(crate) fn record(&self, sent: Instant) -> Option<u32> {
        let mut state = self.lock();
        if state.last_counted.is_some_and(|last| sent < last) {
            return None;
        }
        state.count += 1;
        state.last_counted = Some(Instant::now());
        let count = state.count;
        drop(state);
        self.counted.notify_waiters();
        Some(count)
    }

    /// Resolves at the next counted miss (after it was enabled or first polled).
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: it only waits.
    pub(crate) fn counted(&self) -> tokio::sync::futures::Notified<'_> {
        self.counted.notified()
    }

    /// Consecutive misses so far.
    pub(crate) fn count(&self) -> u32 {
        self.lock().count
    }
}

/// What was going on when a probe went unanswered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Load {
    /// Calls sent and still inside their deadline.
    pub(crate) calls_in_flight: usize,
    /// A call ran past its deadline and nothing has arrived since.
    pub(crate) overdue: bool,
    /// A write to the transport has been pending for longer than a probe timeout.
    pub(crate) write_stalled: bool,
}

impl Load {
    /// True when this silence is a busy server, not a miss (invariant 2).
    pub(crate) fn is_busy(self) -> bool {
        self.calls_in_flight > 0 && !self.overdue && !self.write_stalled
    }
}

/// The heartbeat interval's stretch factor under overload (invariant 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stretch(u32);

impl Default for Stretch {
    fn default() -> Self {
        Stretch(1)
    }
}

impl Stretch {
    const MAX: u32 = 4;

    /// A probe was answered "overloaded": wait twice as long next time, at most 4×.
    pub(crate) fn overloaded(&mut self) {
        self.0 = (self.0 * 2).min(Self::MAX);
    }

    /// A clean interval: back to the configured one.
    pub(crate) fn clean(&mut self) {
        self.0 = 1;
    }

    /// The interval to wait now.
    pub(crate) fn apply(self, interval: std::time::Duration) -> std::time::Duration {
        interval * self.0
    }
}

/// How long the heartbeat waits before its next probe (zero: probe now), given how long ago the
/// last message (`since_message`) and the last bytes of any kind (`since_bytes`) arrived.
///
/// A message within `interval` puts the probe off until `interval` after it. Bytes without a
/// message put it off until `interval` after them, but never past `2 × interval` after the last
/// message, and not at all once a probe has been missed (`suspect`): a trickle of bytes cannot
/// keep a session alive that no longer answers.
pub(crate) fn probe_wait(
    interval: std::time::Duration,
    since_message: std::time::Duration,
    since_bytes: std::time::Duration,
    suspect: bool,
) -> std::time::Duration {
    let by_message = interval.saturating_sub(since_message);
    if !by_message.is_zero() || suspect {
        return by_message;
    }
    let by_bytes = interval.saturating_sub(since_bytes);
    by_bytes.min((interval * 2).saturating_sub(since_message))
}

#[cfg(test)]
mod wait_tests {
    use super::probe_wait;
    use std::time::Duration;

    const S: Duration = Duration::from_secs(1);

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_message_within_the_interval_puts_the_probe_off_until_an_interval_after_it() {
        assert_eq!(probe_wait(S, ms(300), ms(300), false), ms(700));
        assert_eq!(probe_wait(S, ms(300), ms(0), false), ms(700));
        assert_eq!(probe_wait(S, ms(1000), ms(1000), false), ms(0));
        assert_eq!(probe_wait(S, ms(5000), ms(5000), false), ms(0));
    }

    #[test]
    fn bytes_without_a_message_put_it_off_by_one_interval_at_most() {
        // Bytes 200 ms ago, the last message 1.2 s ago: probe 800 ms from now.
        assert_eq!(probe_wait(S, ms(1200), ms(200), false), ms(800));
        // Bytes just now, the message 1.7 s ago: 2 intervals after the message, not 1 s from now.
        assert_eq!(probe_wait(S, ms(1700), ms(0), false), ms(300));
        // A steady trickle of bytes: probed 2 intervals after the last message, every time.
        for since_message in [2000, 2001, 10_000] {
            assert_eq!(probe_wait(S, ms(since_message), ms(0), false), ms(0));
        }
    }

    #[test]
    fn after_a_miss_bytes_put_nothing_off() {
        assert_eq!(probe_wait(S, ms(1200), ms(0), true), ms(0));
        // A message still does (it also clears the misses, in the loop).
        assert_eq!(probe_wait(S, ms(100), ms(0), true), ms(900));
    }
}
