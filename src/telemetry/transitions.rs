//! Status changes as metrics: the state set, generations that became ready, outage durations,
//! and reconnects with their delays, all from the actor's one transition value.

use std::time::Duration;

use opentelemetry::KeyValue;

use super::{
    labels::{self, Labels},
    names,
    recorder::recorder,
};
use crate::state::{ConnectionState, Death, Reason};

/// Every state a server can be in, for the state set.
const STATES: [&str; 6] = [
    "connecting",
    "ready",
    "reconnecting",
    "failed",
    "stopping",
    "stopped",
];

/// A status change: the state set, and what it tells beyond it (a generation ready, a
/// reconnect scheduled). The actor's first status comes here as a change from itself, so the
/// server's series exist before any transition.
pub(crate) fn transition(
    server: &str,
    from: &ConnectionState,
    to: &ConnectionState,
    ready: Option<(&Labels, Option<Duration>)>,
) {
    state(server, from, to);
    if let Some((labels, outage)) = ready {
        self::ready(labels, outage);
    }
    if let ConnectionState::Reconnecting {
        reason,
        death,
        delay,
        ..
    } = to
    {
        retry(server, *reason, death, *delay);
    }
}

/// `server` moved from `old` to `new`: 1 for the new state, 0 for every other.
fn state(server: &str, old: &ConnectionState, new: &ConnectionState) {
    if old.as_str() == new.as_str() && !matches!(new, ConnectionState::Connecting { .. }) {
        return;
    }
    let gauge = &recorder().instruments.state;
    let server = labels::server(server);
    for word in STATES {
        let value = i64::from(word == new.as_str());
        gauge.record(
            value,
            &[server.clone(), KeyValue::new(names::STATE_NAME, word)],
        );
    }
}

/// A generation became ready; `outage` is how long the server was without one.
fn ready(labels: &Labels, outage: Option<Duration>) {
    let instruments = &recorder().instruments;
    instruments.generations.add(1, &labels.attributes());
    if let Some(outage) = outage {
        instruments
            .outage
            .record(outage.as_secs_f64(), &[labels.server_attribute()]);
    }
}

/// The next attempt follows after `delay`, because of `death`.
fn retry(server: &str, reason: Reason, death: &Death, delay: Duration) {
    let instruments = &recorder().instruments;
    let server = labels::server(server);
    let reason = KeyValue::new(names::REASON, reason.as_str());
    instruments.reconnects.add(
        1,
        &[
            server.clone(),
            reason.clone(),
            KeyValue::new(names::CAUSE, death.cause.as_str()),
        ],
    );
    instruments
        .reconnect_delay
        .record(delay.as_secs_f64(), &[server, reason]);
}
