//! [`HeartbeatScope`]: whose probe proves a remote session alive, its own or its origin's.

use std::str::FromStr;

/// Whose probe proves an idle remote session (Streamable HTTP, legacy SSE) alive. Stdio
/// sessions always probe for themselves.
///
/// With [`Origin`](Self::Origin), the sessions of this process that share a server endpoint
/// (scheme, host, port and path of its URL) and the same heartbeat interval and timeout form
/// one group. While the group's probes are answered, one probe per interval, sent by one
/// member whose own rules allow a probe then (the one that waited longest), proves every member
/// alive, and the others send none and sleep until their own check is due. A member
/// whose own signal is suspect probes for itself at once, as with [`Session`](Self::Session):
/// after a missed or suspect answer, when its standalone stream (or 2026-07-28 listen stream)
/// ended, or when the group's last answer is older than an interval. Every member also probes
/// for itself once in every [`session_check_every`](crate::config::Heartbeat::session_check_every) of its
/// intervals.
///
/// # What an origin's answer proves, and what it does not
///
/// It proves that the server's process and listener are alive and answer a request of one of
/// the group's sessions, over the path (proxies, HTTP/2 connection) that request took. It does
/// **not** prove that another member's session still exists on the server: a server that lost
/// one session (restarted behind a sticky proxy, evicted it, forgot it) answers the group's
/// probe all the same. That session is found out
///
/// 1. by its next call: the server answers 404 (or, where configured, 400 "no valid
///    session"), the generation ends as `session_expired` and is rebuilt at once; the call
///    never ran, so it waits (within `call_wait`) and goes to the new generation;
/// 2. by its standalone `GET` stream, if the server ended it: opened again at once, the 404
///    ends the generation within the same second;
/// 3. with neither, by its own probe, which it sends at the latest
///    `session_check_every × interval` (plus one probe timeout) after its last message: 20
///    intervals by default, 10 minutes at the default 30 s heartbeat.
///
/// A session whose standalone stream is open on a shared HTTP/2 connection (which this scope
/// keeps proven by `PING`s) checks itself four times less often: 80 intervals by default,
/// 40 minutes at the default heartbeat. Its stream already covers what the check would find
/// in most cases: a server that restarted, or ended the session and its streams, ends the
/// stream (2.), and each reopening asks for the session anew; a dead or half-open connection
/// is found by its `PING`. What is left for the rarer check is a server that forgot a session
/// and kept its stream open; the next call finds that one at once (1.).
///
/// A server killed or hung is seen as with [`Session`](Self::Session): its members' streams
/// end (each probes for itself, and a refused connection is death at once), and once the
/// group's probe goes unanswered every member probes for itself and counts its own misses; a
/// hung server is found at most one interval and one probe timeout later than with
/// [`Session`](Self::Session) (the last answer proved it alive for up to an interval, and a
/// member may wait out the group's probe before sending its own).
///
/// Rebuilds after a death are paced by the origin's attempt budget
/// ([`Reconnect::origin_attempts_per_second`](super::Reconnect::origin_attempts_per_second)),
/// whichever scope found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum HeartbeatScope {
    /// Every session probes for itself after each `interval` of silence: one probe per idle
    /// session per interval.
    Session,
    /// One probe per endpoint per interval proves every session of it alive (see the type's
    /// documentation for what that proves, and how a lost session is found).
    #[default]
    Origin,
}

impl FromStr for HeartbeatScope {
    type Err = super::unknown::UnknownValue;

    /// `session` or `origin`, case-insensitive.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "session" => Ok(Self::Session),
            "origin" => Ok(Self::Origin),
            _ => Err(super::unknown::UnknownValue::new(
                "heartbeat.scope",
                s,
                "session or origin",
            )),
        }
    }
}

/// The default of [`Heartbeat::session_check_every`](crate::config::Heartbeat::session_check_every).
pub(crate) const SESSION_CHECK_EVERY: u32 = 20;
