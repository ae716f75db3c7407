//! The HTTP answers to `server/discover` that mean "not a 2026-07-28 server" and that rmcp does
//! not read as such: a 2xx without a JSON-RPC message in it (202 or 204, an empty 200, a body of
//! another type or one that does not parse). Each becomes the `-32601` answer of
//! [`crate::transport::refusal`], so `protocol: auto` falls back to `initialize` at once instead of
//! waiting out its discover timeout or failing the attempt.
//!
//! A 4xx is left to rmcp, which already answers it with a correlated JSON-RPC error (the body's,
//! or `-32600` naming the status) when the request carried no session; 401 and 403 keep their
//! own paths, and a 5xx or 429 stays an HTTP error (the server may be modern but unwell).

use rmcp::{
    model::ClientJsonRpcMessage,
    transport::streamable_http_client::{StreamableHttpError, StreamableHttpPostResponse},
};

use super::HttpError;
use crate::transport::refusal;

/// `result` of POSTing `message`, with a refusal of `server/discover` read as `-32601` (see the
/// module docs); `session` tells whether the POST carried a session id (then it was not the
/// handshake's discover).
pub(super) fn read(
    message: &ClientJsonRpcMessage,
    session: bool,
    result: Result<StreamableHttpPostResponse, HttpError>,
) -> Result<StreamableHttpPostResponse, HttpError> {
    let Some(id) = refusal::is_discover(message).filter(|_| !session) else {
        return result;
    };
    let said = match &result {
        Ok(StreamableHttpPostResponse::Accepted) => {
            "answered HTTP 202 (or 204) without a body".to_owned()
        }
        Err(StreamableHttpError::UnexpectedContentType(None)) => {
            "answered HTTP 2xx without a content type".to_owned()
        }
        Err(StreamableHttpError::UnexpectedContentType(Some(kind))) => {
            format!("answered HTTP 2xx with content type {kind:?}")
        }
        // rmcp's words for a 2xx JSON body that is no JSON-RPC message; its HTTP error answers
        // begin with "HTTP <status>".
        Err(StreamableHttpError::UnexpectedServerResponse(text)) if !text.starts_with("HTTP ") => {
            format!("answered HTTP 2xx with {text}")
        }
        _ => return result,
    };
    let answer = refusal::not_modern(id.clone(), &said);
    Ok(StreamableHttpPostResponse::Json(answer, None))
}

#[cfg(test)]
mod tests {
    use rmcp::model::{
        ClientRequest, DiscoverRequest, DiscoverRequestParams, ErrorCode, JsonRpcMessage,
        RequestId,
    };

    use super::*;

    fn discover() -> ClientJsonRpcMessage {
        let request = ClientRequest::DiscoverRequest(DiscoverRequest::new(DiscoverRequestParams {}));
        ClientJsonRpcMessage::request(request, RequestId::Number(3))
    }

    fn refused(result: Result<StreamableHttpPostResponse, HttpError>) -> bool {
        matches!(read(&discover(), false, result),
            Ok(StreamableHttpPostResponse::Json(JsonRpcMessage::Error(e), None))
                if e.error.code == ErrorCode::METHOD_NOT_FOUND && e.id == Some(RequestId::Number(3)))
    }

    #[test]
    fn an_empty_or_foreign_2xx_answer_to_discover_is_a_refusal() {
        assert!(refused(Ok(StreamableHttpPostResponse::Accepted)));
        assert!(refused(Err(StreamableHttpError::UnexpectedContentType(None))));
        assert!(refused(Err(StreamableHttpError::UnexpectedContentType(Some(
            "text/html".into()
        )))));
        let unparsed = "could not parse JSON response as ServerJsonRpcMessage: EOF: ".into();
        assert!(refused(Err(StreamableHttpError::UnexpectedServerResponse(unparsed))));
    }

    #[test]
    fn http_errors_and_other_requests_pass_unchanged() {
        let status = "HTTP 404 Not Found: no".into();
        assert!(!refused(Err(StreamableHttpError::UnexpectedServerResponse(status))));
        assert!(!refused(Err(StreamableHttpError::SessionExpired)));
        let ping = ClientJsonRpcMessage::request(
            ClientRequest::PingRequest(Default::default()),
            RequestId::Number(4),
        );
        let passed = read(&ping, false, Ok(StreamableHttpPostResponse::Accepted));
        assert!(matches!(passed, Ok(StreamableHttpPostResponse::Accepted)));
        let on_session = read(&discover(), true, Ok(StreamableHttpPostResponse::Accepted));
        assert!(matches!(on_session, Ok(StreamableHttpPostResponse::Accepted)));
    }
}
