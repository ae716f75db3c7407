//! One supervised upstream of the proxy, and its keeper: the task that starts it again after it
//! gave up, for as long as the host stays.

// Logging is deprecated by SEP-2577; hosts of the session era still set levels.
#![allow(deprecated)]

use std::{
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use rmcp::model::{ClientRequest, LoggingLevel, SetLevelRequest, SetLevelRequestParams};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use mcp_resilient::{ConnectionState, Supervisor, call::CallOptions};

use super::{
    host::Callers,
    shares::{HostId, Shares},
};

/// A supervisor the proxy routes to.
#[derive(Debug)]
pub(super) struct Upstream {
    pub(super) supervisor: Supervisor,
    /// When the keeper will restart a supervisor that gave up; `None` while it has not.
    revive_at: Mutex<Option<Instant>>,
    /// How long the keeper waits after a give-up (the server's `reconnect.max_delay`).
    revive_after: Duration,
    /// Its hosts' subscriptions and log levels; every new generation is sent the level again.
    pub(super) shares: Shares,
    /// How long a call waits for a ready generation (the server's `call_wait`).
    pub(super) call_wait: Duration,
    /// The hosts' calls in flight on it (what it asks during a call goes to that call's host).
    pub(super) callers: Arc<Callers>,
    /// Cancelled when its set shuts down or a reload removes or replaces it: ends its keeper.
    retire: CancellationToken,
}

impl Upstream {
    pub(super) fn new(
        supervisor: Supervisor,
        revive_after: Duration,
        call_wait: Duration,
        callers: Arc<Callers>,
        retire: CancellationToken,
    ) -> Self {
        Self {
            supervisor,
            revive_at: Mutex::new(None),
            revive_after,
            shares: Shares::default(),
            call_wait,
            callers,
            retire,
        }
    }

    /// Whether a reload removed or replaced it (or its set shut down).
    pub(crate) fn retired(&self) -> bool {
        self.retire.is_cancelled()
    }

    /// Ends its keeper (a reload removed or replaced it); the supervisor is the caller's to
    /// shut down.
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(super) fn retire(&self) {
        self.retire.cancel();
    }

    /// Whether the supervisor gave up and the keeper will start it again: a call may wait for
    /// that instead of failing at once.
    pub(super) fn reviving(state: &ConnectionState) -> bool {
        matches!(
            state,
            ConnectionState::Failed {
                retry_in: None,
                manual_recovery: false,
                ..
            }
        )
    }

    /// Waits until the server is ready, at most `limit`; true if it is.
    pub(super) async fn wait_ready(&self, limit: Duration) -> bool {
        let mut watch = self.supervisor.watch();
        let ready = tokio::time::timeout(limit, watch.wait_for(|s| s.is_ready())).await;
        matches!(ready, Ok(Some(_)))
    }

    pub(super) fn name(&self) -> &str {
        self.supervisor.name()
    }

    /// How long until the keeper starts a supervisor that gave up again, if it is waiting to.
    pub(super) fn revive_in(&self) -> Option<Duration> {
        let at = *self
            .revive_at
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        at.map(|at| at.saturating_duration_since(Instant::now()))
    }

    /// Remembers `host`'s log level for the generations to come.
    pub(super) fn set_level(&self, host: HostId, level: LoggingLevel) {
        self.shares.set_level(host, level);
    }

    /// The level the upstream is sent: the most verbose its hosts set, if any did.
    pub(super) fn level(&self) -> Option<LoggingLevel> {
        self.shares.level()
    }

    /// Whether the ready generation speaks 2026-07-28 or later, where there is no
    /// `logging/setLevel` and each request names its log level in `_meta`.
    pub(super) fn per_request_levels(&self) -> bool {
        self.supervisor.stateless()
    }

    fn set_revive_at(&self, at: Option<Instant>) {
        *self
            .revive_at
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = at;
    }

    /// Keeps the upstream trying while the host stays: a supervisor that spent its outage budget
    /// (`failed`, nothing scheduled, reconnect enabled) is restarted after `revive_after`. A
    /// permanent refusal schedules its own retry and is left to it; a server configured without
    /// reconnect is left `failed`, as configured. Each new generation is also sent the log level
    /// the host set, if it set one.
    pub(super) async fn keep(self: Arc<Self>) {
        let stop = self.retire.clone();
        let mut watch = self.supervisor.watch();
        let mut leveled = None;
        loop {
            let state = watch.status().state;
            if let ConnectionState::Ready { generation, .. } = state
                && leveled != Some(generation)
            {
                leveled = Some(generation);
                self.resend_level(&stop).await;
            }
            if Self::reviving(&state) {
                // Config durations are bounded by MAX_DURATION: the sum cannot overflow.
                let at = tokio::time::Instant::now()
                    + self.revive_after.min(mcp_resilient::config::MAX_DURATION);
                self.set_revive_at(Some(at));
                tracing::info!(
                    server = %self.name(),
                    after = ?self.revive_after,
                    "upstream gave up; the proxy starts it again after a pause"
                );
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep_until(at) => {}
                }
                self.set_revive_at(None);
                self.supervisor.restart().await;
                continue;
            }
            tokio::select! {
                _ = stop.cancelled() => return,
                changed = watch.changed() => if changed.is_none() { return },
            }
        }
    }

    async fn resend_level(&self, stop: &CancellationToken) {
        let Some(level) = self.level() else { return };
        if self.per_request_levels() {
            return;
        }
        let request =
            ClientRequest::SetLevelRequest(SetLevelRequest::new(SetLevelRequestParams::new(level)));
        let sent = tokio::select! {
            _ = stop.cancelled() => return,
            sent = self.supervisor.request(request, CallOptions::default()) => sent,
        };
        if let Err(error) = sent {
            tracing::debug!(server = %self.name(), %error, "the log level was not taken by the new generation");
        }
    }
}
