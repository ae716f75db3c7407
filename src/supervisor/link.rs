//! [`Link`]: what callers share with the supervisor task — the call path.

use std::{sync::Arc, time::Duration};

use rmcp::{
    ServiceError,
    model::{CallToolRequestParams, CallToolResult, JsonObject},
};
use tokio::{
    sync::{broadcast, mpsc, watch},
    time::Instant,
};

use super::{actor::Msg, live::Live, retry_guard::RetryGuard};
use crate::{
    CallError,
    config::ServerConfig,
    state::{Cause, ConnectionState, Death, Event},
    transport::{judge, never_sent},
    verdict::Verdict,
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
    ///
    /// The whole call — waiting out an overloaded server's `Retry-After`, resending a request that
    /// never left — stays inside one deadline of `timeout` (default: the server's call timeout),
    /// counted from when a ready generation was found.
    pub(crate) async fn call_tool(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        timeout: Option<Duration>,
    ) -> Result<CallToolResult, CallError> {
        let mut live = self.current().await?;
        let limit = timeout.unwrap_or(self.call_timeout);
        let deadline = Instant::now() + limit;
        if let Some((interval, probe_timeout, failures)) = self.probe_first
            && live.activity.idle() > interval
        {
            self.probe_before_call(&live, probe_timeout, failures)
                .await?;
        }
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        let mut resent = false;
        loop {
            let sent = Instant::now();
            let outcome = {
                let _in_flight = live.call_started();
                tokio::select! {
                    biased;
                    outcome = tokio::time::timeout_at(deadline, live.peer.call_tool(params.clone())) => outcome,
                    _ = live.dead.cancelled() => return Err(self.lost(&live, "the generation died during the call")),
                }
            };
            let error = match outcome {
                Err(_) => {
                    live.activity.mark_overdue();
                    return Err(CallError::Timeout { after: limit });
                }
                // Any answer proves the server alive: the next miss is the first again.
                Ok(Ok(result)) => {
                    live.misses.clear();
                    return Ok(result);
                }
                Ok(Err(ServiceError::McpError(e))) => {
                    live.misses.clear();
                    return Err(CallError::Server(e));
                }
                Ok(Err(e)) => e,
            };
            match judge(&error) {
                Verdict::Overload {
                    status,
                    retry_after: Some(wait),
                } if Instant::now() + wait < deadline => {
                    tracing::debug!(server = %self.server, generation = live.generation, status, wait_ms = wait.as_millis() as u64, "call refused for load; sending it again after Retry-After");
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => {}
                        _ = live.dead.cancelled() => return Err(self.lost(&live, "the generation died while waiting out Retry-After")),
                    }
                }
                Verdict::Overload {
                    status,
                    retry_after,
                } => {
                    return Err(CallError::Overloaded {
                        server: self.server.to_string(),
                        status,
                        retry_after,
                    });
                }
                Verdict::Suspect { status, detail } => {
                    self.suspect(&live, sent, &detail);
                    return Err(CallError::Http {
                        server: self.server.to_string(),
                        status,
                        detail,
                    });
                }
                Verdict::Death(death) => {
                    let unsent = never_sent(&error);
                    live.report_unless_ended(Death::new(
                        death.cause,
                        format!("call path: {}", death.detail),
                    ));
                    if !unsent || resent {
                        return Err(self.lost(&live, death.detail));
                    }
                    // The request never left: it may go once to the next generation.
                    resent = true;
                    live = self.next_live(&live, deadline, limit).await?;
                }
                Verdict::Unauthorized { detail } => {
                    live.report_death(Death::new(
                        Cause::Unauthorized,
                        format!("call path: {detail}"),
                    ));
                    return Err(self.rejected(Some(401), detail));
                }
                Verdict::Rejected { detail } => return Err(self.rejected(None, detail)),
                Verdict::Alive | Verdict::Busy => {
                    return Err(CallError::Protocol {
                        detail: error.to_string(),
                    });
                }
            }
        }
    }

    /// The ready generation, or (during an outage) the one `call_wait` waits for.
    async fn current(&self) -> Result<Arc<Live>, CallError> {
        let live = self.live.borrow().clone();
        match live.filter(|l| !l.dead.is_cancelled()) {
            Some(live) => Ok(live),
            None => self.wait_for_live().await,
        }
    }

    /// The generation after `dead`, waited for until `deadline` at most.
    async fn next_live(
        &self,
        dead: &Live,
        deadline: Instant,
        limit: Duration,
    ) -> Result<Arc<Live>, CallError> {
        let mut live = self.live.subscribe();
        let found = tokio::time::timeout_at(
            deadline,
            live.wait_for(|l| {
                l.as_ref()
                    .is_some_and(|l| l.generation > dead.generation && !l.dead.is_cancelled())
            }),
        )
        .await;
        match found {
            Ok(Ok(next)) => Ok(next.clone().ok_or_else(|| self.unavailable())?),
            Ok(Err(_)) => Err(self.unavailable()),
            Err(_) => Err(CallError::Timeout { after: limit }),
        }
    }

    /// A suspect answer counts as one miss; `failures` of them in a row are death.
    fn suspect(&self, live: &Live, sent: Instant, detail: &str) {
        let Some((_, _, failures)) = self.probe_first else {
            return;
        };
        if live
            .misses
            .record(sent)
            .is_some_and(|misses| misses >= failures)
        {
            live.report_death(Death::new(
                Cause::HeartbeatTimeout,
                format!("{failures} suspect answers or missed probes in a row; last: {detail}"),
            ));
        }
    }

    fn rejected(&self, status: Option<u16>, detail: String) -> CallError {
        CallError::Rejected {
            server: self.server.to_string(),
            status,
            detail,
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
    /// A busy or overloaded server is alive: the call goes ahead.
    async fn probe_before_call(
        &self,
        live: &Live,
        timeout: Duration,
        failures: u32,
    ) -> Result<(), CallError> {
        let sent = Instant::now();
        match live.probe(timeout).await {
            Verdict::Alive | Verdict::Rejected { .. } | Verdict::Overload { .. } => {
                live.misses.clear();
                Ok(())
            }
            Verdict::Busy => Ok(()),
            Verdict::Suspect { detail, .. } => {
                if live.misses.record(sent).is_some_and(|m| m >= failures) {
                    live.report_death(Death::new(
                        Cause::HeartbeatTimeout,
                        format!("pre-call probe: {detail}"),
                    ));
                }
                Err(self.lost(live, format!("pre-call probe: {detail}")))
            }
            Verdict::Death(death) => {
                let detail = format!("pre-call probe: {}", death.detail);
                live.report_unless_ended(Death::new(death.cause, detail.clone()));
                Err(self.lost(live, detail))
            }
            Verdict::Unauthorized { detail } => {
                live.report_death(Death::new(
                    Cause::Unauthorized,
                    format!("pre-call probe: {detail}"),
                ));
                Err(self.rejected(Some(401), detail))
            }
        }
    }
}

impl crate::registry::Route for Link {
    fn call_tool<'a>(
        &'a self,
        tool: &'a str,
        arguments: Option<JsonObject>,
        timeout: Option<Duration>,
    ) -> futures::future::BoxFuture<'a, Result<CallToolResult, CallError>> {
        Box::pin(Link::call_tool(self, tool, arguments, timeout))
    }
}
