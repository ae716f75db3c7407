//! A request in a session answered: dispatched to the session's handler through rmcp's
//! dispatch, and written as one JSON-RPC message.

use std::sync::Arc;

use axum::{
    body::Body,
    http::{HeaderValue, StatusCode, header, request::Parts},
    response::Response,
};
use bytes::Bytes;
use rmcp::{
    RoleServer, Service,
    model::{
        ClientRequest, GetExtensions, GetMeta, JsonRpcRequest, RequestId, ServerJsonRpcMessage,
        ServerResult,
    },
    service::RequestContext,
};

use super::{
    SESSION_HEADER,
    table::{Session, Table},
};
use crate::{ProxyHandler, http::refusal::refuse};

/// A request in a session, answered.
pub(super) async fn ask(
    table: &Table,
    session: &Arc<Session>,
    parts: Parts,
    request: JsonRpcRequest<ClientRequest>,
) -> ServerJsonRpcMessage {
    let JsonRpcRequest {
        id, mut request, ..
    } = request;
    let cancel = session.ended.child_token();
    let _busy = session.busy(table, Some((id.clone(), cancel.clone())));
    let mut context = RequestContext::new(id.clone(), session.peer.clone());
    context.ct = cancel;
    context.meta = std::mem::take(request.get_meta_mut());
    context.extensions = std::mem::take(request.extensions_mut());
    context.extensions.insert(parts);
    message(dispatch(&session.handler, request, context).await, id)
}

pub(super) fn message(
    answer: Result<ServerResult, rmcp::ErrorData>,
    id: RequestId,
) -> ServerJsonRpcMessage {
    match answer {
        Ok(result) => ServerJsonRpcMessage::response(result, id),
        Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
    }
}

/// `message` as the response's JSON body, with the session's id when it opens one.
pub(super) fn json(message: &ServerJsonRpcMessage, session: Option<&str>) -> Response {
    let body = match serde_json::to_vec(message) {
        Ok(body) => body,
        Err(error) => {
            tracing::warn!(%error, "an answer could not be written");
            return refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the answer could not be written",
            );
        }
    };
    let mut response = Response::new(Body::from(body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Some(id) = session.and_then(|id| HeaderValue::from_str(id).ok()) {
        headers.insert(SESSION_HEADER, id);
    }
    response
}

/// What the handler is asked, through rmcp's dispatch (the revision's shaping included).
pub(super) fn dispatch(
    handler: &ProxyHandler,
    request: ClientRequest,
    context: RequestContext<RoleServer>,
) -> impl Future<Output = Result<ServerResult, rmcp::ErrorData>> + Send + '_ {
    handler.handle_request(request, context)
}

/// A response whose body is an SSE stream.
pub(super) fn sse(body: Body) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // A proxy passes each event on as it comes (nginx reads this).
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// One SSE event carrying `message`.
pub(super) fn event(message: &ServerJsonRpcMessage) -> Option<Bytes> {
    let json = serde_json::to_string(message).ok()?;
    Some(Bytes::from(format!("event: message\ndata: {json}\n\n")))
}
