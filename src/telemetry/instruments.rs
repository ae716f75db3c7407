//! Every instrument the library records with, made once on the recorder's meter, with its unit,
//! description and buckets.

use opentelemetry::metrics::{Counter, Gauge, Histogram, Meter};

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
    pub(super) strays: Counter<u64>,
}

impl Instruments {
    pub(super) fn new(meter: &Meter) -> Self {
        let make = Make(meter);
        let (operation, session, call_wait, call_failures) = make.requests();
        let (state, generations, losses, connect_failures, verdicts) = make.lifecycle();
        let (reconnects, reconnect_delay, outage, probe, probe_misses) = make.recovery();
        let (tool_swaps, tool_changes, tools) = make.tools();
        let (auth_renewals, auth_refusals, limits, strays) = make.faults();
        Instruments {
            operation,
            session,
            state,
            generations,
            losses,
            connect_failures,
            verdicts,
            reconnects,
            reconnect_delay,
            outage,
            probe,
            probe_misses,
            call_wait,
            call_failures,
            tool_swaps,
            tool_changes,
            tools,
            auth_renewals,
            auth_refusals,
            limits,
            strays,
        }
    }
}

/// Makes instruments on one meter, with the unit and the description each needs.
struct Make<'a>(&'a Meter);

type Seconds = Histogram<f64>;
type Count = Counter<u64>;
type Level = Gauge<i64>;

impl Make<'_> {
    fn seconds(&self, name: &'static str, what: &'static str, buckets: &[f64]) -> Seconds {
        self.0
            .f64_histogram(name)
            .with_unit("s")
            .with_description(what)
            .with_boundaries(buckets.to_vec())
            .build()
    }

    fn count(&self, name: &'static str, unit: &'static str, what: &'static str) -> Count {
        self.0
            .u64_counter(name)
            .with_unit(unit)
            .with_description(what)
            .build()
    }

    fn gauge(&self, name: &'static str, unit: &'static str, what: &'static str) -> Level {
        self.0
            .i64_gauge(name)
            .with_unit(unit)
            .with_description(what)
            .build()
    }

    /// The durations of requests, sessions and held calls, and failed calls.
    fn requests(&self) -> (Seconds, Seconds, Seconds, Count) {
        (
            self.seconds(
                names::OPERATION_DURATION,
                "The duration of the MCP request as observed on the sender from the time it was sent until the response is received.",
                &DURATION_BUCKETS,
            ),
            self.seconds(
                names::SESSION_DURATION,
                "The duration of the MCP session (one generation) as observed on the MCP client.",
                &DURATION_BUCKETS,
            ),
            self.seconds(
                names::CALL_WAIT,
                "How long a call waited (callWait) for a ready generation.",
                &DURATION_BUCKETS,
            ),
            self.count(
                names::CALL_FAILURES,
                "{call}",
                "Tool calls that failed, by error kind and whether they may have run.",
            ),
        )
    }

    /// A server's state, its generations and how they end, and the verdicts that end them.
    fn lifecycle(&self) -> (Level, Count, Count, Count, Count) {
        (
            self.gauge(
                names::STATE,
                "{state}",
                "1 for the state a server is in, 0 for the others it has been in.",
            ),
            self.count(
                names::GENERATIONS,
                "{generation}",
                "Generations that became ready.",
            ),
            self.count(
                names::LOSSES,
                "{loss}",
                "Ready generations that ended, by cause.",
            ),
            self.count(
                names::CONNECT_FAILURES,
                "{attempt}",
                "Connection attempts that failed before a session was ready, by cause.",
            ),
            self.count(
                names::VERDICTS,
                "{verdict}",
                "What the fault model judged failed requests and probes to be.",
            ),
        )
    }

    /// Reconnects, outages and probes.
    fn recovery(&self) -> (Count, Seconds, Seconds, Seconds, Count) {
        (
            self.count(
                names::RECONNECT_ATTEMPTS,
                "{attempt}",
                "Attempts scheduled after a failure or a loss.",
            ),
            self.seconds(
                names::RECONNECT_DELAY,
                "The delay scheduled before an attempt after a failure or a loss.",
                &OUTAGE_BUCKETS,
            ),
            self.seconds(
                names::OUTAGE_DURATION,
                "Outages, from the loss or the first failed attempt until a generation is ready again.",
                &OUTAGE_BUCKETS,
            ),
            self.seconds(
                names::PROBE_DURATION,
                "Round trips of answered heartbeat probes.",
                &PROBE_BUCKETS,
            ),
            self.count(
                names::PROBE_MISSES,
                "{probe}",
                "Probes that went unanswered.",
            ),
        )
    }

    /// Tool-set swaps and the tools registered.
    fn tools(&self) -> (Count, Count, Level) {
        (
            self.count(
                names::TOOL_SWAPS,
                "{swap}",
                "Swaps of a server's tool set that changed something.",
            ),
            self.count(
                names::TOOL_CHANGES,
                "{tool}",
                "Tools added, removed or changed by tool-set swaps.",
            ),
            self.gauge(names::TOOLS, "{tool}", "Tools registered for a server."),
        )
    }

    /// Authorization, limits and stray responses.
    fn faults(&self) -> (Count, Count, Count, Count) {
        (
            self.count(
                names::AUTH_RENEWALS,
                "{renewal}",
                "OAuth renewals after a refusal.",
            ),
            self.count(names::AUTH_REFUSALS, "{refusal}", "Authorizations refused."),
            self.count(
                names::LIMITS_EXCEEDED,
                "{limit}",
                "Limits a server exceeded.",
            ),
            self.count(
                names::STRAY_RESPONSES,
                "{response}",
                "Responses to requests never sent, dropped.",
            ),
        )
    }
}
