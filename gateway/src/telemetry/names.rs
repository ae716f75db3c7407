//! The names the gateway records under, beside the library's (PROMETHEUS.md lists both):
//! OpenTelemetry's MCP semantic conventions for the server side, ours (`mcp.*.resilience.*`)
//! where they have no word. A Prometheus scrape shows each with dots as underscores, the unit as
//! a suffix (`_seconds`) and `_total` on counters.

/// Histogram, seconds: every host request the proxy or the gateway served, from receipt to
/// answer. Convention (the server side of `mcp.client.operation.duration`).
pub const SERVER_OPERATION_DURATION: &str = "mcp.server.operation.duration";
/// Histogram, seconds: how long a host session lasted (the stdio proxy's one session, or one of
/// the gateway's). Convention.
pub const SERVER_SESSION_DURATION: &str = "mcp.server.session.duration";
/// Up-down counter: host sessions open now, by `network.transport`.
pub const HOST_SESSIONS: &str = "mcp.server.resilience.host_sessions";
/// Counter: operations of the gateway's shared host-session store (Redis) that failed or ran
/// past their bound, by `operation` (`claim`, `write`); the gateway goes on from its own copy.
pub const HOST_STORE_FAILURES: &str = "mcp.server.resilience.host_store.failures";
/// Counter: notifications dropped for a host that reads too slowly, by method.
pub const NOTIFICATIONS_DROPPED: &str = "mcp.client.resilience.notifications.dropped";

/// Counter: reloads of `serve`'s configuration (SIGHUP), by `outcome` (`applied`, `refused`:
/// nothing changed).
pub const RELOADS: &str = "mcp.server.resilience.reloads";

/// Every metric name above, for a check that all of them are present.
pub const ALL_METRICS: [&str; 6] = [
    SERVER_OPERATION_DURATION,
    SERVER_SESSION_DURATION,
    HOST_SESSIONS,
    HOST_STORE_FAILURES,
    NOTIFICATIONS_DROPPED,
    RELOADS,
];

// The attributes, as the conventions name them (the library's names say the same).
/// Convention: the JSON-RPC method.
pub const METHOD: &str = "mcp.method.name";
/// Convention: the protocol version the host session negotiated.
pub const PROTOCOL_VERSION: &str = "mcp.protocol.version";
/// Convention: `pipe` (stdio) or `tcp` (HTTP).
pub const NETWORK_TRANSPORT: &str = "network.transport";
/// Convention: the class of error a request ended with.
pub const ERROR_TYPE: &str = "error.type";
/// Convention: the tool of a `tools/call` (only when the library's telemetry has tool names on).
pub const TOOL_NAME: &str = "gen_ai.tool.name";
/// Convention: `execute_tool` on a `tools/call`.
pub const OPERATION_NAME: &str = "gen_ai.operation.name";
