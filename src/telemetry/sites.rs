//! The instrumentation sites' one interface: every function and type the rest of the crate
//! calls, each defined once. With feature `otel` each forwards to the recorder; without it,
//! its body is empty and its types are zero-sized, so a site compiles to nothing. There is no
//! second copy to keep in step: both builds share these signatures (`.ci/run` lints both).

#![cfg_attr(
    not(feature = "otel"),
    allow(clippy::unused_self, clippy::needless_pass_by_value)
)]

use std::{future::Future, sync::Arc, time::Duration};

use rmcp::model::{ClientRequest, RequestId};

use super::Outcome;
#[cfg(feature = "otel")]
use super::{events, labels, op, transitions};
use crate::{
    CallError,
    config::ProtocolChoice,
    state::{Cause, ConnectionState, Death, Generation, ToolsChanged},
    verdict::Verdict,
};

/// What every measurement of one generation carries (server, transport, protocol). Cheap to
/// clone.
#[derive(Debug, Clone)]
pub(crate) struct Labels {
    #[cfg(feature = "otel")]
    pub(super) inner: labels::Labels,
}

impl Labels {
    /// The labels of generation `generation` of `server` over `transport` ([`transport`]),
    /// which negotiated `protocol` (empty while not known yet), in session `session` (the
    /// server's `Mcp-Session-Id`, if any: on spans only).
    pub(crate) fn new(
        server: &str,
        generation: Generation,
        transport: &'static str,
        protocol: &str,
        session: Option<&str>,
    ) -> Self {
        Self::shared(&Arc::from(server), generation, transport, protocol, session)
    }

    /// [`new`](Self::new), sharing the supervisor's `server` name rather than copying it: for
    /// labels a session keeps for its life.
    pub(crate) fn shared(
        server: &Arc<str>,
        generation: Generation,
        transport: &'static str,
        protocol: &str,
        session: Option<&str>,
    ) -> Self {
        #[cfg(not(feature = "otel"))]
        let _ = (server, generation, transport, protocol, session);
        Labels {
            #[cfg(feature = "otel")]
            inner: labels::Labels::new(server.clone(), generation, transport, protocol, session),
        }
    }
}

/// One request in flight: its duration and its client span.
#[derive(Debug)]
pub(crate) struct Op {
    #[cfg(feature = "otel")]
    inner: op::Op,
}

impl Op {
    /// A request made for a caller (a call, a proxied request).
    pub(crate) fn request(labels: &Labels, request: &ClientRequest) -> Op {
        #[cfg(not(feature = "otel"))]
        let _ = (labels, request);
        Op {
            #[cfg(feature = "otel")]
            inner: op::Op::request(&labels.inner, request),
        }
    }

    /// A request the supervisor makes itself (a probe, a list, the handshake).
    pub(crate) fn internal(labels: &Labels, method: &'static str) -> Op {
        #[cfg(not(feature = "otel"))]
        let _ = (labels, method);
        Op {
            #[cfg(feature = "otel")]
            inner: op::Op::internal(&labels.inner, method),
        }
    }

    /// Puts the span's trace context into the request's `params._meta`.
    pub(crate) fn inject(&self, request: &mut ClientRequest) {
        #[cfg(feature = "otel")]
        self.inner.inject(request);
        #[cfg(not(feature = "otel"))]
        let _ = request;
    }

    /// Runs `work` inside the request's span.
    pub(crate) fn within<F: Future>(&self, work: F) -> impl Future<Output = F::Output> {
        #[cfg(feature = "otel")]
        return self.inner.within(work);
        #[cfg(not(feature = "otel"))]
        work
    }

    /// Counts what the fault model made of a failed request.
    pub(crate) fn verdict(&self, verdict: &Verdict) {
        #[cfg(feature = "otel")]
        self.inner.verdict(verdict);
        #[cfg(not(feature = "otel"))]
        let _ = verdict;
    }

    /// Records the duration and ends the span.
    pub(crate) fn end(self, outcome: Outcome<'_>) {
        #[cfg(feature = "otel")]
        self.inner.end(outcome);
        #[cfg(not(feature = "otel"))]
        let _ = outcome;
    }

    /// Ends a probe: its verdict, round trip or miss, and duration.
    pub(crate) fn end_probe(self, verdict: &Verdict) {
        #[cfg(feature = "otel")]
        self.inner.end_probe(verdict);
        #[cfg(not(feature = "otel"))]
        let _ = verdict;
    }
}

/// Puts the JSON-RPC id on the current client span.
pub(crate) fn request_id(id: &RequestId) {
    #[cfg(feature = "otel")]
    op::request_id(id);
    #[cfg(not(feature = "otel"))]
    let _ = id;
}

/// The bounded word for a call error (`error.type`).
pub(crate) fn error_kind(error: &CallError) -> &'static str {
    #[cfg(feature = "otel")]
    return labels::error_kind(error);
    #[cfg(not(feature = "otel"))]
    {
        let _ = error;
        ""
    }
}

/// A status change of `server` from `from` to `to`; `ready`: the labels of the generation that
/// became ready, and how long the outage it ended lasted.
pub(crate) fn transition(
    server: &str,
    from: &ConnectionState,
    to: &ConnectionState,
    ready: Option<(&Labels, Option<Duration>)>,
) {
    #[cfg(feature = "otel")]
    transitions::transition(server, from, to, ready.map(|(l, o)| (&l.inner, o)));
    #[cfg(not(feature = "otel"))]
    let _ = (server, from, to, ready);
}

/// A ready generation ended for `death`.
pub(crate) fn lost(labels: &Labels, death: &Death) {
    #[cfg(feature = "otel")]
    events::lost(&labels.inner, death);
    #[cfg(not(feature = "otel"))]
    let _ = (labels, death);
}

/// A ready generation was closed on purpose (shutdown, restart).
pub(crate) fn closed(labels: &Labels) {
    #[cfg(feature = "otel")]
    events::closed(&labels.inner);
    #[cfg(not(feature = "otel"))]
    let _ = labels;
}

/// The handshake of an attempt took from `started` until now; `failed` is its cause.
pub(crate) fn handshake(
    labels: &Labels,
    started: tokio::time::Instant,
    choice: ProtocolChoice,
    failed: Option<Cause>,
) {
    #[cfg(feature = "otel")]
    events::handshake(&labels.inner, started, choice, failed);
    #[cfg(not(feature = "otel"))]
    let _ = (labels, started, choice, failed);
}

/// An attempt failed before its session was ready.
pub(crate) fn attempt_failed(server: &str, death: &Death) {
    #[cfg(feature = "otel")]
    events::attempt_failed(server, death);
    #[cfg(not(feature = "otel"))]
    let _ = (server, death);
}

/// A call failed without an answer from the server.
pub(crate) fn call_failed(server: &str, error: &CallError) {
    #[cfg(feature = "otel")]
    events::call_failed(server, error);
    #[cfg(not(feature = "otel"))]
    let _ = (server, error);
}

/// A server's tool set was swapped (or taken out).
pub(crate) fn tools(change: &ToolsChanged) {
    #[cfg(feature = "otel")]
    events::tools(change);
    #[cfg(not(feature = "otel"))]
    let _ = change;
}

/// A token renewal ran (`failed`: whether it failed; `None`: not needed).
pub(crate) fn auth_renewal(server: &str, failed: Option<bool>) {
    #[cfg(feature = "otel")]
    events::auth_renewal(server, failed);
    #[cfg(not(feature = "otel"))]
    let _ = (server, failed);
}

/// The server refused our credentials.
pub(crate) fn auth_refused(server: &str) {
    #[cfg(feature = "otel")]
    events::auth_refused(server);
    #[cfg(not(feature = "otel"))]
    let _ = server;
}

/// A response to an id nobody sent was dropped.
pub(crate) fn stray(server: &str) {
    #[cfg(feature = "otel")]
    events::stray(server);
    #[cfg(not(feature = "otel"))]
    let _ = server;
}

/// A call waiting for a generation during an outage: its wait is recorded when dropped.
#[derive(Debug)]
pub(crate) struct Held {
    #[cfg(feature = "otel")]
    inner: events::Held,
}

impl Held {
    /// Starts timing a call held for `server`.
    pub(crate) fn start(server: &Arc<str>) -> Held {
        #[cfg(not(feature = "otel"))]
        let _ = server;
        Held {
            #[cfg(feature = "otel")]
            inner: events::Held::start(server),
        }
    }

    /// A ready generation came.
    pub(crate) fn ready(&mut self) {
        #[cfg(feature = "otel")]
        self.inner.ready();
    }
}
