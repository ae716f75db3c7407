//! What a remote mock server reports about itself: the requests it received
//! ([`RecordedRequest`], `GET /_mock/requests`) and a snapshot of its state ([`MockState`],
//! `GET /_mock/state`). Plain data; [`super::state`] records, [`super::faults`] reports.

use std::collections::BTreeMap;

use serde::Serialize;

/// One MCP request the server received (admin routes are not recorded).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordedRequest {
    /// The HTTP method, e.g. `"POST"`.
    pub method: String,
    /// The request path without the query, e.g. `"/mcp"`.
    pub path: String,
    /// Header names (lowercase) and values (lossy UTF-8); a repeated header keeps its last value.
    pub headers: BTreeMap<String, String>,
    /// The JSON-RPC `method` of each message in a POST's body (requests and notifications, in
    /// order); empty for other requests and for bodies that are not JSON-RPC.
    pub rpc_methods: Vec<String>,
    /// A POST's body (lossy UTF-8) when it is at most 4 KiB; empty otherwise
    /// (the benchmark replays a probe's exact bytes from it).
    pub body: String,
    /// When the request arrived, in microseconds since the Unix epoch (the benchmark lines these
    /// up with client-side times of another process on the same machine).
    pub at_us: u64,
}

/// The largest POST body a [`RecordedRequest`] keeps.
pub(crate) const RECORDED_BODY: usize = 4096;

/// What `GET /_mock/state` reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MockState {
    /// The server's boot id (`--boot-id` or random).
    pub boot_id: String,
    /// The process id serving.
    pub pid: u32,
    /// Open sessions, legacy SSE and Streamable HTTP together.
    pub sessions: usize,
    /// `tools/call` requests received so far.
    pub calls: u64,
    /// Open GET streams (legacy `GET /sse` and Streamable HTTP standalone `GET /mcp`).
    pub streams: usize,
    /// MCP requests the gate answered itself (status faults, redirects, modern-only
    /// rejections) instead of the server.
    pub faults_injected: u64,
    /// JSON-RPC requests received so far by method, counted on arrival (also those a fault
    /// answered); the same map `whoami` reports.
    pub methods: BTreeMap<String, u64>,
    /// Live `subscriptions/listen` subscriptions (registered and not ended).
    pub listens: usize,
    /// Whether Streamable HTTP runs without sessions now
    /// ([`Faults::set_stateless`](crate::Faults::set_stateless)).
    pub stateless: bool,
    /// The value of `mock://counter`
    /// ([`Faults::bump_counter`](crate::Faults::bump_counter), the `bump` tool).
    pub counter: u64,
    /// Live resource subscriptions: one per (initialize-era session, URI) of
    /// `resources/subscribe`, plus one per URI accepted by each running 2026-07-28
    /// `subscriptions/listen` (the same number `whoami` reports). Poll it to see a client
    /// re-subscribe after a restart.
    pub resource_subscriptions: usize,
    /// The level the last `logging/setLevel` set (`"debug"` … `"emergency"`), if any.
    pub log_level: Option<String>,
    /// Calls of `sleep`, `block` and `progress` that ended because their request was
    /// cancelled (`notifications/cancelled`, a 2026-07-28 client closing the response stream,
    /// or the session ending).
    pub cancelled: u64,
}
