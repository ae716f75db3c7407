//! The two policies a supervisor follows: how it reconnects and how it probes.

use std::time::Duration;

/// How a supervisor reconnects after a generation died or an attempt failed.
///
/// Why these numbers: delays start at 500 ms and double up to 30 s, with ±30 % jitter so a fleet of
/// clients that lost the same server does not come back in lockstep (±30 % spreads a synchronized
/// wave over 0.6 × the delay, so no 100 ms window of a 500 ms first delay carries more than a third
/// of it; ±20 %, gRPC's figure, leaves half of it in one window). Ten consecutive failures
/// (about 2.5 minutes) outlast an ordinary 30–90 s pod restart. The budget is refilled only by a
/// generation that stayed ready for the stability window, so a server that accepts and then crashes
/// at once still exhausts it instead of causing a reconnect storm.
///
/// The bounds below are checked by [`ServerConfig::resolve`](super::ServerConfig::resolve) only
/// when `enabled` is true.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Reconnect {
    /// Whether to reconnect at all; when false, the first death or failed attempt is final.
    ///
    /// # Default
    /// `true`
    pub(crate) enabled: bool,
    /// Delay before the first retry of an outage. Must be greater than zero.
    ///
    /// # Default
    /// 500 ms; at most 24 h
    pub(crate) initial_delay: Duration,
    /// Cap on the delay between attempts. Must be at least `initial_delay`.
    ///
    /// # Default
    /// 30 s; at most 24 h
    pub(crate) max_delay: Duration,
    /// Factor applied to the delay after each failed attempt. Must be finite and at least 1.0.
    ///
    /// # Default
    /// 2.0
    pub(crate) multiplier: f64,
    /// Relative random spread applied to each delay (0.3 = ±30 %). Must be finite, in `[0, 1)`.
    ///
    /// # Default
    /// 0.3
    pub(crate) jitter: f64,
    /// Consecutive failed attempts allowed per outage (the outage budget). Must be at least 1.
    ///
    /// # Default
    /// 10
    pub(crate) max_attempts: u32,
    /// How long a generation must stay ready before the outage budget is refilled; `None` means
    /// `max_delay` (see [`Reconnect::effective_stability_window`]). If set, must be greater than zero.
    ///
    /// # Default
    /// `None` (= `max_delay`); at most 24 h
    pub(crate) stability_window: Option<Duration>,
    /// Attempts per second (first attempts and reconnects) this process starts against one web
    /// origin (`host:port`), across every supervisor whose servers share it and that uses the
    /// same figure; attempts past it wait their turn. It keeps many sessions to one (re)started
    /// server a bounded stream, not a herd: in any window `w`, at most `r × w + max(1, r / 100)`
    /// attempts start (220 in any 100 ms at the default). Stdio servers are not limited; a
    /// `restart()` does not wait. Must be at least 1 (checked when `enabled`).
    ///
    /// # Default
    /// 2,000
    pub(crate) origin_attempts_per_second: u32,
}

impl Default for Reconnect {
    fn default() -> Self {
        Self {
            enabled: true,
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            multiplier: 2.0,
            jitter: 0.3,
            max_attempts: 10,
            stability_window: None,
            origin_attempts_per_second: 2000,
        }
    }
}

impl Reconnect {
    /// No reconnection: the server is reported failed on its first death or failed attempt.
    /// The other fields keep their defaults.
    pub fn disabled() -> Self {
        Self {
            enabled: false,
            ..Self::default()
        }
    }

    /// The stability window in force: `stability_window`, or `max_delay` when it is `None`.
    pub(crate) fn effective_stability_window(&self) -> Duration {
        self.stability_window.unwrap_or(self.max_delay)
    }

    /// Sets the delay before the first retry of an outage. Must be greater than zero.
    ///
    /// Default: 500 ms; at most 24 h.
    pub fn initial_delay(mut self, delay: Duration) -> Self {
        self.initial_delay = delay;
        self
    }

    /// Sets the cap on the delay between attempts. Must be at least the initial delay.
    ///
    /// Default: 30 s; at most 24 h.
    pub fn max_delay(mut self, delay: Duration) -> Self {
        self.max_delay = delay;
        self
    }

    /// Sets the factor applied to the delay after each failed attempt. Must be finite and at
    /// least 1.0.
    ///
    /// Default: 2.0.
    pub fn multiplier(mut self, multiplier: f64) -> Self {
        self.multiplier = multiplier;
        self
    }

    /// Sets the relative random spread applied to each delay (0.3 = ±30 %). Must be finite, in
    /// `[0, 1)`.
    ///
    /// Default: 0.3.
    pub fn jitter(mut self, jitter: f64) -> Self {
        self.jitter = jitter;
        self
    }

    /// Sets the consecutive failed attempts allowed per outage (the outage budget). Must be at
    /// least 1.
    ///
    /// Default: 10.
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts;
        self
    }

    /// Sets how long a generation must stay ready before the outage budget is refilled. Must be
    /// greater than zero.
    ///
    /// Default: the max delay (30 s unless set); at most 24 h.
    pub fn stability_window(mut self, window: Duration) -> Self {
        self.stability_window = Some(window);
        self
    }

    /// Sets the attempts per second this process starts against one web origin (`host:port`),
    /// across every supervisor whose servers share it (see the type's documentation). Must be
    /// at least 1.
    ///
    /// Default: 2,000.
    pub fn origin_attempts_per_second(mut self, rate: u32) -> Self {
        self.origin_attempts_per_second = rate;
        self
    }

    /// The delay before the first retry of an outage. Default: 500 ms.
    pub fn get_initial_delay(&self) -> Duration {
        self.initial_delay
    }

    /// The cap on the delay between attempts. Default: 30 s.
    pub fn get_max_delay(&self) -> Duration {
        self.max_delay
    }

    /// The relative random spread applied to each delay. Default: 0.3.
    pub fn get_jitter(&self) -> f64 {
        self.jitter
    }
}

/// How a supervisor probes an idle connection to notice a dead server or a half-open socket.
///
/// Every `interval` of silence a probe (`ping`, or `server/discover`) is sent with `timeout`;
/// `failures` consecutive misses mean death. The bounds below are checked by
/// [`ServerConfig::resolve`](super::ServerConfig::resolve) only when `enabled` is true.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Heartbeat {
    /// Whether to probe at all.
    ///
    /// # Default
    /// `true`
    pub(crate) enabled: bool,
    /// Silence after which a probe is sent. Must be greater than zero.
    ///
    /// # Default
    /// 30 s; at most 24 h
    pub(crate) interval: Duration,
    /// How long one probe may wait for its answer. Must be greater than zero and less than
    /// `interval`.
    ///
    /// # Default
    /// 10 s; at most 24 h
    pub(crate) timeout: Duration,
    /// Consecutive missed probes that mean the server is dead. Must be at least 1. The probe a
    /// call sends after a silence longer than `interval` is the exception: unanswered for the
    /// whole `timeout`, it ends the generation by itself (a caller is waiting, and no call is
    /// in flight), and the call goes to the next generation.
    ///
    /// # Default
    /// 2
    pub(crate) failures: u32,
    /// Whose probe proves a remote session alive ([`HeartbeatScope`](super::HeartbeatScope)).
    ///
    /// # Default
    /// `Origin`
    pub(crate) scope: super::HeartbeatScope,
    /// With the `Origin` scope, a session's own probe once in this many intervals.
    ///
    /// # Default
    /// 20
    pub(crate) session_check_every: u32,
}

impl Default for Heartbeat {
    fn default() -> Self {
        Self {
            enabled: true,
            interval: Duration::from_secs(30),
            timeout: Duration::from_secs(10),
            failures: 2,
            scope: super::HeartbeatScope::Origin,
            session_check_every: super::scope::SESSION_CHECK_EVERY,
        }
    }
}

impl Heartbeat {
    /// Probe after every `interval` of silence, with a timeout of `interval / 3` and 2 failures.
    pub fn every(interval: Duration) -> Self {
        Self {
            enabled: true,
            interval,
            timeout: interval / 3,
            ..Self::default()
        }
    }

    /// No probing: death is noticed only through the transport and failing calls.
    /// The other fields keep their defaults.
    pub fn disabled() -> Self {
        Self {
            enabled: false,
            ..Self::default()
        }
    }

    /// Sets the silence after which a probe is sent. Must be greater than zero.
    ///
    /// Default: 30 s; at most 24 h.
    pub fn interval(mut self, interval: Duration) -> Self {
        self.interval = interval;
        self
    }

    /// Sets how long one probe may wait for its answer. Must be greater than zero and less than
    /// the interval.
    ///
    /// Default: 10 s; at most 24 h.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets how many consecutive missed probes mean the server is dead. Must be at least 1.
    ///
    /// Default: 2.
    pub fn failures(mut self, failures: u32) -> Self {
        self.failures = failures;
        self
    }

    /// The silence after which a probe is sent. Default: 30 s.
    pub fn get_interval(&self) -> Duration {
        self.interval
    }

    /// How long one probe may wait for its answer. Default: 10 s.
    pub fn get_timeout(&self) -> Duration {
        self.timeout
    }

    /// How many consecutive missed probes mean the server is dead. Default: 2.
    pub fn get_failures(&self) -> u32 {
        self.failures
    }
}
