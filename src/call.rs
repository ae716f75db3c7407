//! One request through a supervisor: its options ([`CallOptions`]) and what it can be waiting
//! for when its deadline passes ([`CallPhase`]).

use std::{fmt, sync::Arc, time::Duration};

use rmcp::model::ProgressNotificationParam;

/// Receives the progress a server reports for one request.
pub type ProgressFn = Arc<dyn Fn(ProgressNotificationParam) + Send + Sync>;

/// Options of one call or request sent through a [`Supervisor`](crate::Supervisor).
///
/// ```
/// use std::time::Duration;
/// use mcp_resilient::call::CallOptions;
///
/// let options = CallOptions::new()
///     .timeout(Duration::from_secs(5))
///     .on_progress(|progress| eprintln!("{}/{:?}", progress.progress, progress.total));
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct CallOptions {
    /// The whole request's deadline, waits for `Retry-After` and resends included.
    ///
    /// # Default
    /// `None`: the server's `call_timeout`.
    pub timeout: Option<Duration>,
    /// Called with each progress notification the server sends for this request (the progress
    /// token is this crate's own, one per request; the host's token, if it has one, is its
    /// business to put back). Every notification the server sent before its answer reaches the
    /// callback before the call returns (the call waits at most a second for one still on its
    /// way), even one that comes back before the request's send has finished: that one is held
    /// for the call (up to 64 per server, each at most a second).
    ///
    /// # Default
    /// `None`: progress goes to [`HostHandlers::on_notification`](crate::host::HostHandlers::on_notification), if set.
    pub progress: Option<ProgressFn>,
}

impl CallOptions {
    /// The defaults: the server's call timeout, no progress callback.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`timeout`](Self::timeout).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets [`progress`](Self::progress).
    pub fn on_progress(
        mut self,
        callback: impl Fn(ProgressNotificationParam) + Send + Sync + 'static,
    ) -> Self {
        self.progress = Some(Arc::new(callback));
        self
    }
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// What a call was waiting for when its deadline passed (see
/// [`CallError::Timeout`](crate::CallError::Timeout)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallPhase {
    /// The server's answer to the request it was sent.
    Answer,
    /// The host's answer to something the server asked during the call (an `input_required`
    /// round, 2026-07-28): a [`HostHandlers`](crate::host::HostHandlers) handler was still
    /// working.
    HostInput,
    /// The server's answer to the probe sent before the call, after a silence longer than the
    /// heartbeat interval: the call itself was not sent.
    Probe,
}

impl fmt::Display for CallPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CallPhase::Answer => "the server's answer",
            CallPhase::HostInput => "the host to answer the server's request for input",
            CallPhase::Probe => {
                "the probe sent before the call after a silence (the call was not sent)"
            }
        })
    }
}
