//! The names this crate records under: OpenTelemetry's MCP semantic conventions where they have a
//! word for it, ours (`mcp.client.resilience.*`, attributes `mcp_resilient.*`) where they do not.
//!
//! The conventions are those of `docs/gen-ai/mcp.md` in the OpenTelemetry GenAI semantic
//! conventions (status: development). A Prometheus scrape shows each name with dots as
//! underscores, the unit as a suffix (`_seconds`) and `_total` on counters.

/// Histogram, seconds: every request the library sends (calls, lists, probes, the handshake,
/// each round of a multi-round call), from send to answer. Convention.
pub(in crate::telemetry) const OPERATION_DURATION: &str = "mcp.client.operation.duration";
/// Histogram, seconds: how long a generation (one session) lasted, from ready to its end.
/// Convention.
pub(in crate::telemetry) const SESSION_DURATION: &str = "mcp.client.session.duration";

/// Gauge: 1 for the state a server is in, 0 for the others it has been in (a state set).
pub(in crate::telemetry) const STATE: &str = "mcp.client.resilience.state";
/// Counter: generations that became ready (a session established, its tools registered).
pub(in crate::telemetry) const GENERATIONS: &str = "mcp.client.resilience.generations";
/// Counter: ready generations that ended, by cause.
pub(in crate::telemetry) const LOSSES: &str = "mcp.client.resilience.losses";
/// Counter: connection attempts that failed before a session was ready, by cause.
pub(in crate::telemetry) const CONNECT_FAILURES: &str = "mcp.client.resilience.connect.failures";
/// Counter: what the fault model judged each failed request and each probe to be.
pub(in crate::telemetry) const VERDICTS: &str = "mcp.client.resilience.verdicts";
/// Counter: attempts scheduled after a failure or a loss.
pub(in crate::telemetry) const RECONNECT_ATTEMPTS: &str =
    "mcp.client.resilience.reconnect.attempts";
/// Histogram, seconds: the delay scheduled before each of those attempts.
pub(in crate::telemetry) const RECONNECT_DELAY: &str = "mcp.client.resilience.reconnect.delay";
/// Histogram, seconds: outages, from the loss (or the first failed attempt) to ready again.
pub(in crate::telemetry) const OUTAGE_DURATION: &str = "mcp.client.resilience.outage.duration";
/// Histogram, seconds: the round trip of every answered probe (`ping`, `server/discover`).
pub(in crate::telemetry) const PROBE_DURATION: &str = "mcp.client.resilience.probe.duration";
/// Counter: probes that went unanswered (a miss; `failures` in a row is death).
pub(in crate::telemetry) const PROBE_MISSES: &str = "mcp.client.resilience.probe.misses";
/// Histogram, seconds: how long a call waited (`callWait`) for a ready generation; with
/// `error.type` = `unavailable` when none came.
pub(in crate::telemetry) const CALL_WAIT: &str = "mcp.client.resilience.call.wait.duration";
/// Counter: tool calls that ended with a `CallError`, by kind and whether they may have run.
pub(in crate::telemetry) const CALL_FAILURES: &str = "mcp.client.resilience.call.failures";
/// Counter: swaps of a server's registered tool set that changed something.
pub(in crate::telemetry) const TOOL_SWAPS: &str = "mcp.client.resilience.tools.swaps";
/// Counter: tools added, removed or changed by those swaps.
pub(in crate::telemetry) const TOOL_CHANGES: &str = "mcp.client.resilience.tools.changes";
/// Gauge: tools registered for a server.
pub(in crate::telemetry) const TOOLS: &str = "mcp.client.resilience.tools";
/// Counter: OAuth renewals after a refusal (refresh, new authorization, scope step-up), with
/// `error.type` when no token came of it.
pub(in crate::telemetry) const AUTH_RENEWALS: &str = "mcp.client.resilience.auth.renewals";
/// Counter: authorizations refused (no token can be had: the user must act).
pub(in crate::telemetry) const AUTH_REFUSALS: &str = "mcp.client.resilience.auth.refusals";
/// Counter: `Limits` bounds a server passed, by limit.
pub(in crate::telemetry) const LIMITS_EXCEEDED: &str = "mcp.client.resilience.limits.exceeded";
/// Counter: responses to requests never sent (or answered already), dropped.
pub(in crate::telemetry) const STRAY_RESPONSES: &str = "mcp.client.resilience.responses.stray";

/// The configured server name (`[A-Za-z0-9_-]{1,32}`).
pub(in crate::telemetry) const SERVER: &str = "mcp_resilient.server";
/// `stdio`, `sse` (legacy HTTP+SSE) or `http` (Streamable HTTP).
pub(in crate::telemetry) const TRANSPORT: &str = "mcp_resilient.transport";
/// `connecting`, `ready`, `reconnecting`, `failed`, `stopped`.
pub(in crate::telemetry) const STATE_NAME: &str = "mcp_resilient.state";
/// A cause: `process_exited`, `stream_closed`, `session_expired`, `heartbeat_timeout`,
/// `transport_error`, `connect_failed`, `unauthorized`, `rejected`, `limit_exceeded`.
pub(in crate::telemetry) const CAUSE: &str = "mcp_resilient.cause";
/// `connection_failed` or `connection_lost`.
pub(in crate::telemetry) const REASON: &str = "mcp_resilient.reason";
/// `death`, `busy`, `overload`, `suspect`, `alive`, `unauthorized`, `auth_unavailable`,
/// `rejected`.
pub(in crate::telemetry) const VERDICT: &str = "mcp_resilient.verdict";
/// Whether a failed call may have run on the server (a boolean).
pub(in crate::telemetry) const MAY_HAVE_RUN: &str = "mcp_resilient.may_have_run";
/// `added`, `removed` or `changed`.
pub(in crate::telemetry) const CHANGE: &str = "mcp_resilient.change";
/// A `Limits` field: `max_list_bytes`, `max_list_items`, `max_list_pages`, `max_message_bytes`,
/// `max_sse_event_bytes`, `max_sse_line_bytes`, or `other`.
pub(in crate::telemetry) const LIMIT: &str = "mcp_resilient.limit";
/// The generation number (spans only: it grows without bound).
pub(in crate::telemetry) const GENERATION: &str = "mcp_resilient.generation";

/// Convention: the session id a 2025-era Streamable HTTP server gave (spans only: one value
/// per session).
pub(in crate::telemetry) const SESSION_ID: &str = "mcp.session.id";
/// Convention: the JSON-RPC method.
pub(in crate::telemetry) const METHOD: &str = "mcp.method.name";
/// Convention: the protocol version the generation negotiated (the era).
pub(in crate::telemetry) const PROTOCOL_VERSION: &str = "mcp.protocol.version";
/// Convention: `pipe` (stdio) or `tcp` (HTTP).
pub(in crate::telemetry) const NETWORK_TRANSPORT: &str = "network.transport";
/// Convention: `http` for the remote transports.
pub(in crate::telemetry) const NETWORK_PROTOCOL: &str = "network.protocol.name";
/// Convention: the class of error an operation ended with.
pub(in crate::telemetry) const ERROR_TYPE: &str = "error.type";
/// Convention: the JSON-RPC error code of an error answer.
pub(in crate::telemetry) const RPC_STATUS: &str = "rpc.response.status_code";
/// Convention: the tool of a `tools/call` (only with [`Telemetry::tool_names`](super::Telemetry::tool_names)).
pub(in crate::telemetry) const TOOL_NAME: &str = "gen_ai.tool.name";
/// Convention: `execute_tool` on a `tools/call`.
pub(in crate::telemetry) const OPERATION_NAME: &str = "gen_ai.operation.name";
/// Convention: the JSON-RPC id of a request (spans only).
pub(in crate::telemetry) const REQUEST_ID: &str = "jsonrpc.request.id";
