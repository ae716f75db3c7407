//! What the conventions have no word for: states, generations, losses, verdicts, reconnects,
//! outages, probes, held calls, failed calls, tool swaps, authorization, limits and drops. Each
//! instrumentation site in the crate is one call into here.

use std::{sync::Arc, time::Duration};

use opentelemetry::KeyValue;

use super::{
    labels::{self, Labels},
    names,
    recorder::recorder,
};
use crate::{
    CallError,
    config::ProtocolChoice,
    state::{Cause, Death, ToolsChanged},
    verdict::Verdict};

/// A ready generation ended for `death`.
pub(crate) fn lost(labels: &Labels, death: &Death) {
    let instruments = &recorder().instruments;
    let mut attributes = labels.attributes();
    attributes.push(KeyValue::new(names::CAUSE, death.cause.as_str()));
    instruments.losses.add(1, &attributes);
    session_ended(labels, Some(death.cause.as_str()));
    limit(labels.server(), death);
}

/// The handshake of an attempt (`initialize` or `server/discover`, with the transport's connect
/// or spawn) took from `started` until now; `failed` is its cause when it failed.
pub(crate) fn handshake(
    labels: &Labels,
    started: tokio::time::Instant,
    choice: ProtocolChoice,
    failed: Option<Cause>,
) {
    let modern = match failed {
        None => labels.protocol() == "2026-07-28",
        Some(_) => choice != ProtocolChoice::V2025_11_25,
    };
    let method = if modern {
        "server/discover"
    } else {
        "initialize"
    };
    let mut attributes = labels.attributes();
    attributes.push(KeyValue::new(names::METHOD, method));
    if let Some(cause) = failed {
        attributes.push(KeyValue::new(names::ERROR_TYPE, cause.as_str()));
    }
    recorder()
        .instruments
        .operation
        .record(started.elapsed().as_secs_f64(), &attributes);
}

/// A ready generation was closed on purpose (shutdown, restart).
pub(crate) fn closed(labels: &Labels) {
    session_ended(labels, None);
}

fn session_ended(labels: &Labels, error: Option<&'static str>) {
    let mut attributes = labels.attributes();
    if let Some(error) = error {
        attributes.push(KeyValue::new(names::ERROR_TYPE, error));
    }
    recorder()
        .instruments
        .session
        .record(labels.age(), &attributes);
}

/// An attempt failed before its session was ready.
pub(crate) fn attempt_failed(server: &str, death: &Death) {
    recorder().instruments.connect_failures.add(
        1,
        &[
            labels::server(server),
            KeyValue::new(names::CAUSE, death.cause.as_str()),
        ],
    );
    limit(server, death);
}

fn limit(server: &str, death: &Death) {
    if let Some(limit) = labels::limit(death) {
        recorder().instruments.limits.add(
            1,
            &[labels::server(server), KeyValue::new(names::LIMIT, limit)],
        );
    }
}

/// The fault model judged an observation of a `method` request.
pub(super) fn verdict(labels: &Labels, method: &'static str, verdict: &Verdict) {
    let attributes = verdict_attributes(labels, method, labels::verdict(verdict));
    recorder().instruments.verdicts.add(1, &attributes);
}

/// The attributes of a verdict (`word`) on a `method` request.
pub(super) fn verdict_attributes(
    labels: &Labels,
    method: &'static str,
    word: &'static str,
) -> Vec<KeyValue> {
    let mut attributes = labels.attributes();
    attributes.push(KeyValue::new(names::METHOD, method));
    attributes.push(KeyValue::new(names::VERDICT, word));
    attributes
}

/// A probe's outcome: its round trip if it was answered, a miss if it was not.
pub(super) fn probe(labels: &Labels, method: &'static str, verdict: &Verdict, rtt: Duration) {
    let instruments = &recorder().instruments;
    let attributes = [
        labels.server_attribute(),
        KeyValue::new(names::METHOD, method),
    ];
    match verdict {
        Verdict::Alive | Verdict::Overload { .. } | Verdict::Rejected { .. } => {
            instruments.probe.record(rtt.as_secs_f64(), &attributes)
        }
        Verdict::Suspect { .. } => instruments.probe_misses.add(1, &attributes),
        _ => {}
    }
}

/// A tool call failed with `error`.
pub(crate) fn call_failed(server: &str, error: &CallError) {
    let (kind, may_have_run) = labels::call_error(error);
    recorder().instruments.call_failures.add(
        1,
        &[
            labels::server(server),
            KeyValue::new(names::ERROR_TYPE, kind),
            KeyValue::new(names::MAY_HAVE_RUN, may_have_run),
        ],
    );
}

/// A server's registered tools changed (or were first registered, or unregistered).
pub(crate) fn tools(change: &ToolsChanged) {
    let instruments = &recorder().instruments;
    let server = labels::server(&change.server);
    instruments
        .tools
        .record(change.tools.len() as i64, std::slice::from_ref(&server));
    if change.is_empty() {
        return;
    }
    instruments.tool_swaps.add(1, std::slice::from_ref(&server));
    for (word, names) in [
        ("added", &change.added),
        ("removed", &change.removed),
        ("changed", &change.changed),
    ] {
        if !names.is_empty() {
            instruments.tool_changes.add(
                names.len() as u64,
                &[server.clone(), KeyValue::new(names::CHANGE, word)],
            );
        }
    }
}

/// An OAuth renewal after a refusal: `None` when it got a token, else whether the failure was
/// transient (the authorization server did not answer) or a refusal.
pub(crate) fn auth_renewal(server: &str, failed: Option<bool>) {
    let mut attributes = vec![labels::server(server)];
    match failed {
        None => {}
        Some(true) => attributes.push(KeyValue::new(names::ERROR_TYPE, "auth_unavailable")),
        Some(false) => attributes.push(KeyValue::new(names::ERROR_TYPE, "refused")),
    }
    recorder().instruments.auth_renewals.add(1, &attributes);
}

/// No token can be had for `server`: the user must act.
pub(crate) fn auth_refused(server: &str) {
    recorder()
        .instruments
        .auth_refusals
        .add(1, &[labels::server(server)]);
}

/// `server` answered a request never sent (or answered it twice).
pub(crate) fn stray(server: &str) {
    recorder()
        .instruments
        .strays
        .add(1, &[labels::server(server)]);
}

/// A call held by `callWait` during an outage; records how long it waited when dropped.
#[derive(Debug)]
pub(crate) struct Held {
    server: Arc<str>,
    since: std::time::Instant,
    ready: bool,
}

impl Held {
    pub(crate) fn start(server: &Arc<str>) -> Held {
        Held {
            server: server.clone(),
            since: std::time::Instant::now(),
            ready: false,
        }
    }

    /// A ready generation came.
    pub(crate) fn ready(&mut self) {
        self.ready = true;
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut attributes = vec![labels::server(&self.server)];
        if !self.ready {
            attributes.push(KeyValue::new(names::ERROR_TYPE, "unavailable"));
        }
        recorder()
            .instruments
            .call_wait
            .record(self.since.elapsed().as_secs_f64(), &attributes);
    }
}
