//! A request's response opened before its work: the status, the headers and a first event go
//! out to the host before a tool call reaches an upstream, and before a session taken over from
//! the store is rebuilt here.
//!
//! Why: a gateway process can die with a request in its hands (a replica of a fleet killed). A
//! host that holds a response head and an event id asks for the rest of the stream
//! (`Last-Event-ID`), wherever the balancer sends it, and is answered there
//! (`gateway/src/http/lost/mod.rs`). A host whose request died before its head went out gets the
//! balancer's `502` and nothing to resume. rmcp writes the head of a 2025 session's request as
//! soon as it has made the request's stream, but only after it has taken a session over from
//! the store (which waits on Redis and on rebuilding the session, its own upstreams started);
//! and it writes a 2026-07-28 request's head only once the handler has a first message, the
//! upstream's answer to a call. Here the head goes out at the points where waiting would begin:
//!
//! - a session taken over from the store: once the store has made this process its owner
//!   ([`Openings::taken_over`]), before the session is rebuilt;
//! - a tool call: before it runs ([`Opening::open`], from the front's call hook), and the call
//!   waits until the head and the first event are written.
//!
//! The first event of a 2025 session's request is a priming event whose id is tagged like every
//! event id of the request's stream (`early~{tag}`), so the request can be answered as lost
//! from any process; rmcp's own events follow when it has them. A 2026-07-28 request's is an SSE
//! comment: that revision has no resumption, its hosts send the request again.
//!
//! # Invariants
//!
//! 1. A tool call runs only after its response's head and first event were handed to the
//!    socket (the connection flushed them before the body was asked for more), or after the
//!    host was gone, or [`OUT_LIMIT`](stage::OUT_LIMIT): so a balancer that saw no head from a process that died
//!    may send the request to another process without running it twice
//!    (`scripts/fleet/nginx.conf.in`, `proxy_next_upstream ... non_idempotent`).
//! 2. Once the head is out, every answer rmcp gives the request reaches the host in the stream:
//!    an SSE body as it is, anything else (a status other than 200, a JSON body) as one event
//!    holding the JSON-RPC message, or a JSON-RPC error with the request's id that says which
//!    status the gateway answered.
//! 3. A request is opened early only if its session is known to be here or claimed here: what
//!    decides a `404` (session unknown) or a `500` (the store could not tell) comes first.

use std::sync::Arc;

use axum::{
    body::Body,
    extract::Request,
    http::{HeaderValue, Method, StatusCode, header},
    middleware::Next,
    response::Response,
};
use bytes::Bytes;
use futures::{StreamExt, stream::BoxStream};
use rmcp::model::NumberOrString;
use serde::Deserialize;

use self::{
    body::events,
    stage::{OpeningOf, Release},
    table::Registered,
};
use super::{
    lost::{Tag, Unanswered},
    sessions::RESUME_AFTER,
};

mod body;
mod stage;
mod table;

pub(in crate::http) use body::Paced;
pub(in crate::http) use stage::{OUT_LIMIT, Opening};
pub(in crate::http) use table::Openings;

/// What the guard does once rmcp's own answer is known (a session's slot bound or given back).
pub(in crate::http) type Settle = Box<dyn FnOnce(&Response) + Send>;

/// What the guard knows of a request.
pub(in crate::http) struct Known {
    /// The openings of requests waiting on a take-over.
    pub(in crate::http) openings: Arc<Openings>,
    /// The body bound (`--max-body`).
    pub(in crate::http) max_body: usize,
    /// The request's `Mcp-Session-Id`.
    pub(in crate::http) session: Option<String>,
    /// Whether it is a 2026-07-28 request (no session).
    pub(in crate::http) stateless: bool,
}

/// The JSON-RPC fields that say what a body is.
#[derive(Deserialize)]
struct Peek {
    id: Option<NumberOrString>,
    method: Option<String>,
    params: Option<PeekParams>,
}

/// What of a request's parameters rmcp's typed parse cannot tell.
#[derive(Deserialize)]
struct PeekParams {
    /// `Some(Value::Null)` for an explicit `null`, which the typed parse takes for absent.
    #[serde(rename = "inputResponses", default, deserialize_with = "present")]
    input_responses: Option<serde_json::Value>,
}

/// A field that is there, whatever its value (`null` included).
fn present<'de, D: serde::Deserializer<'de>>(
    field: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(field).map(Some)
}

/// A 2026-07-28 `tools/call` whose `inputResponses` is `null` is malformed (SEP-2322: a
/// protocol error is a JSON-RPC error); the handler refuses every other malformed one, but
/// reads this one as absent. The refusal, if any, answering `id`.
fn malformed(known: &Known, peek: &Peek, id: &NumberOrString) -> Option<Response> {
    let null = peek.params.as_ref()?.input_responses.as_ref()?.is_null();
    if !known.stateless || peek.method.as_deref() != Some("tools/call") || !null {
        return None;
    }
    let message = "inputResponses must be an object, not null";
    let id = serde_json::json!(id);
    Some(super::refusal::error(StatusCode::OK, id, -32602, message))
}

/// rmcp's answer to `request`, opened early where waiting would begin (see the module docs);
/// `settle` runs once rmcp's own answer is known.
pub(in crate::http) async fn respond(
    request: Request,
    next: Next,
    known: Known,
    settle: Settle,
) -> Response {
    let eligible = request.method() == Method::POST && (known.session.is_some() || known.stateless);
    let length = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|length| *length <= known.max_body);
    if !eligible || length.is_none() {
        return plain(request, next, settle).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, known.max_body).await else {
        return super::refusal::refuse(
            StatusCode::BAD_REQUEST,
            "the request body was not read whole",
        );
    };
    let mut request = Request::from_parts(parts, Body::from(bytes.clone()));
    let peek = serde_json::from_slice::<Peek>(&bytes).ok();
    if let Some(peek) = &peek
        && let Some(id) = &peek.id
        && let Some(refused) = malformed(&known, peek, id)
    {
        settle(&refused);
        return refused;
    }
    let first = match peek {
        Some(Peek {
            id: Some(id),
            method: Some(method),
            ..
        }) => first_event(&known, &method, &id).map(|event| (event, id, method == "tools/call")),
        _ => None,
    };
    let Some((first, id, call)) = first else {
        return plain(request, next, settle).await;
    };
    // What the drain's limit answers, if the request is still in flight then.
    let unanswered = Unanswered::new(call, id.clone());
    let opening = Opening::new();
    request.extensions_mut().insert(OpeningOf(opening.clone()));
    let registered = known
        .session
        .map(|session| known.openings.register(session, &opening));
    let release = Release(opening.clone());
    let mut work = Box::pin(next.run(request));
    let asked = opening.asked();
    tokio::pin!(asked);
    let answered = tokio::select! {
        biased;
        response = &mut work => Some(response),
        () = &mut asked => None,
    };
    if let Some(response) = answered {
        // rmcp answered first: its head goes out now, and a call waits for it as for ours.
        settle(&response);
        let (parts, body) = response.into_parts();
        let body = paced(body.into_data_stream().boxed(), release, registered);
        let mut response = Response::from_parts(parts, Body::from_stream(body));
        response.extensions_mut().insert(unanswered);
        return response;
    }
    let rest = futures::stream::once(async move {
        let response = work.await;
        settle(&response);
        events(response, id).await
    })
    .flatten();
    let chunks = futures::stream::once(async move { Ok(first) }).chain(rest);
    let body = paced(chunks.boxed(), release, registered);
    let mut response = Response::new(Body::from_stream(body));
    response.extensions_mut().insert(unanswered);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

async fn plain(request: Request, next: Next, settle: Settle) -> Response {
    let response = next.run(request).await;
    settle(&response);
    response
}

/// The first event of an early response, if the request gets one: a 2025 session's request
/// whose id can be tagged, or a 2026-07-28 request.
fn first_event(known: &Known, method: &str, id: &NumberOrString) -> Option<Bytes> {
    if known.session.is_none() {
        return Some(Bytes::from_static(b": opened\n\n"));
    }
    let tag = Tag::for_request(method == "tools/call", id)?;
    Some(Bytes::from(format!(
        "id: early~{tag}\nretry: {}\ndata:\n\n",
        RESUME_AFTER.as_millis()
    )))
}

#[cfg(test)]
mod tests;

/// `chunks` as a body that marks `release`'s opening out once its first chunk was written, and
/// holds both guards for as long as it is sent.
fn paced(
    chunks: BoxStream<'static, Result<Bytes, axum::Error>>,
    release: Release,
    registered: Option<Registered>,
) -> Paced {
    let opening = release.0.clone();
    Paced::new(chunks, move || opening.out(), (release, registered))
}
