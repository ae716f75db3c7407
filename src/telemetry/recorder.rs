//! [`Telemetry`]: where the library records (the global providers, or supplied ones), and the
//! instruments it records with, built once per process.

use std::sync::OnceLock;

use opentelemetry::{
    InstrumentationScope,
    global::{self, BoxedTracer, ObjectSafeTracerProvider},
    metrics::{Counter, Gauge, Histogram, Meter, MeterProvider},
};

use super::names;

/// The conventions' bucket boundaries for `mcp.client.*.duration`, in seconds.
const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];
/// Probe round trips: from a millisecond (a local child) to a probe timeout.
const PROBE_BUCKETS: [f64; 14] = [
    0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0,
];
/// Reconnect delays and outages: from a rebuild at once to half an hour.
const OUTAGE_BUCKETS: [f64; 14] = [
    0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0,
];

/// Where the library's metrics and spans go, for the whole process.
///
/// Without [`install`](Self::install), the library records into the global providers
/// (`opentelemetry::global::meter_provider()` and `tracer_provider()`) as they are when the first
/// supervisor starts: install yours (or call `install`) before that. The library never installs
/// an exporter or a propagator; W3C trace context goes into `params._meta` through the global
/// text map propagator (`opentelemetry::global::set_text_map_propagator`).
///
/// ```no_run
/// # fn demo(meters: &opentelemetry_sdk::metrics::SdkMeterProvider) {
/// use mcp_resilient::telemetry::Telemetry;
/// Telemetry::new().meter_provider(meters).tool_names(true).install().ok();
/// # }
/// ```
#[derive(Debug, Default)]
pub struct Telemetry {
    meter: Option<Meter>,
    tracer: Option<BoxedTracer>,
    tool_names: bool,
}

impl Telemetry {
    /// The global providers, without tool names.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records metrics through `provider` instead of the global one.
    pub fn meter_provider(mut self, provider: &impl MeterProvider) -> Self {
        self.meter = Some(provider.meter_with_scope(scope()));
        self
    }

    /// Records spans through `provider` instead of the global one.
    pub fn tracer_provider(mut self, provider: &impl ObjectSafeTracerProvider) -> Self {
        self.tracer = Some(BoxedTracer::new(provider.boxed_tracer(scope())));
        self
    }

    /// Adds `gen_ai.tool.name` to `tools/call` metrics and spans (and the tool to the span name).
    ///
    /// # Default
    /// Off: a server chooses its tool names, so each new one would be a new time series.
    pub fn tool_names(mut self, on: bool) -> Self {
        self.tool_names = on;
        self
    }

    /// Makes these the process's telemetry settings. Once only, and before the first supervisor
    /// starts: after that, the settings in use stay, and this returns `Err` with its argument.
    pub fn install(self) -> Result<(), Telemetry> {
        let mut offered = Some(self);
        RECORDER.get_or_init(|| offered.take().unwrap_or_default().build());
        match offered {
            None => Ok(()),
            Some(refused) => Err(refused),
        }
    }

    fn build(self) -> Recorder {
        let meter = self
            .meter
            .unwrap_or_else(|| global::meter_with_scope(scope()));
        Recorder {
            instruments: Instruments::new(&meter),
            tracer: self
                .tracer
                .unwrap_or_else(|| global::tracer_with_scope(scope())),
            tool_names: self.tool_names,
        }
    }
}

fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("mcp-resilient")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build()
}

static RECORDER: OnceLock<Recorder> = OnceLock::new();

/// The process's recorder: the installed settings, or the global providers.
pub(super) fn recorder() -> &'static Recorder {
    RECORDER.get_or_init(|| Telemetry::new().build())
}

/// The instruments and the tracer in use.
#[derive(Debug)]
pub(super) struct Recorder {
    pub(super) instruments: Instruments,
    pub(super) tracer: BoxedTracer,
    pub(super) tool_names: bool,
}

/// Every instrument, made once.
#[derive(Debug)]
pub(super) struct Instruments {
    pub(super) operation: Histogram<f64>,
    pub(super) session: Histogram<f64>,
    pub(super) state: Gauge<i64>,
    pub(super) generations: Counter<u64>,
    pub(super) losses: Counter<u64>,
    pub(super) connect_failures: Counter<u64>,
    pub(super) verdicts: Counter<u64>,
    pub(super) reconnects: Counter<u64>,
    pub(super) reconnect_delay: Histogram<f64>,
    pub(super) outage: Histogram<f64>,
    pub(super) probe: Histogram<f64>,
    pub(super) probe_misses: Counter<u64>,
    pub(super) call_wait: Histogram<f64>,
    pub(super) call_failures: Counter<u64>,
    pub(super) tool_swaps: Counter<u64>,
    pub(super) tool_changes: Counter<u64>,
    pub(super) tools: Gauge<i64>,
    pub(super) auth_renewals: Counter<u64>,
    pub(super) auth_refusals: Counter<u64>,
    pub(super) limits: Counter<u64>,
    pub(super) dropped: Counter<u64>,
    pub(super) strays: Counter<u64>,
}

impl Instruments {
    fn new(meter: &Meter) -> Self {
        let seconds = |name: &'static str, what: &'static str, buckets: &[f64]| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(what)
                .with_boundaries(buckets.to_vec())
                .build()
        };
        let count = |name: &'static str, unit: &'static str, what: &'static str| {
            meter
                .u64_counter(name)
                .with_unit(unit)
                .with_description(what)
                .build()
        };
        let gauge = |name: &'static str, unit: &'static str, what: &'static str| {
            meter
                .i64_gauge(name)
                .with_unit(unit)
                .with_description(what)
                .build()
        };
        Instruments {
            operation: seconds(
                names::OPERATION_DURATION,
                "The duration of the MCP request as observed on the sender from the time it was sent until the response is received.",
                &DURATION_BUCKETS,
            ),
            session: seconds(
                names::SESSION_DURATION,
                "The duration of the MCP session (one generation) as observed on the MCP client.",
                &DURATION_BUCKETS,
            ),
            state: gauge(
                names::STATE,
                "{state}",
                "1 for the state a server is in, 0 for the others it has been in.",
            ),
            generations: count(
                names::GENERATIONS,
                "{generation}",
                "Generations that became ready.",
            ),
            losses: count(
                names::LOSSES,
                "{loss}",
                "Ready generations that ended, by cause.",
            ),
            connect_failures: count(
                names::CONNECT_FAILURES,
                "{attempt}",
                "Connection attempts that failed before a session was ready, by cause.",
            ),
            verdicts: count(
                names::VERDICTS,
                "{verdict}",
                "What the fault model judged failed requests and probes to be.",
            ),
            reconnects: count(
                names::RECONNECT_ATTEMPTS,
                "{attempt}",
                "Attempts scheduled after a failure or a loss.",
            ),
            reconnect_delay: seconds(
                names::RECONNECT_DELAY,
                "The delay scheduled before an attempt after a failure or a loss.",
                &OUTAGE_BUCKETS,
            ),
            outage: seconds(
                names::OUTAGE_DURATION,
                "Outages, from the loss or the first failed attempt until a generation is ready again.",
                &OUTAGE_BUCKETS,
            ),
            probe: seconds(
                names::PROBE_DURATION,
                "Round trips of answered heartbeat probes.",
                &PROBE_BUCKETS,
            ),
            probe_misses: count(
                names::PROBE_MISSES,
                "{probe}",
                "Probes that went unanswered.",
            ),
            call_wait: seconds(
                names::CALL_WAIT,
                "How long a call waited (callWait) for a ready generation.",
                &DURATION_BUCKETS,
            ),
            call_failures: count(
                names::CALL_FAILURES,
                "{call}",
                "Tool calls that failed, by error kind and whether they may have run.",
            ),
            tool_swaps: count(
                names::TOOL_SWAPS,
                "{swap}",
                "Swaps of a server's tool set that changed something.",
            ),
            tool_changes: count(
                names::TOOL_CHANGES,
                "{tool}",
                "Tools added, removed or changed by tool-set swaps.",
            ),
            tools: gauge(names::TOOLS, "{tool}", "Tools registered for a server."),
            auth_renewals: count(
                names::AUTH_RENEWALS,
                "{renewal}",
                "OAuth renewals after a refusal.",
            ),
            auth_refusals: count(names::AUTH_REFUSALS, "{refusal}", "Authorizations refused."),
            limits: count(
                names::LIMITS_EXCEEDED,
                "{limit}",
                "Limits a server exceeded.",
            ),
            dropped: count(
                names::NOTIFICATIONS_DROPPED,
                "{notification}",
                "Notifications dropped for a slow host.",
            ),
            strays: count(
                names::STRAY_RESPONSES,
                "{response}",
                "Responses to requests never sent, dropped.",
            ),
        }
    }
}
