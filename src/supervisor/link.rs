//! [`Link`]: what callers share with the supervisor task — the call path.

use std::{sync::Arc, sync::atomic::Ordering, time::Duration};

use rmcp::{
    ServiceError,
    model::{CallToolRequestParams, CallToolResult, JsonObject},
};
use tokio::sync::{broadcast, mpsc, watch};

use super::{
    actor::Msg,
    generation::{Live, ProbeOutcome, classify},
    retry_guard::RetryGuard,
};
use crate::{
    CallError,
    config::ServerConfig,
    state::{Cause, ConnectionState, Death, Event},
};

/// Shared between the [`Supervisor`](super::Supervisor) handle, the registry's tool handles and
/// the supervisor task. Written only by the supervisor task (`live`, `state`).
#[derive(Debug)]
pub(crate) struct Link {
    pub(crate) server: Arc<str>,
    pub(crate) tx: mpsc::UnboundedSender<Msg>,
    pub(crate) guard: Arc<RetryGuard>,
    /// The ready generation, or `None` during an outage.
    pub(crate) live: watch::Sender<Option<Arc<Live>>>,
    pub(crate) state: watch::Sender<ConnectionState>,
    pub(crate) events: broadcast::Sender<Event>,
    call_timeout: Duration,
    /// How long a call during an outage waits for a ready generation.
    call_wait: Option<Duration>,
    /// `(interval, timeout, failures)` when the heartbeat is on: a call after a silence longer
    /// than `interval` probes first.
    probe_first: Option<(Duration, Duration, u32)>,
}

impl Link {
    pub(crate) fn new(
        server: Arc<str>,
        config: &ServerConfig,
        tx: mpsc::UnboundedSender<Msg>,
        events: broadcast::Sender<Event>,
    ) -> Self {
        let hb = &config.heartbeat;
        Link {
            server,
            tx,
            guard: Arc::new(RetryGuard::default()),
            live: watch::Sender::new(None),
            state: watch::Sender::new(ConnectionState::Connecting { attempt: 1 }),
            events,
            call_timeout: config.call_timeout,
            call_wait: config.call_wait,
            probe_first: hb.enabled.then_some((hb.interval, hb.timeout, hb.failures)),
        }
    }

    fn unavailable(&self) -> CallError {
        CallError::Unavailable {
            server: self.server.to_string(),
            state: self.state.borrow().clone(),
        }
    }

    fn lost(&self, live: &Live, detail: impl Into<String>) -> CallError {
        CallError::ConnectionLost {
            server: self.server.to_string(),
            generation: live.generation,
            detail: detail.into(),
        }
    }

    /// Calls `tool` on the current generation.
    pub(crate) async fn call_tool(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        timeout: Option<Duration>,
    ) -> Result<CallToolResult, CallError> {
        let live = self.live.borrow().clone();
        let live = match live.filter(|l| !l.dead.is_cancelled()) {
            Some(live) => live,
            None => self.wait_for_live().await?,
        };
        if let Some((interval, probe_timeout, failures)) = self.probe_first
            && live.activity.idle() > interval
        {
            self.probe_before_call(&live, probe_timeout, failures)
                .await?;
        }
        let limit = timeout.unwrap_or(self.call_timeout);
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        let outcome = tokio::select! {
            biased;
            outcome = tokio::time::timeout(limit, live.peer.call_tool(params)) => outcome,
            _ = live.dead.cancelled() => return Err(self.lost(&live, "the generation died during the call")),
        };
        match outcome {
            Err(_) => Err(CallError::Timeout { after: limit }),
            Ok(Ok(result)) => Ok(result),
            Ok(Err(ServiceError::McpError(e))) => Err(CallError::Server(e)),
            Ok(Err(
                e @ (ServiceError::TransportSend(_)
                | ServiceError::TransportClosed
                | ServiceError::Cancelled { .. }),
            )) => {
                if let Some(death) = classify(&e, &live.peer) {
                    live.report_death(Death::new(
                        death.cause,
                        format!("call path: {}", death.detail),
                    ));
                }
                Err(self.lost(&live, e.to_string()))
            }
            Ok(Err(ServiceError::Timeout { .. })) => Err(CallError::Timeout { after: limit }),
            Ok(Err(e)) => Err(CallError::Protocol {
                detail: e.to_string(),
            }),
        }
    }

    /// During an outage: waits up to `call_wait` for a ready generation; fails at once without
    /// `call_wait`, or when the server is `failed` or `stopped` (it will not come back by itself).
    async fn wait_for_live(&self) -> Result<Arc<Live>, CallError> {
        let Some(wait) = self.call_wait else {
            return Err(self.unavailable());
        };
        let deadline = tokio::time::Instant::now() + wait;
        let (mut live, mut state) = (self.live.subscribe(), self.state.subscribe());
        loop {
            let current = live.borrow_and_update().clone();
            if let Some(ready) = current.filter(|l| !l.dead.is_cancelled()) {
                return Ok(ready);
            }
            if matches!(
                *state.borrow_and_update(),
                ConnectionState::Failed { .. } | ConnectionState::Stopped
            ) {
                return Err(self.unavailable());
            }
            tokio::select! {
                changed = live.changed() => changed.map_err(|_| self.unavailable())?,
                changed = state.changed() => changed.map_err(|_| self.unavailable())?,
                _ = tokio::time::sleep_until(deadline) => return Err(self.unavailable()),
            }
        }
    }

    /// The gRPC keepalive rule: after a long silence, prove the connection before trusting it,
    /// so a dead half-open connection fails in one probe timeout instead of hanging the call.
    async fn probe_before_call(
        &self,
        live: &Live,
        timeout: Duration,
        failures: u32,
    ) -> Result<(), CallError> {
        match live.probe(timeout).await {
            ProbeOutcome::Answered => {
                live.misses.store(0, Ordering::Relaxed);
                Ok(())
            }
            ProbeOutcome::Missed(detail) => {
                let misses = live.misses.fetch_add(1, Ordering::Relaxed) + 1;
                if misses >= failures {
                    live.report_death(Death::new(
                        Cause::HeartbeatTimeout,
                        format!("pre-call probe: {detail}"),
                    ));
                }
                Err(self.lost(live, format!("pre-call probe: {detail}")))
            }
            ProbeOutcome::Closed => Err(self.lost(live, "the session had already ended")),
            ProbeOutcome::Dead(death) => {
                let detail = format!("pre-call probe: {}", death.detail);
                live.report_death(Death::new(death.cause, detail.clone()));
                Err(self.lost(live, detail))
            }
        }
    }
}
