//! [`Live`]: what the rest of the crate may use of the current generation — its link, how it
//! reports its own death, and what it is busy with. Its probes are in [`super::probe`].
//!
//! # Invariants
//!
//! 1. Every watcher of a generation (the monitor, the heartbeat, the call path) reports death
//!    through [`Live::report_death`], which fails in-flight calls at once (the `dead` token) and
//!    asks the [`RetryGuard`](crate::supervisor::reconnect::retry_guard::RetryGuard) for the single permit.
//! 2. Misses are counted in one place ([`Misses`]), whoever observed them: heartbeat probes,
//!    pre-call probes and suspect answers to calls alike ([`super::probe`]).

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    time::Duration,
};

use rmcp::model::ProtocolVersion;
use tokio::sync::mpsc;
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use crate::{
    state::{Death, Generation},
    supervisor::mailbox::Msg,
    supervisor::reconnect::retry_guard::RetryGuard,
    transport::Activity,
    verdict::probe::{Load, Misses},
};

/// The heartbeat's settings, which every prober of a generation follows.
#[derive(Debug, Clone)]
pub(in crate::supervisor) struct ProbeRules {
    /// How long a probe waits for its answer.
    pub(in crate::supervisor) timeout: Duration,
    /// Consecutive misses that mean death.
    pub(in crate::supervisor) failures: u32,
    /// Where misses are told.
    pub(in crate::supervisor) events: crate::state::Events,
}

/// The current generation, as shared with handles, the heartbeat and the monitor.
#[derive(Debug)]
pub(in crate::supervisor) struct Live {
    pub(in crate::supervisor) server: Arc<str>,
    pub(in crate::supervisor) generation: Generation,
    /// The generation's client session.
    pub(in crate::supervisor) link: super::link::Link,
    /// The protocol version the handshake negotiated.
    pub(in crate::supervisor) protocol: ProtocolVersion,
    /// What this generation's metrics and spans carry (nothing without feature `otel`).
    pub(in crate::supervisor) telemetry: crate::telemetry::Labels,
    pub(in crate::supervisor) activity: Arc<Activity>,
    /// Cancelled once this generation's death has been reported by anyone, or it is closed.
    pub(in crate::supervisor) dead: CancellationToken,
    /// The `notifications/cancelled` of abandoned calls on their way to the server (spawned by
    /// the call path); an orderly close lets them go out before the session ends.
    pub(in crate::supervisor) cancels: TaskTracker,
    /// Consecutive misses (probes and suspect answers).
    pub(in crate::supervisor) misses: Misses,
    /// Calls sent on this generation and not finished; changed only by [`InFlight`].
    calls: AtomicUsize,
    /// Probe with `server/discover`: a 2026-07-28 generation (which has no `ping`), or a server
    /// that answered `ping` with method-not-found.
    pub(super) discover: AtomicBool,
    /// Heartbeat probes sent, for the share that goes through rmcp's session.
    pub(super) heartbeats: AtomicU64,
    /// The round trip of the last probe this generation had answered, in microseconds plus one
    /// (0: none yet).
    probe_round_trip: AtomicU64,
    /// The heartbeat's settings, which every prober follows; `None` without a heartbeat.
    pub(super) probes: Option<ProbeRules>,
    /// The tools this generation listed as `readOnlyHint` or `idempotentHint`: a call to one
    /// of them lost with this generation may be sent again. Replaced by the actor after each
    /// listing of this generation.
    replayable: std::sync::RwLock<Arc<std::collections::HashSet<String>>>,
    guard: Arc<RetryGuard>,
    tx: mpsc::UnboundedSender<Msg>,
}

impl Live {
    #[expect(
        clippy::too_many_arguments,
        reason = "one generation's parts, each named at the one call site"
    )]
    pub(in crate::supervisor) fn new(
        server: Arc<str>,
        generation: Generation,
        link: super::link::Link,
        protocol: ProtocolVersion,
        activity: Arc<Activity>,
        guard: Arc<RetryGuard>,
        tx: mpsc::UnboundedSender<Msg>,
        transport: &'static str,
        probes: Option<ProbeRules>,
    ) -> Self {
        let modern = crate::supervisor::session::connect::era::is_modern(&protocol);
        let session = activity.session_id.get().map(|id| &**id);
        let telemetry = crate::telemetry::Labels::shared(
            &server,
            generation,
            transport,
            protocol.as_str(),
            session,
        );
        Live {
            server,
            generation,
            link,
            protocol,
            telemetry,
            activity,
            dead: CancellationToken::new(),
            cancels: TaskTracker::new(),
            misses: Misses::default(),
            calls: AtomicUsize::new(0),
            discover: AtomicBool::new(modern),
            heartbeats: AtomicU64::new(0),
            probe_round_trip: AtomicU64::new(0),
            probes,
            replayable: std::sync::RwLock::default(),
            guard,
            tx,
        }
    }

    /// Notes the round trip of a probe this generation had answered.
    pub(in crate::supervisor) fn note_probe_round_trip(&self, round_trip: std::time::Duration) {
        let micros = u64::try_from(round_trip.as_micros()).unwrap_or(u64::MAX - 1);
        self.probe_round_trip.store(
            micros.saturating_add(1),
            std::sync::atomic::Ordering::Relaxed,
        );
    }

    /// The round trip of the last probe this generation had answered, if any.
    pub(in crate::supervisor) fn probe_round_trip(&self) -> Option<std::time::Duration> {
        match self
            .probe_round_trip
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            0 => None,
            plus_one => Some(std::time::Duration::from_micros(plus_one - 1)),
        }
    }

    /// Takes the annotations of this generation's listing: which of its tools are read-only or
    /// idempotent.
    pub(in crate::supervisor) fn set_tools(&self, tools: &[rmcp::model::Tool]) {
        let replayable = tools
            .iter()
            .filter(|tool| {
                tool.annotations.as_ref().is_some_and(|a| {
                    a.read_only_hint == Some(true) || a.idempotent_hint == Some(true)
                })
            })
            .map(|tool| tool.name.to_string())
            .collect();
        *self
            .replayable
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(replayable);
    }

    /// True when this generation listed `tool` as read-only or idempotent.
    pub(in crate::supervisor) fn replayable(&self, tool: &str) -> bool {
        self.replayable
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(tool)
    }

    /// Reports this generation dead. Returns true if this report started the recovery.
    pub(in crate::supervisor) fn report_death(&self, death: Death) -> bool {
        self.dead.cancel();
        let Some(permit) = self.guard.try_begin(self.generation) else {
            tracing::debug!(server = %self.server, generation = %self.generation, cause = %death.cause, "death already reported");
            return false;
        };
        tracing::debug!(server = %self.server, generation = %self.generation, cause = %death.cause, "death reported");
        self.tx.send(Msg::died(death, permit)).is_ok()
    }

    /// Like [`report_death`](Self::report_death), unless the session loop has already ended:
    /// then the monitor reports the precise cause (an exit status, a stream end).
    pub(in crate::supervisor) fn report_unless_ended(&self, death: Death) -> bool {
        if self.link.is_transport_closed() {
            self.dead.cancel();
            return false;
        }
        self.report_death(death)
    }

    /// What this generation is busy with, for judging a silence.
    pub(in crate::supervisor) fn load(&self, probe_timeout: Duration) -> Load {
        Load {
            calls_in_flight: self.calls.load(Ordering::Acquire),
            overdue: self.activity.overdue(),
            write_stalled: self.activity.write_stalled(probe_timeout),
        }
    }

    /// Counts one call in flight until the returned guard is dropped.
    pub(in crate::supervisor) fn call_started(self: &Arc<Self>) -> InFlight {
        self.calls.fetch_add(1, Ordering::AcqRel);
        InFlight(self.clone())
    }
}

/// One call in flight on a generation; dropping it ends the count.
pub(in crate::supervisor) struct InFlight(Arc<Live>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.calls.fetch_sub(1, Ordering::AcqRel);
    }
}
