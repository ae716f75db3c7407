//! What the server's HTTP answer to one `POST` is: accepted, one JSON message, an event stream,
//! or an error (as rmcp's reqwest client read them, so every verdict rule of
//! [`super::errors`] keeps its meaning). Bodies are read with a bound before anything is parsed,
//! and every chunk that arrives is stamped on the generation's activity.

use std::borrow::Cow;

use reqwest::{
    StatusCode,
    header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, RETRY_AFTER, WWW_AUTHENTICATE},
};
use rmcp::{
    model::{ErrorData, RequestId, ServerJsonRpcMessage},
    transport::streamable_http_client::{
        AuthRequiredError, HttpStatusError, InsufficientScopeError, StreamableHttpError,
    },
};

use super::{HttpError, errors::status_of};
use crate::transport::{Activity, decode};

/// The session's id: set by the answer to `initialize`, carried by every later request.
pub(super) const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");

/// The most of a diagnostic body (an HTML error page, a plain-text refusal) that is read.
const DIAGNOSTIC: usize = 4096;
/// The most of a `Retry-After` that is kept.
const RETRY_AFTER_MAX: usize = 128;

/// A `POST`'s answer that is not an error.
// Unboxed: an answer lives from its reading to its delivery, one per request, and a boxed
// message would cost every answer an allocation.
#[allow(clippy::large_enum_variant)]
pub enum Answer {
    /// 202 or 204, or an empty (or unreadable) 2xx to a message that awaits no answer.
    Accepted,
    /// A JSON body: one message.
    Json(ServerJsonRpcMessage),
    /// An event stream, to be read by [`super::events`].
    Events(reqwest::Response),
}

/// What was sent, as far as reading its answer is concerned.
pub(super) struct Sent<'a> {
    /// The request's id and method; `None` for a notification, a response or an error.
    pub(super) request: Option<(&'a RequestId, &'a str)>,
    /// The `POST` carried a session id.
    pub(super) session: bool,
    /// The largest JSON body accepted.
    pub(super) max_message: usize,
    /// The request is a direct probe: its answer's result is never typed
    /// ([`decode::probe_answer`]).
    pub(super) probe: bool,
}

/// Reads `response` as the answer to `sent`; the answer's `Mcp-Session-Id`, if any, comes
/// with it.
pub(super) async fn read(
    response: reqwest::Response,
    sent: &Sent<'_>,
    activity: &Activity,
) -> Result<(Answer, Option<HeaderValue>), HttpError> {
    let status = response.status();
    let headers = response.headers();
    challenge(status, headers)?;
    if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
        return Ok((Answer::Accepted, None));
    }
    if status == StatusCode::NOT_FOUND && sent.session {
        return Err(StreamableHttpError::SessionExpired);
    }
    let kind = content_type(headers);
    let json = kind.as_deref().is_some_and(|k| is(k, "application/json"));
    let overload = overload(status, headers);
    if let Some(error) = &overload
        && (!json || status == StatusCode::TOO_MANY_REQUESTS)
    {
        return Err(HttpStatusError::new(error.status, error.retry_after.clone()).into());
    }
    let session = headers.get(SESSION_ID).cloned();
    let awaits = sent.request.is_some();
    if status.is_success() && response.content_length() == Some(0) && !awaits {
        return Ok((Answer::Accepted, session));
    }
    if !status.is_success() {
        let error = refused(response, sent, json, activity).await?;
        return match (error, overload) {
            (Some(message), _) => Ok((Answer::Json(message), session)),
            (None, Some(error)) => Err(error.into()),
            (None, None) => unreachable!("refused() answers with an error otherwise"),
        };
    }
    match kind.as_deref() {
        Some(k) if is(k, "text/event-stream") => Ok((Answer::Events(response), session)),
        Some(k) if is(k, "application/json") => {
            let body = bounded(response, sent.max_message, activity).await?;
            let decoded = match sent.request {
                Some((id, _)) if sent.probe => decode::probe_answer(&body, id),
                request => decode::message(&body, request.map(|(_, method)| method)),
            };
            match decoded {
                Ok(message) => Ok((Answer::Json(message), session)),
                Err(e) if !awaits => {
                    tracing::debug!(
                        "a JSON answer to a message that awaits none did not parse: {e}"
                    );
                    Ok((Answer::Accepted, session))
                }
                Err(e) => Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                    format!(
                        "could not parse JSON response as ServerJsonRpcMessage: {e}: {}",
                        preview(&body)
                    ),
                ))),
            }
        }
        _ if !awaits => Ok((Answer::Accepted, session)),
        _ => Err(StreamableHttpError::UnexpectedContentType(kind)),
    }
}

/// A 401 or 403 with a challenge, for the authorizer to renew the token and send again.
pub(super) fn challenge(status: StatusCode, headers: &HeaderMap) -> Result<(), HttpError> {
    let Some(header) = headers.get(WWW_AUTHENTICATE) else {
        return Ok(());
    };
    let text = || {
        header.to_str().map(str::to_owned).map_err(|_| {
            StreamableHttpError::UnexpectedServerResponse(
                "invalid www-authenticate header value".into(),
            )
        })
    };
    match status {
        StatusCode::UNAUTHORIZED => Err(StreamableHttpError::AuthRequired(AuthRequiredError::new(
            text()?,
        ))),
        StatusCode::FORBIDDEN => Err(StreamableHttpError::InsufficientScope(
            InsufficientScopeError::new(text()?, None),
        )),
        _ => Ok(()),
    }
}

/// A 429 or 5xx: the status and the first `Retry-After` (if short and text).
pub(super) fn overload(status: StatusCode, headers: &HeaderMap) -> Option<HttpStatusError> {
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    let retry_after = headers
        .get(RETRY_AFTER)
        .filter(|v| v.as_bytes().len() <= RETRY_AFTER_MAX)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    Some(HttpStatusError::new(status.as_u16(), retry_after))
}

/// A non-2xx answer: the JSON-RPC error it carries, if any (for a session-less
/// `server/discover`, any 4xx becomes one that answers it, as rmcp reads it), else the error.
async fn refused(
    response: reqwest::Response,
    sent: &Sent<'_>,
    json: bool,
    activity: &Activity,
) -> Result<Option<ServerJsonRpcMessage>, HttpError> {
    let status = response.status();
    let auth = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
    let overloaded = overload(status, response.headers()).is_some();
    let body = if json && !auth {
        match bounded(response, sent.max_message, activity).await {
            Ok(body) => body,
            Err(error @ StreamableHttpError::ResponseBodyTooLarge { .. }) if !overloaded => {
                return Err(error);
            }
            Err(StreamableHttpError::ResponseBodyTooLarge { .. }) => Vec::new(),
            Err(_) => b"<failed to read response body>".to_vec(),
        }
    } else {
        prefix(response, activity).await
    };
    let parsed = match json && !auth {
        true => decode::message(&body, None).ok(),
        false => None,
    };
    let error = match &parsed {
        Some(ServerJsonRpcMessage::Error(error)) => Some(error.error.clone()),
        _ => None,
    };
    let discover = sent
        .request
        .filter(|(_, method)| *method == "server/discover" && !sent.session);
    if let Some((id, _)) = discover
        && status.is_client_error()
        && !auth
    {
        let text = String::from_utf8_lossy(&body);
        let error = error.unwrap_or_else(|| {
            let said = format!("server/discover rejected with HTTP {status}: {text}");
            ErrorData::invalid_request(said, None)
        });
        return Ok(Some(ServerJsonRpcMessage::error(error, Some(id.clone()))));
    }
    if let Some(message @ ServerJsonRpcMessage::Error(_)) = parsed {
        return Ok(Some(message));
    }
    if overloaded {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(DIAGNOSTIC)]);
    Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
        format!("HTTP {status}: {text}"),
    )))
}

/// The whole body, at most `limit` bytes (more is an error before it is stored).
pub(super) async fn bounded(
    mut response: reqwest::Response,
    limit: usize,
    activity: &Activity,
) -> Result<Vec<u8>, HttpError> {
    let too_large = StreamableHttpError::ResponseBodyTooLarge { max_size: limit };
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_large);
    }
    let mut body = Vec::with_capacity(response.content_length().unwrap_or(0) as usize);
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(StreamableHttpError::Client)?
    {
        activity.bytes_arrived();
        if body.len() + chunk.len() > limit {
            return Err(too_large);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// At most [`DIAGNOSTIC`] bytes of the body (a failure to read it reads as nothing more).
async fn prefix(mut response: reqwest::Response, activity: &Activity) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < DIAGNOSTIC {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                activity.bytes_arrived();
                body.extend_from_slice(&chunk);
            }
            Ok(None) => break,
            Err(_) => {
                body.extend_from_slice(b"<failed to read response body>");
                break;
            }
        }
    }
    body.truncate(DIAGNOSTIC);
    body
}

pub(super) fn content_type(headers: &HeaderMap) -> Option<String> {
    headers
        .get(CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

/// Whether the media type of `content_type` is `essence` (parameters and case ignored).
pub(super) fn is(content_type: &str, essence: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case(essence))
}

/// A short, lossy view of a body that did not parse.
fn preview(body: &[u8]) -> String {
    if body.is_empty() {
        return "<empty>".to_owned();
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(256)]);
    text.into_owned()
}

/// `result`, with what some servers say instead of 404 read as the session's expiry: a 400 to
/// a request that carried a session id ("no valid session"), or a JSON-RPC error answering
/// another id than `request`'s (such servers answer 400 with an error whose id is `null` or
/// `"server-error"`: rmcp could not route it and the request would wait for its timeout).
pub fn expire_on_400<T>(
    request: Option<&RequestId>,
    result: Result<(Answer, T), HttpError>,
) -> Result<(Answer, T), HttpError> {
    match result {
        Err(e) if status_of(&e) == Some(400) => Err(StreamableHttpError::SessionExpired),
        Ok((Answer::Json(ServerJsonRpcMessage::Error(error)), _))
            if request.is_some() && request != error.id.as_ref() =>
        {
            Err(StreamableHttpError::SessionExpired)
        }
        other => other,
    }
}
