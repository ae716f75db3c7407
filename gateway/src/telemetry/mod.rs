//! The gateway's telemetry (feature `otel`): the `SERVER` span of one host request, whose
//! parent is the trace context the host sent in `_meta`; the conventions' server-side durations;
//! the host sessions open now; the notifications dropped for a slow host; the shared store's
//! failures. Recorded where the library records (`mcp_resilient::telemetry::meter` and
//! `tracer`), so one installed provider sees the client side and the server side of a call.
//!
//! Every site is a function or a type of this file: without the feature their bodies are empty
//! and their types zero-sized, and no OpenTelemetry crate is built.

#![cfg_attr(
    not(feature = "otel"),
    allow(clippy::unused_self, clippy::needless_pass_by_value)
)]

use std::future::Future;

use rmcp::{
    ErrorData,
    model::{CallToolResult, RequestMetaObject},
};

use mcp_resilient::CallError;

#[cfg(feature = "otel")]
pub mod names;
#[cfg(feature = "otel")]
mod served;
#[cfg(feature = "otel")]
mod server;

/// What a proxied call's server span says went wrong, if anything.
pub(crate) fn served_error(outcome: &Result<CallToolResult, CallError>) -> Option<&'static str> {
    #[cfg(feature = "otel")]
    return served::served_error(outcome);
    #[cfg(not(feature = "otel"))]
    {
        let _ = outcome;
        None
    }
}

/// A JSON-RPC error answered to a host, as its server span's `error.type`: the codes JSON-RPC
/// and MCP define, else `_OTHER`.
pub(crate) fn served_rpc_error(error: &ErrorData) -> &'static str {
    #[cfg(feature = "otel")]
    return mcp_resilient::telemetry::rpc_error_type(error.code.0);
    #[cfg(not(feature = "otel"))]
    {
        let _ = error;
        "_OTHER"
    }
}

/// The proxy serving one host request: a `SERVER` span, child of the context the host sent in
/// `_meta`, in which the upstream call runs.
#[derive(Debug)]
pub(crate) struct Served {
    #[cfg(feature = "otel")]
    inner: served::Served,
}

impl Served {
    /// `metas`: where the host's `_meta` may be; the first with a `traceparent` is the parent.
    /// `transport`: `pipe` (stdio) or `tcp` (HTTP).
    pub(crate) fn start(
        method: &'static str,
        transport: &'static str,
        metas: &[Option<&RequestMetaObject>],
        tool: Option<&str>,
    ) -> Served {
        #[cfg(not(feature = "otel"))]
        let _ = (method, transport, metas, tool);
        Served {
            #[cfg(feature = "otel")]
            inner: served::Served::start(method, transport, metas, tool),
        }
    }

    /// Runs `work` inside this span.
    pub(crate) fn within<F: Future>(&self, work: F) -> impl Future<Output = F::Output> {
        #[cfg(feature = "otel")]
        return self.inner.within(work);
        #[cfg(not(feature = "otel"))]
        work
    }

    /// Ends the span, with `error` as `error.type` when the request failed.
    pub(crate) fn end(self, error: Option<&'static str>) {
        #[cfg(feature = "otel")]
        self.inner.end(error);
        #[cfg(not(feature = "otel"))]
        let _ = error;
    }
}

/// One host session, from its `initialize` to its drop: counted among the open host sessions,
/// and its duration recorded (with the revision it negotiated) when it ends.
#[derive(Debug)]
pub(crate) struct HostSession {
    #[cfg(feature = "otel")]
    started: std::time::Instant,
    #[cfg(feature = "otel")]
    transport: &'static str,
    #[cfg(feature = "otel")]
    protocol: String,
}

impl HostSession {
    /// A session on `transport` (`pipe`, `tcp`) that negotiated `protocol`.
    pub(crate) fn open(transport: &'static str, protocol: &str) -> HostSession {
        #[cfg(feature = "otel")]
        server::session_opened(transport);
        #[cfg(not(feature = "otel"))]
        let _ = (transport, protocol);
        HostSession {
            #[cfg(feature = "otel")]
            started: std::time::Instant::now(),
            #[cfg(feature = "otel")]
            transport,
            #[cfg(feature = "otel")]
            protocol: protocol.to_owned(),
        }
    }
}

impl Drop for HostSession {
    fn drop(&mut self) {
        #[cfg(feature = "otel")]
        server::session_ended(self.started.elapsed(), self.transport, Some(&self.protocol));
    }
}

/// An operation of the shared host-session store failed or ran past its bound (`claim`,
/// `write`).
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
pub(crate) fn host_store_failure(operation: &'static str) {
    #[cfg(feature = "otel")]
    server::store_failure(operation);
    #[cfg(not(feature = "otel"))]
    let _ = operation;
}

/// The gateway's configuration was reloaded (`applied`) or a reload changed nothing
/// (`refused`).
#[cfg_attr(not(feature = "serve"), allow(dead_code))]
pub(crate) fn reloaded(applied: bool) {
    #[cfg(feature = "otel")]
    server::reloaded(applied);
    #[cfg(not(feature = "otel"))]
    let _ = applied;
}

/// A `method` notification for a host that reads too slowly was dropped (the outbox).
pub(crate) fn notification_dropped(method: &'static str) {
    #[cfg(feature = "otel")]
    server::notification_dropped(method);
    #[cfg(not(feature = "otel"))]
    let _ = method;
}
