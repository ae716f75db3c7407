//! The HTTP answers to the handshake's `server/discover` that mean "not a 2026-07-28 server":
//! a 2xx without a JSON-RPC message in it (202 or 204, an empty 200, a body of another type or
//! one that does not parse, an event stream that ends before any event carried data). Each
//! becomes the `-32601` answer of [`crate::transport::refusal`], so `protocol: auto` falls back
//! to `initialize` at once on the same transport (rmcp's lifecycle would otherwise fail the
//! attempt, or wait out its discover timeout for a 202).
//!
//! A 4xx to a session-less `server/discover` is read as a correlated JSON-RPC error (the body's,
//! or `-32600` naming the status) where the answer is read ([`super::answer`]), as rmcp reads it;
//! 401 and 403 keep their own paths, and a 5xx or 429 stays an HTTP error (the server may be
//! modern but unwell). Once the handshake is over (a POST of anything but `server/discover` or
//! `initialize`), a `server/discover` is a 2026-07-28 probe and its answers are judged as they
//! come.

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use reqwest::header::HeaderValue;
use rmcp::{
    model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage},
    transport::streamable_http_client::StreamableHttpError,
};

use super::{HttpError, answer::Answer};
use crate::transport::refusal;

/// A `POST`'s answer with the session id it carried.
type Answered = Result<(Answer, Option<HeaderValue>), HttpError>;

/// Whether one transport's handshake is over; shared by its sends.
#[derive(Debug, Default)]
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
        result: Answered,
    ) -> Answered {
        let Some(id) = self.handshake_discover(message, session) else {
            return result;
        };
        let said = match result {
            Ok((Answer::Accepted, _)) => "answered HTTP 202 (or 204) without a body".to_owned(),
            Err(StreamableHttpError::UnexpectedContentType(None)) => {
                "answered HTTP 2xx without a content type".to_owned()
            }
            Err(StreamableHttpError::UnexpectedContentType(Some(kind))) => {
                format!("answered HTTP 2xx with content type {kind:?}")
            }
            // Our words for a 2xx JSON body that is no JSON-RPC message; HTTP error answers
            // begin with "HTTP <status>".
            Err(StreamableHttpError::UnexpectedServerResponse(text))
                if !text.starts_with("HTTP ") =>
            {
                format!("answered HTTP 2xx with {text}")
            }
            other => return other,
        };
        Ok((Answer::Json(refusal::not_modern(id.clone(), &said)), None))
    }

    /// Whether an event stream answering `message` that ends before any event carried data is a
    /// refusal of the handshake's `server/discover` (see the module docs).
    pub(super) fn refuses_empty(&self, message: &ClientJsonRpcMessage, session: bool) -> bool {
        self.handshake_discover(message, session).is_some()
    }

    /// The id of `message` if it is the handshake's `server/discover`; any other message but
    /// `initialize` ends the handshake.
    fn handshake_discover<'m>(
        &self,
        message: &'m ClientJsonRpcMessage,
        session: bool,
    ) -> Option<&'m rmcp::model::RequestId> {
        let Some(id) = refusal::is_discover(message) else {
            let initialize = matches!(message, JsonRpcMessage::Request(r)
                if matches!(r.request, ClientRequest::InitializeRequest(_)));
            if !initialize {
                self.over.store(true, Ordering::Relaxed);
            }
            return None;
        };
        (!session && !self.over.load(Ordering::Relaxed)).then_some(id)
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{
        DiscoverRequest, DiscoverRequestParams, ErrorCode, RequestId, ServerJsonRpcMessage,
    };

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

    fn refused(opening: &Opening, result: Answered) -> bool {
        matches!(opening.read(&discover(), false, result),
            Ok((Answer::Json(message), None)) if is_refusal(&message))
    }

    #[test]
    fn an_empty_or_foreign_2xx_answer_to_the_handshakes_discover_is_a_refusal() {
        let opening = Opening::default();
        assert!(refused(&opening, Ok((Answer::Accepted, None))));
        let untyped = StreamableHttpError::UnexpectedContentType(None);
        assert!(refused(&opening, Err(untyped)));
        let html = StreamableHttpError::UnexpectedContentType(Some("text/html".into()));
        assert!(refused(&opening, Err(html)));
        let unparsed = "could not parse JSON response as ServerJsonRpcMessage: EOF: ".into();
        let unparsed = StreamableHttpError::UnexpectedServerResponse(unparsed);
        assert!(refused(&opening, Err(unparsed)));
        assert!(opening.refuses_empty(&discover(), false));
    }

    #[test]
    fn http_errors_other_requests_and_probes_after_the_handshake_pass_unchanged() {
        let opening = Opening::default();
        let status = StreamableHttpError::UnexpectedServerResponse("HTTP 404 Not Found: no".into());
        assert!(!refused(&opening, Err(status)));
        assert!(!refused(&opening, Err(StreamableHttpError::SessionExpired)));
        let on_session = opening.read(&discover(), true, Ok((Answer::Accepted, None)));
        assert!(matches!(on_session, Ok((Answer::Accepted, None))));
        let list = ClientJsonRpcMessage::request(
            ClientRequest::ListToolsRequest(Default::default()),
            RequestId::Number(4),
        );
        let passed = opening.read(&list, false, Ok((Answer::Accepted, None)));
        assert!(matches!(passed, Ok((Answer::Accepted, None))));
        assert!(!refused(&opening, Ok((Answer::Accepted, None))));
        assert!(!opening.refuses_empty(&discover(), false));
    }
}
