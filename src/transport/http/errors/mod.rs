//! What a Streamable HTTP error says: its status, its verdict, whether the request left.

use rmcp::{
    service::ClientInitializeError,
    transport::{auth::AuthError, streamable_http_client::StreamableHttpError},
};

use crate::{
    state::{Cause, Death},
    text::redact_url,
    transport::http2::Http2Error,
    verdict::{Phase, Verdict},
};

/// The error type of the Streamable HTTP transport's sends, as [`crate::transport::judge`]
/// downcasts it.
pub type HttpError = StreamableHttpError<reqwest::Error>;

/// A 2026-07-28 request whose answer's event stream ended or broke before its answer: the
/// request was lost with its stream. The server takes a closed stream as the request's
/// cancellation and nothing resumes it (SEP-2575), so the request is over; whether it is
/// issued again, as a new request, is the call path's decision (`crate::supervisor::dispatch`). Carried
/// as the source of a [`StreamableHttpError::Io`], the one variant of rmcp's enum that holds
/// an error of ours.
#[derive(Debug, thiserror::Error)]
#[error("the stream of its answer ended before the answer: {0}")]
pub(crate) struct StreamLost(String);

impl StreamLost {
    /// The error a send returns when its answer's stream ended with `cause`.
    pub(super) fn error(cause: &HttpError) -> HttpError {
        let lost = StreamLost(crate::text::innermost(cause));
        StreamableHttpError::Io(std::io::Error::other(lost))
    }
}

/// What `error` says when a 2026-07-28 request was lost with its answer's stream.
pub(crate) fn stream_lost(error: &HttpError) -> Option<&StreamLost> {
    match error {
        StreamableHttpError::Io(e) => e.get_ref()?.downcast_ref::<StreamLost>(),
        _ => None,
    }
}

/// The HTTP status a Streamable HTTP error reports, if it reports one.
///
/// rmcp keeps no status for most 4xx answers: it formats them as
/// `UnexpectedServerResponse("HTTP <code> <reason>: <body>")`, so that prefix is read back.
pub fn status_of(error: &HttpError) -> Option<u16> {
    match error {
        StreamableHttpError::SessionExpired => Some(404),
        StreamableHttpError::HttpStatus(status) => Some(status.status),
        StreamableHttpError::Client(e) => e.status().map(|s| s.as_u16()),
        StreamableHttpError::UnexpectedServerResponse(text) => {
            let code = text.strip_prefix("HTTP ")?.get(..3)?;
            code.parse().ok().filter(|c| (100..600).contains(c))
        }
        _ => None,
    }
}

/// The verdict of a Streamable HTTP error answering one request (see [`crate::verdict`]).
///
/// 404 at connect is not judged here: [`super::detect`] decides whether it means the other
/// protocol or a wrong URL.
pub fn verdict(error: &HttpError, phase: Phase, detail: String) -> Verdict {
    use StreamableHttpError as E;
    match error {
        E::SessionExpired if phase == Phase::Session => {
            Verdict::Death(Death::new(Cause::SessionExpired, detail))
        }
        E::HttpStatus(status) => {
            Verdict::of_status(status.status, status.retry_after.as_deref(), detail)
        }
        E::AuthRequired(_) => Verdict::Unauthorized { detail },
        // Made by our auth layer only (`Core::authorized`): no token could be had because
        // the authorization server did not answer. The request was never sent; the grant stands.
        E::Auth(AuthError::TokenRefreshFailed(why)) => Verdict::AuthUnavailable {
            detail: why.clone(),
        },
        E::Auth(_) => Verdict::AuthUnavailable { detail },
        // A 403 with a challenge: a scope the token lacks (step-up is the auth layer's job).
        E::InsufficientScope(_) => Verdict::Rejected {
            status: Some(403),
            detail,
        },
        E::SessionExpired | E::UnexpectedServerResponse(_) => match status_of(error) {
            Some(status) => Verdict::of_status(status, None, detail),
            None => Verdict::Suspect {
                status: None,
                detail,
            },
        },
        E::Client(e) if e.is_decode() => Verdict::Suspect {
            status: None,
            detail,
        },
        // Cut on the path, or dropped by a server on its way down: it says no more of the
        // server than one missed answer. A call's path decides what follows (`crate::supervisor::dispatch`).
        E::Io(_) if stream_lost(error).is_some() => Verdict::Suspect {
            status: None,
            detail,
        },
        E::Deserialize(_)
        | E::UnexpectedContentType(_)
        | E::ResponseBodyTooLarge { .. }
        | E::MissingSessionIdInResponse
        | E::ControlRequestTimeout => Verdict::Suspect {
            status: None,
            detail,
        },
        // Connect refused, reset, TLS, an SSE stream that broke, the worker gone.
        _ => Verdict::transport(detail),
    }
}

/// Like [`super::answer::expire_on_400`] for a `GET` on the session.
pub(super) fn expire_on_400_get<T>(result: Result<T, HttpError>) -> Result<T, HttpError> {
    match result {
        Err(e) if status_of(&e) == Some(400) => Err(StreamableHttpError::SessionExpired),
        other => other,
    }
}

/// True when the server provably did not run the request: its connection could not even be
/// opened, or the server answered 404 for the session (it no longer knows it, so it handled
/// nothing on it).
pub fn never_ran(error: &HttpError) -> bool {
    match error {
        StreamableHttpError::Client(_) | StreamableHttpError::Io(_) => never_left(error),
        StreamableHttpError::SessionExpired => true,
        // No token could be had: the request was not sent.
        StreamableHttpError::Auth(_) => true,
        _ => false,
    }
}

/// True when a session's `DELETE` failed because there is no session left to end: the server
/// is gone (its connection is refused) or no longer knows the session (404). That is what a
/// server that was killed or restarted looks like, not a failure of ours.
pub(in crate::transport) fn session_gone(error: &HttpError) -> bool {
    match error {
        StreamableHttpError::Client(e) => e.is_connect() || status_of(error) == Some(404),
        StreamableHttpError::Io(_) => matches!(http2_error(error), Some(Http2Error::Connect(_))),
        StreamableHttpError::SessionExpired => true,
        _ => false,
    }
}

/// True when the request never reached the server: no connection could be opened for it, or
/// the server refused it on HTTP/2 before processing it, as often as it was sent.
pub(in crate::transport) fn never_left(error: &HttpError) -> bool {
    match error {
        StreamableHttpError::Client(e) => e.is_connect(),
        _ => http2_error(error).is_some_and(Http2Error::never_ran),
    }
}

/// The error of the origin's HTTP/2 connections that `error` carries, if it carries one.
fn http2_error(error: &HttpError) -> Option<&Http2Error> {
    match error {
        StreamableHttpError::Io(e) => e.get_ref()?.downcast_ref::<Http2Error>(),
        _ => None,
    }
}

/// An error as a user reads it: `HTTP 403 Forbidden: <body>` for an HTTP answer, rmcp's own
/// words otherwise.
pub fn describe(error: &HttpError) -> String {
    match error {
        StreamableHttpError::UnexpectedServerResponse(text) if text.starts_with("HTTP ") => {
            text.trim_end_matches([':', ' ']).to_string()
        }
        StreamableHttpError::AuthRequired(_) => "HTTP 401 Unauthorized".to_owned(),
        StreamableHttpError::Auth(AuthError::TokenRefreshFailed(why)) => why.clone(),
        StreamableHttpError::InsufficientScope(_) => {
            "HTTP 403 Forbidden (insufficient scope)".to_owned()
        }
        other => other.to_string(),
    }
}

/// The HTTP status the server answered to `initialize`, if the handshake failed on one.
pub fn initialize_status(error: &ClientInitializeError) -> Option<u16> {
    match last_phase(error) {
        ClientInitializeError::TransportError { error, .. } => {
            status_of(error.error.downcast_ref::<HttpError>()?)
        }
        _ => None,
    }
}

/// The error of the last phase of a handshake: when `server/discover` found a legacy server and
/// the `initialize` that followed failed too, that `initialize`'s error.
pub(crate) fn last_phase(error: &ClientInitializeError) -> &ClientInitializeError {
    match error {
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => last_phase(fallback),
        other => other,
    }
}

/// `result` with the URL in a reqwest error redacted ([`redact_url`]): rmcp logs these errors and
/// we put their text in causes, and reqwest names the request's URL, query and all.
pub(in crate::transport) fn redacted<T>(result: Result<T, HttpError>) -> Result<T, HttpError> {
    result.map_err(redact_error)
}

pub(super) fn redact_error(error: HttpError) -> HttpError {
    match error {
        StreamableHttpError::Client(mut e) => {
            if let Some(url) = e.url_mut() {
                *url = redact_url(url);
            }
            StreamableHttpError::Client(e)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests;
