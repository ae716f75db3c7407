//! A host's `POST`: its body read once and parsed once, an `initialize` opening a session, a
//! request in a session answered (`asks.rs`, `progress.rs`), a notification or an answer taken
//! (`202`); a request in a session this process must take over from the store answered as a
//! stream opened before the session is rebuilt.

use std::sync::Arc;

use axum::{
    body::Body,
    extract::Request,
    http::{HeaderMap, StatusCode, header, request::Parts},
    response::{IntoResponse, Response},
};
use bytes::Bytes;
use futures::{StreamExt, stream::BoxStream};
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, GetMeta, JsonRpcRequest,
    ProtocolVersion, ServerJsonRpcMessage,
};

use super::{
    Own,
    open::{Claimed, Found},
    table::Session,
};
use crate::http::refusal::refuse;

const VERSION_HEADER: &str = "mcp-protocol-version";
/// The first revision without sessions: its requests are rmcp's.
const STATELESS_FROM: &str = "2026-07-28";

pub(super) async fn post(own: &Arc<Own>, request: Request, session: Option<String>) -> Response {
    let (parts, body) = request.into_parts();
    if let Err(refused) = acceptable(&parts.headers) {
        return *refused;
    }
    let declared = (parts.headers.get(header::CONTENT_LENGTH))
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|length| length > own.max_body) {
        return too_large(own.max_body);
    }
    let Ok(bytes) = axum::body::to_bytes(body, own.max_body).await else {
        return too_large(own.max_body);
    };
    let version = (parts.headers.get(VERSION_HEADER)).and_then(|v| v.to_str().ok());
    let stateless = version.is_some_and(|v| v >= STATELESS_FROM);
    let parsed = serde_json::from_slice::<ClientJsonRpcMessage>(&bytes);
    let Some(id) = session else {
        return match parsed {
            Ok(ClientJsonRpcMessage::Request(request))
                if !stateless && matches!(request.request, ClientRequest::InitializeRequest(_)) =>
            {
                super::open::initialize(own, parts, request).await
            }
            // Without a session: rmcp's (2026-07-28, discover, and what it refuses).
            _ => {
                own.to_rmcp(Request::from_parts(parts, Body::from(bytes)))
                    .await
            }
        };
    };
    if let Some(version) = version
        && !ProtocolVersion::KNOWN_VERSIONS
            .iter()
            .any(|known| known.as_str() == version)
    {
        let message = format!("MCP-Protocol-Version {version} is not one this gateway speaks");
        return refuse(StatusCode::BAD_REQUEST, &message);
    }
    let message = match parsed {
        Ok(message) => message,
        Err(error) => {
            let message = format!("the body is not one JSON-RPC message of MCP: {error}");
            return crate::http::refusal::error(
                StatusCode::BAD_REQUEST,
                serde_json::Value::Null,
                -32700,
                &message,
            );
        }
    };
    let (session, message) = match own.find(&id).await {
        Ok(Found::Here(session)) => (session, message),
        // A request waiting on a take-over: its response opens before the session is rebuilt.
        Ok(Found::Claimed(claimed)) => match message {
            ClientJsonRpcMessage::Request(request) if !initialize(&request) => {
                return taken_over(own, claimed, id, parts, request);
            }
            message => match claimed.rebuild(own, &id, &parts).await {
                Ok(session) => (session, message),
                Err(refused) => return refused,
            },
        },
        Err(refused) => return refused,
    };
    match message {
        ClientJsonRpcMessage::Request(request) => {
            if initialize(&request) {
                let message = "this session is initialized already";
                return refuse(StatusCode::BAD_REQUEST, message);
            }
            if let Some(token) = request.request.get_meta().get_progress_token() {
                return super::progress::streamed(own, &session, parts, request, token);
            }
            super::asks::answer(own, &session, parts, request).await
        }
        ClientJsonRpcMessage::Notification(notification) => {
            notified(&session, notification.notification);
            StatusCode::ACCEPTED.into_response()
        }
        // An answer to a question of ours (`asks.rs`), for this session only.
        answer @ (ClientJsonRpcMessage::Response(_) | ClientJsonRpcMessage::Error(_)) => {
            session.answered(answer);
            StatusCode::ACCEPTED.into_response()
        }
    }
}

fn initialize(request: &JsonRpcRequest<ClientRequest>) -> bool {
    matches!(request.request, ClientRequest::InitializeRequest(_))
}

/// `request` in session `id`, which this process has just claimed from the store: its
/// response's head and priming event go out now, then the session is rebuilt (its upstreams
/// started again, which may take seconds) and the request answered as events of that stream;
/// a host whose request dies with this process from here on can ask for it again elsewhere
/// and is told it may have run.
fn taken_over(
    own: &Arc<Own>,
    claimed: Box<Claimed>,
    id: String,
    parts: Parts,
    request: JsonRpcRequest<ClientRequest>,
) -> Response {
    let unanswered = super::unanswered(&request);
    let session = claimed.session.clone();
    let own = own.clone();
    let work = futures::stream::once(async move {
        match claimed.rebuild(&own, &id, &parts).await {
            Ok(session) => events(&own, &session, parts, request),
            Err(_) => {
                let error = rmcp::ErrorData::internal_error(
                    "this session could not be rebuilt here (its upstreams did not start); \
                     the request did not run",
                    None,
                );
                let failed = ServerJsonRpcMessage::error(error, Some(request.id));
                futures::stream::iter(super::answer::event(&failed)).boxed()
            }
        }
    })
    .flatten();
    let mut response = super::resumable::respond(&session, unanswered.tag(), true, work);
    response.extensions_mut().insert(unanswered);
    response
}

/// The events of `request` on a response already open: its progress if it asked for it, the
/// questions that ride it, its answer.
fn events(
    own: &Arc<Own>,
    session: &Arc<Session>,
    parts: Parts,
    request: JsonRpcRequest<ClientRequest>,
) -> BoxStream<'static, Bytes> {
    match request.request.get_meta().get_progress_token() {
        Some(token) => super::progress::events(own, session, parts, request, token).boxed(),
        None => super::asks::Asking::new(own, session, parts, request)
            .events(None)
            .boxed(),
    }
}

/// A host's notification: what the core does with it here (the others change nothing).
fn notified(session: &Session, notification: ClientNotification) {
    match notification {
        ClientNotification::InitializedNotification(_) => {
            session.handler.shared.link.outbox.open();
        }
        ClientNotification::CancelledNotification(cancelled) => {
            if let Some(id) = &cancelled.params.request_id {
                session.cancel(id);
            }
        }
        _ => {}
    }
}

/// A host's `POST` must accept both JSON and SSE (`406`) and send JSON (`415`).
fn acceptable(headers: &HeaderMap) -> Result<(), Box<Response>> {
    let accepted = |kind: &str| {
        (headers.get_all(header::ACCEPT).iter())
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .filter_map(|item| item.split(';').next())
            .any(|essence| essence.trim().eq_ignore_ascii_case(kind))
    };
    if !accepted("application/json") || !accepted("text/event-stream") {
        let message = "the host must accept both application/json and text/event-stream";
        return Err(Box::new(refuse(StatusCode::NOT_ACCEPTABLE, message)));
    }
    let json = (headers.get(header::CONTENT_TYPE))
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        let message = "the body must be application/json";
        return Err(Box::new(refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            message,
        )));
    }
    Ok(())
}

fn too_large(bound: usize) -> Response {
    let message = format!("the request body is over {bound} bytes, the most this gateway reads");
    refuse(StatusCode::PAYLOAD_TOO_LARGE, &message)
}
