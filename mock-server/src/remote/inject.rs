//! Answers the gate gives instead of the server: a redirect, an injected status (see
//! [`super::status`]), a 2026-only server's rejection of `initialize`, and a 2025 server's
//! refusal of `server/discover` ([`crate::hostile::discover`]).
//!
//! # Invariants
//!
//! 1. A request answered here never reaches the MCP handler (so it is not in `calls`), and
//!    counts once in `faults_injected`.
//! 2. A request not answered here is handed on with the same body bytes.
//! 3. Precedence: redirect, then a lost session, then the status fault, then modern-only, then a discover refusal.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use axum::extract::Request;
use axum::http::header::{CONTENT_TYPE, LOCATION};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use rmcp::model::{ErrorData, ProtocolVersion};
use serde_json::{Value, json};

use super::status::{Armed, InvalidFault, StatusFault, header_value};
use crate::hostile::discover::DiscoverRefusal;

/// The request-answering faults of one server.
#[derive(Default)]
pub(crate) struct Injections {
    /// Set only by [`Injections::set_status`] (`Faults::set_status_fault`); its counters
    /// advance under this lock.
    status: Mutex<Option<Armed>>,
    /// Set only by [`Injections::set_redirect`] (`Faults::set_redirect`).
    redirect: Mutex<Option<HeaderValue>>,
    /// Streamable HTTP sessions the server "lost": their requests get 404. Added to only by
    /// [`Injections::lose_session`] (`Faults::lose_session`).
    lost: Mutex<std::collections::HashSet<String>>,
    /// Answers given here so far; never reset.
    injected: AtomicU64,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Injections {
    fn count(&self, answer: Response) -> Response {
        self.injected.fetch_add(1, Ordering::SeqCst);
        answer
    }

    /// From now on every request carrying the session id `id` gets 404, as from a server that
    /// lost that session; the session's stream, if open, stays open.
    pub(crate) fn lose_session(&self, id: &str) {
        lock(&self.lost).insert(id.to_owned());
    }

    /// Arms `fault` (a fresh set of counters), or clears it.
    ///
    /// # Errors
    /// A status outside 200–599 or a header value with control characters; the previous
    /// setting then stays.
    pub(crate) fn set_status(&self, fault: Option<StatusFault>) -> Result<(), InvalidFault> {
        let armed = fault.map(Armed::new).transpose()?;
        *lock(&self.status) = armed;
        Ok(())
    }

    /// Redirects every MCP request to `location` from now on, or (`None`) stops.
    ///
    /// # Errors
    /// A location that is not a valid header value; the previous setting then stays.
    pub(crate) fn set_redirect(&self, location: Option<String>) -> Result<(), InvalidFault> {
        let location = location.map(|l| header_value("location", &l)).transpose()?;
        *lock(&self.redirect) = location;
        Ok(())
    }

    /// Answers given here so far.
    pub(crate) fn injected(&self) -> u64 {
        self.injected.load(Ordering::SeqCst)
    }
}

/// What the gate needs from a request body that may be JSON-RPC.
#[derive(Default)]
pub(super) struct Rpc {
    /// The `method` of each message (a batch has several).
    pub(super) methods: Vec<String>,
    /// The `method` of each request (a message with an `id`).
    pub(super) requests: Vec<String>,
    /// The tool `name` of each `tools/call` request.
    pub(super) tools_called: Vec<String>,
    /// For a single `initialize` request: its `id` (verbatim) and requested version.
    initialize: Option<(Value, ProtocolVersion)>,
    /// For a single `server/discover` request: its `id` (verbatim).
    discover: Option<Value>,
}

impl Rpc {
    pub(super) fn parse(body: &[u8]) -> Self {
        let Ok(value) = serde_json::from_slice::<Value>(body) else {
            return Self::default();
        };
        let messages = match &value {
            Value::Array(items) => items.iter().collect(),
            single => vec![single],
        };
        let method = |m: &&Value| Some(m.get("method")?.as_str()?.to_owned());
        let methods = messages.iter().filter_map(method).collect();
        let requests = messages
            .iter()
            .filter(|m| m.get("id").is_some())
            .filter_map(method)
            .collect();
        let tools_called = messages
            .iter()
            .filter(|m| m.get("id").is_some() && m.get("method") == Some(&json!("tools/call")))
            .filter_map(|m| Some(m.get("params")?.get("name")?.as_str()?.to_owned()))
            .collect();
        let initialize = (value.get("method") == Some(&json!("initialize")))
            .then(|| {
                let id = value.get("id")?.clone();
                let version = value.get("params")?.get("protocolVersion")?.clone();
                Some((id, serde_json::from_value(version).ok()?))
            })
            .flatten();
        let discover = (value.get("method") == Some(&json!("server/discover")))
            .then(|| value.get("id").cloned())
            .flatten();
        Self {
            methods,
            requests,
            tools_called,
            initialize,
            discover,
        }
    }

    /// Whether this is a single `subscriptions/listen` request.
    pub(super) fn is_listen(&self) -> bool {
        self.requests == ["subscriptions/listen"]
    }
}

/// The answer given here in the server's place, if `request` gets one; `None` hands it on
/// unchanged. `rpc` is what its body holds (empty for a GET); `modern_only` and `refusal` (how
/// `server/discover` is refused, see [`crate::hostile::discover`]) are the server's switches.
pub(super) fn intercept(
    faults: &Injections,
    modern_only: bool,
    refusal: Option<DiscoverRefusal>,
    request: &Request,
    rpc: &Rpc,
) -> Option<Response> {
    if let Some(location) = lock(&faults.redirect).clone() {
        let answer = (
            StatusCode::TEMPORARY_REDIRECT,
            [(LOCATION, location)],
            "mock: redirected\n",
        );
        return Some(faults.count(answer.into_response()));
    }
    let session = request.headers().get("mcp-session-id");
    if let Some(id) = session.and_then(|id| id.to_str().ok())
        && lock(&faults.lost).contains(id)
    {
        let answer = (StatusCode::NOT_FOUND, "mock: session lost\n");
        return Some(faults.count(answer.into_response()));
    }
    let post = request.method() == Method::POST;
    // Only Streamable HTTP has a 2026-only flavour; legacy SSE routes are left alone.
    let modern = post && modern_only && request.uri().path().starts_with("/mcp");
    let status = lock(&faults.status)
        .as_mut()
        .and_then(|armed| armed.answer(request.method(), &rpc.methods));
    if let Some(answer) = status {
        return Some(faults.count(answer));
    }
    if let Some((id, requested)) = rpc.initialize.as_ref().filter(|_| modern) {
        let answer = unsupported_version(id.clone(), requested.clone());
        return Some(faults.count(answer));
    }
    let streamable = post && request.uri().path().starts_with("/mcp");
    let refusal = refusal.filter(|_| streamable);
    let answer = refusal.zip(rpc.discover.clone());
    answer.map(|(shape, id)| faults.count(shape.http_answer(id)))
}

/// A 2026-07-28-only server's answer to `initialize`. The error is rmcp 3.11's own
/// `ErrorData::unsupported_protocol_version` (`model.rs`: code `-32022`, message
/// `"Unsupported protocol version"`, data `{"requested", "supported"}`), the one its
/// `negotiate_protocol_version` returns, and its client reads `data.supported` to pick a version
/// (`service/client.rs`). HTTP 400 with a JSON body is how rmcp's Streamable HTTP server sends
/// that code (`jsonrpc_http_status` in `transport/streamable_http_server/tower.rs`).
fn unsupported_version(id: Value, requested: ProtocolVersion) -> Response {
    let supported = [ProtocolVersion::V_2026_07_28];
    let error = ErrorData::unsupported_protocol_version(requested, &supported);
    let body = json!({"jsonrpc": "2.0", "id": id, "error": error});
    let headers = [(CONTENT_TYPE, "application/json")];
    (StatusCode::BAD_REQUEST, headers, body.to_string()).into_response()
}
