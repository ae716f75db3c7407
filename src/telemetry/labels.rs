//! The bounded attribute values: one generation's labels, and the words for verdicts, call
//! errors, JSON-RPC codes and limits. Nothing here carries an argument, a URL or a token.
//! Over 300 lines: one concept, the attribute values a measurement may carry, with their tests.

use std::{
    sync::{Arc, Mutex, OnceLock, PoisonError},
    time::Instant,
};

use opentelemetry::KeyValue;

use super::names;
use crate::{
    CallError,
    state::{Cause, Death, Generation},
    verdict::Verdict,
};

/// What every measurement of one generation carries: the server, its transport and the
/// protocol version it negotiated. Cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Labels(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    /// The supervisor's own name (shared, not copied).
    server: Arc<str>,
    generation: Generation,
    /// The attributes after the server's, shared ([`Common::of`]).
    common: Arc<Common>,
    /// When the generation became ready (for the session duration).
    born: Instant,
    /// The server's `Mcp-Session-Id`, if it gave one (spans only).
    session: Option<Arc<str>>,
    /// What a probe answered alive records, per method (`ping`, `server/discover`): built at
    /// the first (a healthy heartbeat records the same every interval).
    alive: [OnceLock<AliveProbe>; 2],
}

/// Transport, network transport (and protocol), protocol version (empty: not known yet).
#[derive(Debug)]
struct Common {
    transport: &'static str,
    protocol: Arc<str>,
    attributes: Box<[KeyValue]>,
}

/// The shared [`Common`]s.
static TABLE: Mutex<Vec<Arc<Common>>> = Mutex::new(Vec::new());

/// The most distinct [`Common`]s kept for sharing: far more than the transports times the
/// versions this crate speaks; past it, a generation builds its own.
const SHARED_COMMONS: usize = 32;

impl Common {
    /// The attributes of `transport` and `protocol`: one shared copy, built at the first
    /// generation that needs it (every idle session held its own: issue 43).
    fn of(transport: &'static str, protocol: &str) -> Arc<Common> {
        let mut table = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
        let same = |c: &&Arc<Common>| c.transport == transport && &*c.protocol == protocol;
        if let Some(found) = table.iter().find(same) {
            return found.clone();
        }
        let protocol: Arc<str> = Arc::from(protocol);
        let network = if transport == "stdio" { "pipe" } else { "tcp" };
        let mut attributes = vec![
            KeyValue::new(names::TRANSPORT, transport),
            KeyValue::new(names::NETWORK_TRANSPORT, network),
        ];
        if transport != "stdio" {
            attributes.push(KeyValue::new(names::NETWORK_PROTOCOL, "http"));
        }
        if !protocol.is_empty() {
            // An `Arc`: cloned for every operation, where a `String` would be copied.
            attributes.push(KeyValue::new(names::PROTOCOL_VERSION, protocol.clone()));
        }
        let common = Arc::new(Common {
            transport,
            protocol,
            attributes: attributes.into(),
        });
        if table.len() < SHARED_COMMONS {
            table.push(common.clone());
        }
        common
    }
}

/// The attributes a probe answered alive records (see [`Labels::alive_probe`]).
#[derive(Debug)]
pub(super) struct AliveProbe {
    /// `mcp.client.operation.duration`'s.
    pub(super) operation: Box<[KeyValue]>,
    /// The verdict counter's.
    pub(super) verdict: Box<[KeyValue]>,
}

impl Labels {
    /// The labels of generation `generation` of `server`, over `transport`, which negotiated
    /// `protocol` (empty: not known yet), in session `session` (`Mcp-Session-Id`, if any).
    pub(crate) fn new(
        server: Arc<str>,
        generation: Generation,
        transport: &'static str,
        protocol: &str,
        session: Option<&str>,
    ) -> Self {
        Labels(Arc::new(Inner {
            server,
            generation,
            common: Common::of(transport, protocol),
            born: Instant::now(),
            session: session.map(Arc::from),
            alive: [OnceLock::new(), OnceLock::new()],
        }))
    }

    /// The attributes of a `method` probe answered alive, built once per generation and
    /// method; `None` for a method no probe sends.
    pub(super) fn alive_probe(&self, method: &'static str) -> Option<&AliveProbe> {
        let slot = match method {
            "ping" => &self.0.alive[0],
            "server/discover" => &self.0.alive[1],
            _ => return None,
        };
        Some(slot.get_or_init(|| AliveProbe {
            operation: operation_attributes(self, method, None, None, None).into(),
            verdict: verdict_attributes(self, method, verdict(&Verdict::Alive)).into(),
        }))
    }

    pub(super) fn server(&self) -> &Arc<str> {
        &self.0.server
    }

    /// The server attribute alone, sharing the name (no copy of it).
    pub(super) fn server_attribute(&self) -> KeyValue {
        KeyValue::new(names::SERVER, self.0.server.clone())
    }

    pub(super) fn protocol(&self) -> &str {
        &self.0.common.protocol
    }

    pub(super) fn generation(&self) -> Generation {
        self.0.generation
    }

    /// The server's `Mcp-Session-Id`, if it gave one.
    pub(super) fn session(&self) -> Option<&Arc<str>> {
        self.0.session.as_ref()
    }

    /// Server, transport, network transport, protocol version, in a vector with room for the
    /// few an operation adds (no reallocation when they are pushed).
    pub(super) fn attributes(&self) -> Vec<KeyValue> {
        let shared = &self.0.common.attributes;
        let mut attributes = Vec::with_capacity(1 + shared.len() + ADDED);
        attributes.push(self.server_attribute());
        attributes.extend_from_slice(shared);
        attributes
    }

    /// Seconds since the generation became ready.
    pub(super) fn age(&self) -> f64 {
        self.0.born.elapsed().as_secs_f64()
    }
}

/// The most attributes an operation adds to the common ones (method, operation name, tool,
/// error type, status; or generation and session on a span).
const ADDED: usize = 5;

/// An operation duration's attributes: the generation's, the method, what the outcome adds.
pub(super) fn operation_attributes(
    labels: &Labels,
    method: &'static str,
    tool: Option<&str>,
    error: Option<&'static str>,
    status: Option<&'static str>,
) -> Vec<KeyValue> {
    let mut attributes = labels.attributes();
    attributes.push(KeyValue::new(names::METHOD, method));
    if method == "tools/call" {
        attributes.push(KeyValue::new(names::OPERATION_NAME, "execute_tool"));
    }
    if let Some(tool) = tool {
        attributes.push(KeyValue::new(names::TOOL_NAME, tool.to_owned()));
    }
    if let Some(error) = error {
        attributes.push(KeyValue::new(names::ERROR_TYPE, error));
    }
    if let Some(status) = status {
        attributes.push(KeyValue::new(names::RPC_STATUS, status));
    }
    attributes
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

/// The server attribute alone.
pub(super) fn server(server: &str) -> KeyValue {
    KeyValue::new(names::SERVER, Arc::<str>::from(server))
}

/// The fault model's word for a verdict.
pub(super) fn verdict(verdict: &Verdict) -> &'static str {
    match verdict {
        Verdict::Death(_) => "death",
        Verdict::Busy => "busy",
        Verdict::Overload { .. } => "overload",
        Verdict::Suspect { .. } => "suspect",
        Verdict::Alive => "alive",
        Verdict::Unauthorized { .. } => "unauthorized",
        Verdict::AuthUnavailable { .. } => "auth_unavailable",
        Verdict::Rejected { .. } => "rejected",
    }
}

/// A call error's kind, snake_case, and whether the call may have run on the server
/// ([`CallError::may_have_run`], the crate's one answer to that).
pub(super) fn call_error(error: &CallError) -> (&'static str, bool) {
    (error.kind(), error.may_have_run())
}

/// A call error's kind (`error.type`).
pub(crate) fn error_kind(error: &CallError) -> &'static str {
    call_error(error).0
}

/// A JSON-RPC error code as the conventions' `error.type` and `rpc.response.status_code`: the
/// codes JSON-RPC and MCP define, else `_OTHER` (a server, or a host, could send endless codes and
/// each would be a new time series).
pub fn rpc_error_type(code: i32) -> &'static str {
    match code {
        -32700 => "-32700",
        -32600 => "-32600",
        -32601 => "-32601",
        -32602 => "-32602",
        -32603 => "-32603",
        -32800 => "-32800",
        -32002 => "-32002",
        -32042 => "-32042",
        -32020 => "-32020",
        -32021 => "-32021",
        -32022 => "-32022",
        _ => "_OTHER",
    }
}

/// The `Limits` field a `limit_exceeded` death names (its detail always does), or `other`.
pub(super) fn limit(death: &Death) -> Option<&'static str> {
    const FIELDS: [&str; 6] = [
        "max_list_bytes",
        "max_list_items",
        "max_list_pages",
        "max_message_bytes",
        "max_sse_event_bytes",
        "max_sse_line_bytes",
    ];
    (death.cause == Cause::LimitExceeded).then(|| {
        FIELDS
            .into_iter()
            .find(|field| death.detail.contains(field))
            .unwrap_or("other")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_death_names_its_field_and_nothing_else_does() {
        let death = crate::verdict::limit::exceeded(
            "tools/list exceeded limits.max_list_items (15): 20 tools in 2 pages",
        );
        assert_eq!(limit(&death), Some("max_list_items"));
        let strange = crate::verdict::limit::exceeded("a limit nobody named");
        assert_eq!(limit(&strange), Some("other"));
        assert_eq!(
            limit(&Death::new(Cause::ProcessExited, "exit status: 1")),
            None
        );
    }

    #[test]
    fn a_server_chosen_error_code_is_bounded() {
        assert_eq!(rpc_error_type(-32602), "-32602");
        assert_eq!(rpc_error_type(12345), "_OTHER");
        assert_eq!(rpc_error_type(-32099), "_OTHER");
    }

    #[test]
    fn generations_alike_share_their_attributes_and_the_shared_table_is_bounded() {
        let server: Arc<str> = Arc::from("s");
        let label = |generation, transport, protocol: &str| {
            Labels::new(
                server.clone(),
                Generation::of(generation),
                transport,
                protocol,
                None,
            )
        };
        let (a, b) = (
            label(1, "http", "2025-11-25"),
            label(2, "http", "2025-11-25"),
        );
        assert!(Arc::ptr_eq(&a.0.common, &b.0.common));
        assert!(Arc::ptr_eq(a.server(), &server));
        let keys: Vec<String> = a
            .attributes()
            .iter()
            .map(|kv| kv.key.as_str().to_owned())
            .collect();
        assert_eq!(keys.first().map(String::as_str), Some(names::SERVER));
        assert_eq!(
            keys.last().map(String::as_str),
            Some(names::PROTOCOL_VERSION)
        );
        assert_eq!(a.protocol(), "2025-11-25");
        // Versions nobody expected: each still gets its attributes, the table stops growing.
        for i in 0..2 * SHARED_COMMONS {
            let odd = label(1, "stdio", &format!("v{i}"));
            assert_eq!(odd.protocol(), format!("v{i}"));
        }
        let kept = TABLE.lock().unwrap_or_else(PoisonError::into_inner).len();
        assert!(kept <= SHARED_COMMONS, "{kept}");
    }
}
