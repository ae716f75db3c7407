//! The middleware in front of every MCP route: it records requests, counts their JSON-RPC
//! methods and applies the faults that act at the HTTP level (slow, the answers of
//! [`super::inject`], hang, block, stale-400, drop-streams, abrupt end of listens).

use std::sync::Arc;

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::inject::{self, Rpc};
use super::oauth;
use super::report::{RECORDED_BODY, RecordedRequest};
use super::state::{ServerState, StreamGuard};
use crate::block;

/// Largest MCP request body the gate reads into memory (to match a fault, or to hold it while
/// hung); a larger one is answered 400.
const BODY_LIMIT: usize = 16 * 1024 * 1024;

/// What is known of a request on arrival; its JSON-RPC methods are filled in once the body is read.
fn arrived(request: &Request) -> RecordedRequest {
    let headers = request
        .headers()
        .iter()
        .map(|(name, value)| {
            let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
            (name.as_str().to_owned(), value)
        })
        .collect();
    RecordedRequest {
        method: request.method().as_str().to_owned(),
        path: request.uri().path().to_owned(),
        headers,
        rpc_methods: Vec::new(),
        body: String::new(),
        at_us: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX)),
    }
}

/// Reads a POST's body (at most [`BODY_LIMIT`]) to see its JSON-RPC messages; other
/// requests pass untouched with an empty [`Rpc`].
async fn read_rpc(request: Request) -> Result<(Request, Rpc, String), Response> {
    if request.method() != axum::http::Method::POST {
        return Ok((request, Rpc::default(), String::new()));
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = to_bytes(body, BODY_LIMIT).await else {
        return Err(StatusCode::BAD_REQUEST.into_response());
    };
    let rpc = Rpc::parse(&bytes);
    let kept = match bytes.len() <= RECORDED_BODY {
        true => String::from_utf8_lossy(&bytes).into_owned(),
        false => String::new(),
    };
    Ok((Request::from_parts(parts, Body::from(bytes)), rpc, kept))
}

/// Runs an MCP request through the faults.
///
/// - every JSON-RPC request in a POST is counted by method on arrival;
/// - slow: waits before handing the request on (slow streams: a GET waits that much more);
/// - redirect, status fault, modern-only, discover refusal: answered here, never handed on;
/// - hang: reads the whole body, then holds the request until unhang;
/// - OAuth mode: a request without a valid access token (or, for the step-up tool, without
///   its scope) gets 401 (403) instead of reaching the server; the faults below still apply;
/// - block: the server handles a request that arrives while blocked, but its response head
///   waits until the block ends (the block call's own head does not: it came before);
/// - stale-400: turns a 404 for a Streamable HTTP request with a session id into 400;
/// - every response body holds its frames while hung or blocked and ends at `drop_streams`;
///   a `subscriptions/listen` response also ends at an abrupt `end_listens` (the abort token
///   is taken on arrival, so it covers every listen that arrived before the end).
pub(crate) async fn gate(
    State(server): State<Arc<ServerState>>,
    request: Request,
    next: Next,
) -> Response {
    let mut recorded = arrived(&request);
    let (request, rpc, body) = match read_rpc(request).await {
        Ok(read) => read,
        Err(answer) => {
            server.record(recorded);
            return answer;
        }
    };
    recorded.rpc_methods.clone_from(&rpc.methods);
    recorded.body = body;
    server.record(recorded);
    for method in &rpc.requests {
        server.shared.count_method(method);
    }
    let listen_abort = rpc.is_listen().then(|| server.shared.listens.abort_token());
    let slow = server.slow();
    if !slow.is_zero() {
        tokio::time::sleep(slow).await;
    }
    let slow_stream = server.slow_streams();
    if request.method() == axum::http::Method::GET && !slow_stream.is_zero() {
        tokio::time::sleep(slow_stream).await;
    }
    let modern_only = server.shared.modern_only();
    let refusal = server.shared.discover.get();
    if let Some(answer) = inject::intercept(&server.inject, modern_only, refusal, &request, &rpc) {
        return answer;
    }
    // The body was read above (a GET has none), so nothing waits on the client here.
    server.shared.wait_unhung().await;
    let arrived_blocked = server.shared.block.is_blocked();
    let is_stream = request.method() == axum::http::Method::GET;
    let stale_candidate = request.uri().path().starts_with("/mcp")
        && request.headers().contains_key("mcp-session-id");
    let refusal = (server.oauth.as_ref())
        .and_then(|authority| oauth::check(authority, &request, &rpc.tools_called));
    let mut response = match refusal {
        Some(refusal) => refusal,
        None => next.run(request).await,
    };
    if stale_candidate && response.status() == StatusCode::NOT_FOUND && server.stale_400() {
        *response.status_mut() = StatusCode::BAD_REQUEST;
    }
    // A blocked server sends nothing, not even the head of a response.
    if arrived_blocked {
        server.shared.block.hold().await;
    }
    let counted = (is_stream && response.status().is_success()).then(|| server.stream_opened());
    hold_body(&server, response, counted, listen_abort)
}

/// Wraps the body so it sends nothing while hung or blocked (frames wait in order; a block's
/// announcement passes) and ends when streams are dropped, or `abort` (a listen's) fires.
/// `guard` (for GET streams) is dropped with the body, which counts the stream as closed.
fn hold_body(
    server: &ServerState,
    response: Response,
    guard: Option<StreamGuard>,
    abort: Option<CancellationToken>,
) -> Response {
    let (parts, body) = response.into_parts();
    let shared = server.shared.clone();
    let dropped = server.stream_token();
    let end = async move {
        match abort {
            None => dropped.cancelled().await,
            Some(abort) => tokio::select! {
                () = dropped.cancelled() => {}
                () = abort.cancelled() => {}
            },
        }
    };
    let frames = body
        .into_data_stream()
        .then(move |frame| {
            let shared = shared.clone();
            let _counted = &guard;
            async move {
                shared.wait_unhung().await;
                let announcement =
                    matches!(&frame, Ok(bytes) if block::frame_is_announcement(bytes));
                if !announcement {
                    shared.block.hold().await;
                }
                frame
            }
        })
        .take_until(end);
    Response::from_parts(parts, Body::from_stream(frames))
}
