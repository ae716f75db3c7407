//! The HTTP answers to the handshake's `server/discover` that mean "not a 2026-07-28 server" and
//! that rmcp does not read as such: a 2xx without a JSON-RPC message in it (202 or 204, an empty
//! 200, a body of another type or one that does not parse, an event stream that ends before any
//! event). rmcp's worker quits on each of these (its first request's answer must be a message),
//! or waits out its discover timeout for a 202. Each becomes the `-32601` answer of
//! [`crate::transport::refusal`], so `protocol: auto` falls back to `initialize` at once on the
//! same transport.
//!
//! A 4xx is left to rmcp, which already answers it with a correlated JSON-RPC error (the body's,
//! or `-32600` naming the status) when the request carried no session; 401 and 403 keep their
//! own paths, and a 5xx or 429 stays an HTTP error (the server may be modern but unwell). Once
//! the handshake is over (a POST of anything but `server/discover` or `initialize`), a
//! `server/discover` is a 2026-07-28 probe and its answers are judged as they come.

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use futures::StreamExt;
use rmcp::{
    model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, RequestId},
    transport::{
        common::client_side_sse::BoxedSseResponse,
        streamable_http_client::{StreamableHttpError, StreamableHttpPostResponse},
    },
};

use super::HttpError;
use crate::transport::refusal;

/// Whether one transport's handshake is over; shared by the clones of its client.
#[derive(Debug, Clone, Default)]
pub(super) struct Opening {
    /// Set (never cleared) by the first POST of a message that is neither `server/discover`
    /// nor `initialize`.
    over: Arc<AtomicBool>,
}

impl Opening {
    /// `result` of POSTing `message`, with a refusal of the handshake's `server/discover` read as
    /// `-32601` (see the module docs); `session` tells whether the POST carried a session id.
    pub(super) fn read(
        &self,
        message: &ClientJsonRpcMessage,
        session: bool,
        result: Result<StreamableHttpPostResponse, HttpError>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let Some(id) = refusal::is_discover(message) else {
            let initialize = matches!(message, JsonRpcMessage::Request(r)
                if matches!(r.request, ClientRequest::InitializeRequest(_)));
            if !initialize {
                self.over.store(true, Ordering::Relaxed);
            }
            return result;
        };
        if session || self.over.load(Ordering::Relaxed) {
            return result;
        }
        let said = match result {
            Ok(StreamableHttpPostResponse::Sse(stream, session)) => {
                let stream = or_refusal(stream, id.clone());
                return Ok(StreamableHttpPostResponse::Sse(stream, session));
            }
            Ok(StreamableHttpPostResponse::Accepted) => {
                "answered HTTP 202 (or 204) without a body".to_owned()
            }
            Err(StreamableHttpError::UnexpectedContentType(None)) => {
                "answered HTTP 2xx without a content type".to_owned()
            }
            Err(StreamableHttpError::UnexpectedContentType(Some(kind))) => {
                format!("answered HTTP 2xx with content type {kind:?}")
            }
            // rmcp's words for a 2xx JSON body that is no JSON-RPC message; its HTTP error
            // answers begin with "HTTP <status>".
            Err(StreamableHttpError::UnexpectedServerResponse(text))
                if !text.starts_with("HTTP ") =>
            {
                format!("answered HTTP 2xx with {text}")
            }
            other => return other,
        };
        let answer = refusal::not_modern(id.clone(), &said);
        Ok(StreamableHttpPostResponse::Json(answer, None))
    }
}

/// The event type of rmcp's SSE streams (`sse_stream::Sse`, which rmcp does not re-export).
type Event = <BoxedSseResponse as EventOf>::Event;

trait EventOf {
    type Event;
}

impl<E, X> EventOf for futures::stream::BoxStream<'static, Result<E, X>> {
    type Event = E;
}

/// A `message` event carrying `data`.
#[expect(
    clippy::field_reassign_with_default,
    reason = "the type has no name here to initialize it with (rmcp does not re-export it)"
)]
fn message_event(data: String) -> Event {
    let mut event = Event::default();
    event.event = Some("message".to_owned());
    event.data = Some(data);
    event
}

/// `stream`, followed by the refusal of the request `id` when it ends cleanly before any event
/// carried data (an answer, or anything rmcp would try to read as one).
fn or_refusal(stream: BoxedSseResponse, id: RequestId) -> BoxedSseResponse {
    let carried = Arc::new(AtomicBool::new(false));
    let seen = carried.clone();
    let tail = futures::stream::once(async move {
        if carried.load(Ordering::Relaxed) {
            return None;
        }
        let answer = refusal::not_modern(id, "answered with an event stream that ended empty");
        Some(Ok(message_event(serde_json::to_string(&answer).ok()?)))
    });
    stream
        .inspect(move |event| {
            if let Ok(event) = event
                && event.data.as_deref().is_some_and(|d| !d.trim().is_empty())
            {
                seen.store(true, Ordering::Relaxed);
            }
        })
        .chain(tail.filter_map(futures::future::ready))
        .boxed()
}

#[cfg(test)]
mod tests {
    use rmcp::model::{DiscoverRequest, DiscoverRequestParams, ErrorCode, ServerJsonRpcMessage};

    use super::*;

    fn discover() -> ClientJsonRpcMessage {
        let request =
            ClientRequest::DiscoverRequest(DiscoverRequest::new(DiscoverRequestParams {}));
        ClientJsonRpcMessage::request(request, RequestId::Number(3))
    }

    fn is_refusal(message: &ServerJsonRpcMessage) -> bool {
        matches!(message, JsonRpcMessage::Error(e)
            if e.error.code == ErrorCode::METHOD_NOT_FOUND && e.id == Some(RequestId::Number(3)))
    }

    fn refused(opening: &Opening, result: Result<StreamableHttpPostResponse, HttpError>) -> bool {
        matches!(opening.read(&discover(), false, result),
            Ok(StreamableHttpPostResponse::Json(message, None)) if is_refusal(&message))
    }

    #[test]
    fn an_empty_or_foreign_2xx_answer_to_the_handshakes_discover_is_a_refusal() {
        let opening = Opening::default();
        assert!(refused(&opening, Ok(StreamableHttpPostResponse::Accepted)));
        let untyped = StreamableHttpError::UnexpectedContentType(None);
        assert!(refused(&opening, Err(untyped)));
        let html = StreamableHttpError::UnexpectedContentType(Some("text/html".into()));
        assert!(refused(&opening, Err(html)));
        let unparsed = "could not parse JSON response as ServerJsonRpcMessage: EOF: ".into();
        let unparsed = StreamableHttpError::UnexpectedServerResponse(unparsed);
        assert!(refused(&opening, Err(unparsed)));
    }

    #[test]
    fn http_errors_other_requests_and_probes_after_the_handshake_pass_unchanged() {
        let opening = Opening::default();
        let status = StreamableHttpError::UnexpectedServerResponse("HTTP 404 Not Found: no".into());
        assert!(!refused(&opening, Err(status)));
        assert!(!refused(&opening, Err(StreamableHttpError::SessionExpired)));
        let on_session = opening.read(&discover(), true, Ok(StreamableHttpPostResponse::Accepted));
        assert!(matches!(
            on_session,
            Ok(StreamableHttpPostResponse::Accepted)
        ));
        let list = ClientJsonRpcMessage::request(
            ClientRequest::ListToolsRequest(Default::default()),
            RequestId::Number(4),
        );
        let passed = opening.read(&list, false, Ok(StreamableHttpPostResponse::Accepted));
        assert!(matches!(passed, Ok(StreamableHttpPostResponse::Accepted)));
        assert!(!refused(&opening, Ok(StreamableHttpPostResponse::Accepted)));
    }

    #[tokio::test]
    async fn an_event_stream_that_ends_empty_ends_with_the_refusal() {
        let empty: BoxedSseResponse = futures::stream::empty().boxed();
        let events: Vec<_> = or_refusal(empty, RequestId::Number(3)).collect().await;
        let [Ok(event)] = &events[..] else {
            panic!("one event: {events:?}")
        };
        let data = event.data.as_deref().unwrap_or_default();
        let message: ServerJsonRpcMessage = serde_json::from_str(data).expect("a message");
        assert!(is_refusal(&message), "{message:?}");
        let answer = message_event("{}".to_owned());
        let answered: BoxedSseResponse = futures::stream::iter([Ok(answer)]).boxed();
        let events: Vec<_> = or_refusal(answered, RequestId::Number(3)).collect().await;
        assert_eq!(events.len(), 1, "{events:?}");
    }
}
