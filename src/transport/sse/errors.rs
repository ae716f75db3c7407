//! What the legacy SSE transport's HTTP answers say: a failed `POST` ([`SendError`], with its
//! verdict), a `Retry-After`, and a refusal of the token for the authorizer to renew.

use reqwest::header::HeaderMap;

use crate::{
    auth::Refusal,
    state::{Cause, Death},
    transport::ledger::Sent,
    verdict::Verdict,
};

/// A failed `POST` to the endpoint, as `classify` downcasts it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum SendError {
    /// 404 or 410: the server no longer knows the session (fatal).
    #[error("legacy SSE session expired (HTTP {0} on POST)")]
    SessionExpired(u16),
    /// Any other non-2xx answer.
    #[error("POST to the endpoint answered HTTP {status}")]
    Status {
        /// The status.
        status: u16,
        /// The raw `Retry-After`, if the answer had one.
        retry_after: Option<String>,
    },
    /// The request failed; fatal when the connection could not be made or the POST timed out.
    #[error("POST to the endpoint failed")]
    Request(#[source] reqwest::Error),
    /// The message could not be encoded.
    #[error("could not encode the message")]
    Encode(#[source] serde_json::Error),
    /// No token could be had because the authorization server did not answer; the POST was
    /// not sent.
    #[error("{0}")]
    AuthUnavailable(String),
    /// The task that made the POST ended without an outcome (the runtime is shutting down).
    #[error("the POST ended without an outcome")]
    Abandoned,
}

impl SendError {
    /// What a POST's `result` says about the delivery of its request (see
    /// [`crate::transport::ledger`]).
    pub(in crate::transport) fn delivery(result: &Result<(), SendError>) -> Sent {
        match result {
            Ok(()) => Sent::Delivered,
            Err(e) if e.never_ran() => Sent::Failed,
            Err(SendError::SessionExpired(_) | SendError::Status { .. }) => Sent::Refused,
            Err(_) => Sent::Delivered,
        }
    }

    /// What this failure says about the server (see [`crate::verdict`]).
    pub(crate) fn verdict(&self, detail: String) -> Verdict {
        match self {
            SendError::SessionExpired(_) => {
                Verdict::Death(Death::new(Cause::SessionExpired, detail))
            }
            SendError::Status {
                status,
                retry_after,
            } => Verdict::of_status(*status, retry_after.as_deref(), detail),
            // The endpoint answers a POST with 202 at once; no answer in time, or no connection,
            // is a dead or black-holed server.
            SendError::Request(e) if e.is_connect() || e.is_request() || e.is_timeout() => {
                Verdict::transport(detail)
            }
            SendError::AuthUnavailable(why) => Verdict::AuthUnavailable {
                detail: why.clone(),
            },
            SendError::Abandoned => Verdict::transport(detail),
            SendError::Request(_) | SendError::Encode(_) => Verdict::Suspect {
                status: None,
                detail,
            },
        }
    }

    /// True when the server provably did not run the message: the POST could not open its
    /// connection, or it was refused for an unknown session (404/410).
    pub(crate) fn never_ran(&self) -> bool {
        match self {
            SendError::Request(e) => e.is_connect(),
            SendError::SessionExpired(_) | SendError::AuthUnavailable(_) => true,
            _ => false,
        }
    }
}

/// The first `Retry-After` value, if it is text.
pub(super) fn retry_after(headers: &HeaderMap) -> Option<String> {
    headers
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// What a legacy SSE answer says about its token: a 401, or a 403 `insufficient_scope`, is a
/// refusal for [`Authorizer::send`] to renew and resend.
pub(super) fn refusal<E>(answer: &Result<reqwest::Response, E>) -> Option<Refusal> {
    let response = answer.as_ref().ok()?;
    let challenge = response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    match response.status().as_u16() {
        401 => Some(Refusal::Unauthorized(challenge)),
        403 if challenge.contains("insufficient_scope") => {
            Some(Refusal::InsufficientScope(challenge))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_failures_are_judged_by_type() {
        let expired = SendError::SessionExpired(410).verdict("gone".into());
        assert!(matches!(expired, Verdict::Death(d) if d.cause == Cause::SessionExpired));
        let status = |status, retry_after: Option<&str>| SendError::Status {
            status,
            retry_after: retry_after.map(str::to_owned),
        };
        assert!(matches!(
            status(500, None).verdict("x".into()),
            Verdict::Suspect {
                status: Some(500),
                ..
            }
        ));
        assert_eq!(
            status(429, Some("2")).verdict("x".into()),
            Verdict::Overload {
                status: 429,
                retry_after: Some(std::time::Duration::from_secs(2))
            }
        );
        assert!(matches!(
            status(401, None).verdict("x".into()),
            Verdict::Unauthorized { .. }
        ));
    }
}
