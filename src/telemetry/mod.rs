//! Telemetry: metrics and client spans in OpenTelemetry's MCP semantic conventions, plus the
//! resilience series no convention covers (feature `otel`; README "Telemetry").
//!
//! With the feature, the library records into the global (or a supplied, see `Telemetry`)
//! meter and tracer, and carries W3C trace context in each request's `params._meta`; it never
//! installs an exporter or a propagator (the CLI does). Every instrumentation site calls into
//! `sites`, where each function and type is defined once: without the feature its body is
//! empty and its types zero-sized, so nothing is compiled in and no OpenTelemetry crate is
//! built.
//!
//! # Invariants
//!
//! 1. Attribute values are bounded: server name, transport, protocol version, cause, reason,
//!    verdict, method, error kind, state, limit name, and a JSON-RPC code only when JSON-RPC or
//!    MCP defines it. Never an argument, a URL or a token; a tool name only with
//!    `Telemetry::tool_names`. The generation number and the JSON-RPC id go on spans only.
//! 2. Each instrumentation site in the crate is one call into this module (or a guard it
//!    returns); the logic lives here, apart from the code it observes.
//! 3. Recording never waits and never fails a request: a meter or tracer that is slow or absent
//!    costs only its own time.

use rmcp::model::ErrorData;

#[cfg(feature = "otel")]
mod events;
#[cfg(feature = "otel")]
mod instruments;
#[cfg(feature = "otel")]
mod labels;
#[cfg(feature = "otel")]
pub(crate) mod names;
#[cfg(feature = "otel")]
mod op;
#[cfg(feature = "otel")]
mod propagate;
#[cfg(feature = "otel")]
mod recorder;
#[cfg(feature = "otel")]
mod transitions;

#[cfg(feature = "otel")]
pub use labels::rpc_error_type;
#[cfg(feature = "otel")]
pub use recorder::{Telemetry, meter, tool_names, tracer};

mod sites;

pub(crate) use sites::*;

/// How a request ended, for its duration and its span.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "otel"), allow(dead_code))]
pub(crate) enum Outcome<'a> {
    /// An answer that is not an error.
    Ok,
    /// A tool result with `isError` (convention: `error.type` = `tool_error`).
    ToolError,
    /// A JSON-RPC error answer.
    Rpc(&'a ErrorData),
    /// No answer, or one that failed the request: the word says which (`timeout`,
    /// `connection_lost`, a call error's kind, a verdict).
    Failed(&'static str),
}
