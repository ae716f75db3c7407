//! [`Live`]: what the rest of the crate may use of the current generation — its peer, how it
//! reports its own death, its probe, and what it is busy with.
//!
//! # Invariants
//!
//! 1. Every watcher of a generation (the monitor, the heartbeat, the call path) reports death
//!    through [`Live::report_death`], which fails in-flight calls at once (the `dead` token) and
//!    asks the [`RetryGuard`](super::retry_guard::RetryGuard) for the single permit.
//! 2. Misses are counted in one place ([`Misses`]), whoever observed them: heartbeat probes,
//!    pre-call probes and suspect answers to calls alike.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    time::Duration,
};

use rmcp::{
    Peer, RoleClient, ServiceError,
    model::{
        ClientRequest, DiscoverRequest, DiscoverRequestParams, ErrorCode, PingRequest,
        ProtocolVersion,
    },
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{msg::Msg, retry_guard::RetryGuard};
use crate::{
    state::{Death, Generation},
    transport::{Activity, judge},
    verdict::{
        Verdict,
        probe::{Load, Misses},
    },
};

/// The current generation, as shared with handles, the heartbeat and the monitor.
#[derive(Debug)]
pub(crate) struct Live {
    pub(crate) server: Arc<str>,
    pub(crate) generation: Generation,
    pub(crate) peer: Peer<RoleClient>,
    /// The protocol version the handshake negotiated.
    pub(crate) protocol: ProtocolVersion,
    /// What this generation's metrics and spans carry (nothing without feature `otel`).
    pub(crate) telemetry: crate::telemetry::Labels,
    pub(crate) activity: Arc<Activity>,
    /// Cancelled once this generation's death has been reported by anyone, or it is closed.
    pub(crate) dead: CancellationToken,
    /// Consecutive misses (probes and suspect answers).
    pub(crate) misses: Misses,
    /// Calls sent on this generation and not finished; changed only by [`InFlight`].
    calls: AtomicUsize,
    /// Probe with `server/discover`: a 2026-07-28 generation (which has no `ping`), or a server
    /// that answered `ping` with method-not-found.
    discover: AtomicBool,
    guard: Arc<RetryGuard>,
    tx: mpsc::UnboundedSender<Msg>,
}

impl Live {
    #[expect(
        clippy::too_many_arguments,
        reason = "one generation's parts, each named at the one call site"
    )]
    pub(crate) fn new(
        server: Arc<str>,
        generation: Generation,
        peer: Peer<RoleClient>,
        protocol: ProtocolVersion,
        activity: Arc<Activity>,
        guard: Arc<RetryGuard>,
        tx: mpsc::UnboundedSender<Msg>,
        transport: &'static str,
    ) -> Self {
        let modern = crate::supervisor::connect::era::is_modern(&protocol);
        let telemetry =
            crate::telemetry::Labels::new(&server, generation, transport, protocol.as_str());
        Live {
            server,
            generation,
            peer,
            protocol,
            telemetry,
            activity,
            dead: CancellationToken::new(),
            misses: Misses::default(),
            calls: AtomicUsize::new(0),
            discover: AtomicBool::new(modern),
            guard,
            tx,
        }
    }

    /// Reports this generation dead. Returns true if this report started the recovery.
    pub(crate) fn report_death(&self, death: Death) -> bool {
        self.dead.cancel();
        let Some(permit) = self.guard.try_begin(self.generation) else {
            tracing::debug!(server = %self.server, generation = %self.generation, cause = %death.cause, "death already reported");
            return false;
        };
        tracing::debug!(server = %self.server, generation = %self.generation, cause = %death.cause, "death reported");
        self.tx.send(Msg::Died { death, permit }).is_ok()
    }

    /// Like [`report_death`](Self::report_death), unless the session loop has already ended:
    /// then the monitor reports the precise cause (an exit status, a stream end).
    pub(crate) fn report_unless_ended(&self, death: Death) -> bool {
        if self.peer.is_transport_closed() {
            self.dead.cancel();
            return false;
        }
        self.report_death(death)
    }

    /// What this generation is busy with, for judging a silence.
    pub(crate) fn load(&self, probe_timeout: Duration) -> Load {
        Load {
            calls_in_flight: self.calls.load(Ordering::Acquire),
            overdue: self.activity.overdue(),
            write_stalled: self.activity.write_stalled(probe_timeout),
        }
    }

    /// Counts one call in flight until the returned guard is dropped.
    pub(crate) fn call_started(self: &Arc<Self>) -> InFlight {
        self.calls.fetch_add(1, Ordering::AcqRel);
        InFlight(self.clone())
    }

    /// Sends one probe with `timeout` and judges the outcome. A silence is [`Verdict::Busy`] or a
    /// miss ([`Verdict::Suspect`]) according to the probe policy; an answer of any kind is alive.
    pub(crate) async fn probe(&self, timeout: Duration) -> Verdict {
        let request = if self.discover.load(Ordering::Relaxed) {
            ClientRequest::DiscoverRequest(DiscoverRequest::new(DiscoverRequestParams::default()))
        } else {
            ClientRequest::PingRequest(PingRequest::default())
        };
        let op = crate::telemetry::Op::internal(&self.telemetry, probe_method(&request));
        let verdict = match tokio::time::timeout(timeout, self.peer.send_request(request)).await {
            Err(_) if self.load(timeout).is_busy() => Verdict::Busy,
            Err(_) => Verdict::Suspect {
                status: None,
                detail: format!("probe unanswered after {timeout:?}"),
            },
            Ok(Ok(_)) => Verdict::Alive,
            Ok(Err(ServiceError::McpError(e)))
                if e.code == ErrorCode::METHOD_NOT_FOUND
                    && !self.discover.swap(true, Ordering::Relaxed) =>
            {
                tracing::info!(server = %self.server, generation = %self.generation, "server has no ping; probing with server/discover");
                Verdict::Alive
            }
            Ok(Err(e)) => judge(&e),
        };
        op.end_probe(&verdict);
        verdict
    }
}

fn probe_method(request: &ClientRequest) -> &'static str {
    match request {
        ClientRequest::DiscoverRequest(_) => "server/discover",
        _ => "ping",
    }
}

/// One call in flight on a generation; dropping it ends the count.
pub(crate) struct InFlight(Arc<Live>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.calls.fetch_sub(1, Ordering::AcqRel);
    }
}
