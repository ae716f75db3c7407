//! The server side's instruments: the conventions' `mcp.server.operation.duration` and
//! `mcp.server.session.duration`, the host sessions open now, the notifications dropped for a
//! slow host and the shared store's failures. Made once, on the library's meter, the first time
//! one is recorded.

use std::{sync::OnceLock, time::Duration};

use opentelemetry::{
    KeyValue,
    metrics::{Counter, Histogram, UpDownCounter},
};

use super::names;

/// The conventions' bucket boundaries for `mcp.server.*.duration`, in seconds.
const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The server side's instruments.
#[derive(Debug)]
struct ServerInstruments {
    operation: Histogram<f64>,
    session: Histogram<f64>,
    sessions: UpDownCounter<i64>,
    store_failures: Counter<u64>,
    dropped: Counter<u64>,
    reloads: Counter<u64>,
}

fn instruments() -> &'static ServerInstruments {
    static INSTRUMENTS: OnceLock<ServerInstruments> = OnceLock::new();
    INSTRUMENTS.get_or_init(|| {
        let meter = mcp_resilient::telemetry::meter();
        ServerInstruments {
            operation: meter
                .f64_histogram(names::SERVER_OPERATION_DURATION)
                .with_unit("s")
                .with_description("Duration of a host request the proxy served")
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build(),
            session: meter
                .f64_histogram(names::SERVER_SESSION_DURATION)
                .with_unit("s")
                .with_description("Duration of a host session")
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build(),
            sessions: meter
                .i64_up_down_counter(names::HOST_SESSIONS)
                .with_unit("{session}")
                .with_description("Host sessions open now")
                .build(),
            store_failures: meter
                .u64_counter(names::HOST_STORE_FAILURES)
                .with_unit("{operation}")
                .with_description("Operations of the shared host-session store that failed")
                .build(),
            dropped: meter
                .u64_counter(names::NOTIFICATIONS_DROPPED)
                .with_unit("{notification}")
                .with_description("Notifications dropped for a slow host.")
                .build(),
            reloads: meter
                .u64_counter(names::RELOADS)
                .with_unit("{reload}")
                .with_description("Reloads of the gateway's configuration, by outcome")
                .build(),
        }
    })
}

/// One host request served: method, transport, tool (when tool names are on), error.
pub(super) fn operation(
    took: Duration,
    method: &'static str,
    transport: &'static str,
    tool: Option<&str>,
    error: Option<&'static str>,
) {
    let mut attributes = vec![
        KeyValue::new(names::METHOD, method),
        KeyValue::new(names::NETWORK_TRANSPORT, transport),
    ];
    if let Some(tool) = tool.filter(|_| mcp_resilient::telemetry::tool_names()) {
        attributes.push(KeyValue::new(names::TOOL_NAME, tool.to_owned()));
    }
    if let Some(error) = error {
        attributes.push(KeyValue::new(names::ERROR_TYPE, error));
    }
    instruments()
        .operation
        .record(took.as_secs_f64(), &attributes);
}

/// A host session opened.
pub(super) fn session_opened(transport: &'static str) {
    let attributes = [KeyValue::new(names::NETWORK_TRANSPORT, transport)];
    instruments().sessions.add(1, &attributes);
}

/// A host session ended after `lasted`, having negotiated `protocol` (if it initialized).
pub(super) fn session_ended(lasted: Duration, transport: &'static str, protocol: Option<&str>) {
    let mut attributes = vec![KeyValue::new(names::NETWORK_TRANSPORT, transport)];
    instruments().sessions.add(-1, &attributes);
    if let Some(protocol) = protocol {
        attributes.push(KeyValue::new(names::PROTOCOL_VERSION, protocol.to_owned()));
    }
    instruments()
        .session
        .record(lasted.as_secs_f64(), &attributes);
}

/// An operation of the shared host-session store failed (`claim`, `write`).
pub(super) fn store_failure(operation: &'static str) {
    let attributes = [KeyValue::new("operation", operation)];
    instruments().store_failures.add(1, &attributes);
}

/// A reload was applied or refused.
pub(super) fn reloaded(applied: bool) {
    let outcome = if applied { "applied" } else { "refused" };
    instruments()
        .reloads
        .add(1, &[KeyValue::new("outcome", outcome)]);
}

/// A `method` notification for a slow host was dropped.
pub(super) fn notification_dropped(method: &'static str) {
    let attributes = [KeyValue::new(names::METHOD, method)];
    instruments().dropped.add(1, &attributes);
}
