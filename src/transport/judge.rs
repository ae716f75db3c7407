//! From an error to a [`Verdict`]: the one site where a transport's failure becomes what it
//! says about the server, for a request on a live session ([`judge`]), a handshake
//! ([`judge_handshake`]) and a tool listing ([`judge_listing`]).
//!
//! rmcp hands every transport failure over as [`ServiceError::TransportSend`] (or
//! [`ClientInitializeError::TransportError`]) wrapping the transport's own error type. Each of
//! our transports knows what its errors mean ([`http::verdict`], [`sse::SendError::verdict`]);
//! this is where the dispatch happens.

use crate::text::innermost;
use rmcp::{ServiceError, service::ClientInitializeError};

use super::{Activity, http, ledger::Delivery, sse};
use crate::{
    config::{Bytes, Limits},
    state::{Cause, Death},
    verdict::{Phase, Verdict, limit},
};

/// What a failed handshake (`initialize`, `server/discover`) says about the server: a JSON-RPC
/// error answering it (`-32022` included) or no version in common is a rejection; a
/// transport's answer is judged as at connect ([`Phase::Connect`]); anything else (a closed
/// stream, an unexpected answer) says no more than that the attempt failed: [`Verdict::Alive`],
/// no verdict on the server.
pub(crate) fn judge_handshake(error: &ClientInitializeError) -> Verdict {
    match http::last_phase(error) {
        ClientInitializeError::JsonRpcError(_)
        | ClientInitializeError::NoCompatibleProtocolVersion { .. } => Verdict::Rejected {
            status: None,
            detail: String::new(),
        },
        ClientInitializeError::TransportError { error, .. } => {
            let source = &*error.error;
            if let Some(http) = source.downcast_ref::<http::HttpError>() {
                http::verdict(http, Phase::Connect, String::new())
            } else if let Some(sse) = source.downcast_ref::<sse::SendError>() {
                sse.verdict(String::new())
            } else {
                Verdict::Alive
            }
        }
        _ => Verdict::Alive,
    }
}

/// What a failed `tools/list` request means for the attempt or sync that sent it: a page over
/// the message bound (Streamable HTTP refuses it before parsing) is a limit exceeded; anything
/// else a listing that failed (`connect_failed`).
pub(crate) fn judge_listing(error: &ServiceError, limits: &Limits) -> Death {
    if let ServiceError::TransportSend(e) = error
        && let Some(http::HttpError::ResponseBodyTooLarge { .. }) =
            e.error.downcast_ref::<http::HttpError>()
    {
        return limit::exceeded(format!(
            "a tools/list page exceeded limits.max_message_bytes ({})",
            Bytes(limits.max_message_bytes)
        ));
    }
    Death::new(Cause::ConnectFailed, format!("tools/list failed: {error}"))
}

/// What a Streamable HTTP error that no request of rmcp's saw says about the server: the
/// re-opening of a session's standalone stream, a probe sent by the transport itself.
pub(in crate::transport) fn judge_http(error: &http::HttpError, phase: Phase) -> Verdict {
    let detail = match error {
        rmcp::transport::streamable_http_client::StreamableHttpError::Client(e) => innermost(e),
        other => innermost(other),
    };
    http::verdict(error, phase, crate::verdict::plain(&detail))
}

/// What `error`, answering a request on a live session, says about the server.
///
/// `TransportClosed` is a death whose precise cause (an exit status, a stream end) the
/// generation's monitor reports; callers should not report it themselves when the session loop
/// has already ended.
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub fn judge(error: &ServiceError) -> Verdict {
    match error {
        ServiceError::McpError(_) => Verdict::Alive,
        ServiceError::TransportSend(e) => {
            let source = &*e.error;
            let detail = chain(e);
            if let Some(http) = source.downcast_ref::<http::HttpError>() {
                return http::verdict(http, Phase::Session, detail);
            }
            if let Some(sse) = source.downcast_ref::<sse::SendError>() {
                return sse.verdict(detail);
            }
            // stdio: a write to the child's stdin failed (broken pipe); the child is gone.
            Verdict::transport(detail)
        }
        ServiceError::TransportClosed => Verdict::transport("transport closed"),
        ServiceError::Cancelled { reason } => Verdict::Death(Death::new(
            Cause::TransportError,
            format!(
                "request cancelled: {}",
                reason.as_deref().unwrap_or("session ended")
            ),
        )),
        ServiceError::UnexpectedResponse => Verdict::Suspect {
            status: None,
            detail: "the server answered with an unexpected result type".to_owned(),
        },
        other => Verdict::Suspect {
            status: None,
            detail: other.to_string(),
        },
    }
}

/// True when `error` says a 2026-07-28 request was lost with its answer's stream, cut or
/// dropped before its answer while its generation may live on: the server took the closed
/// stream as the request's cancellation, and the request may have run in part
/// ([`StreamLost`](super::http::errors::StreamLost)).
/// Its words (`None` for any other error).
pub(crate) fn stream_lost(error: &ServiceError) -> Option<String> {
    let ServiceError::TransportSend(e) = error else {
        return None;
    };
    let lost = http::stream_lost(e.error.downcast_ref::<http::HttpError>()?)?;
    Some(lost.to_string())
}

/// True when a request that failed provably did not run, so that it may be sent once to the
/// next generation. `id`: its JSON-RPC id (`None` when rmcp never queued it); `error`: its own
/// failure (`None` when it has none: its generation died first, and it was given up).
///
/// The transport's ledger ([`super::ledger`]) decides first: never handed, or refused by the
/// transport, it did not run; its send finished, it may have (whatever a later error says: a
/// resumed response stream answered 404 does not unsend a delivered request); its send still
/// pending over a pipe, the child cannot have read a whole line. Otherwise the error decides:
/// the connection it needed could not even be opened, or the server refused it for a session it
/// no longer knows.
pub(crate) async fn never_ran(
    activity: &Activity,
    id: Option<&rmcp::model::RequestId>,
    error: Option<&ServiceError>,
) -> bool {
    let Some(id) = id else {
        // Finished without an id: rmcp refused to queue it. No outcome and no id yet: unknown.
        return error.is_some();
    };
    let delivery = match activity.ledger.delivery(id) {
        // A POST still under way says in a moment whether it left (a refusal is immediate).
        Delivery::Pending if !activity.local_writes => {
            activity.ledger.settled(id, POST_SETTLE).await
        }
        other => other,
    };
    match delivery {
        Delivery::NeverHanded | Delivery::Failed => true,
        Delivery::Delivered => false,
        Delivery::Pending => activity.local_writes,
        Delivery::Unknown | Delivery::Refused => error.is_some_and(error_never_ran),
    }
}

/// How long a request whose POST is still under way waits for its outcome before it is taken
/// to have left.
const POST_SETTLE: std::time::Duration = std::time::Duration::from_millis(250);

/// True when `error` alone proves the server did not run the request (see [`never_ran`]).
fn error_never_ran(error: &ServiceError) -> bool {
    let ServiceError::TransportSend(e) = error else {
        return false;
    };
    let source = &*e.error;
    if let Some(http) = source.downcast_ref::<http::HttpError>() {
        return http::never_ran(http);
    }
    source
        .downcast_ref::<sse::SendError>()
        .is_some_and(sse::SendError::never_ran)
}

/// The error's text followed by its deepest cause (e.g. "connection refused" under a reqwest
/// error, which rmcp's `Client` variant does not expose as a source).
fn chain(error: &rmcp::transport::DynamicTransportError) -> String {
    let http = error.error.downcast_ref::<http::HttpError>();
    let detail = match (http, http.and_then(http::stream_lost)) {
        (Some(rmcp::transport::streamable_http_client::StreamableHttpError::Client(e)), _) => {
            format!("{}: {}", error.transport_name, innermost(e))
        }
        // Its own words already end with their cause.
        (_, Some(lost)) => format!("{}: {lost}", error.transport_name),
        _ => format!("{}: {}", error.transport_name, innermost(&*error.error)),
    };
    crate::verdict::plain(&detail)
}
