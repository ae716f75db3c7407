//! The liveness-per-origin settings of [`Heartbeat`]: its [`HeartbeatScope`] and how often a
//! session of an origin-scoped group still probes for itself.

use super::{Heartbeat, HeartbeatScope};

impl Heartbeat {
    /// Sets whose probe proves a remote session alive (see [`HeartbeatScope`]).
    ///
    /// Default: [`HeartbeatScope::Origin`].
    pub fn scope(mut self, scope: HeartbeatScope) -> Self {
        self.scope = scope;
        self
    }

    /// With [`HeartbeatScope::Origin`], each session also probes for itself once in this many
    /// of its intervals, however its origin answers: the bound on how long a session the server
    /// lost goes unseen when nothing else (a call, its stream) shows it. Must be at least 1
    /// (1: every session probes for itself every interval, as with
    /// [`HeartbeatScope::Session`]). A session whose standalone stream is held on a shared
    /// HTTP/2 connection checks itself once in four times this many (see [`HeartbeatScope`]).
    ///
    /// Default: 20.
    pub fn session_check_every(mut self, intervals: u32) -> Self {
        self.session_check_every = intervals;
        self
    }

    /// Whose probe proves a remote session alive. Default: [`HeartbeatScope::Origin`].
    pub fn get_scope(&self) -> HeartbeatScope {
        self.scope
    }

    /// With [`HeartbeatScope::Origin`], how many intervals pass between a session's own
    /// probes. Default: 20.
    pub fn get_session_check_every(&self) -> u32 {
        self.session_check_every
    }
}
