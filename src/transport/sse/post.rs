//! A `POST` of one message to the session's endpoint: what every send and every direct probe of
//! a legacy SSE session shares.

use std::sync::Arc;

use reqwest::header::{HeaderMap, HeaderValue};
use tokio_util::sync::CancellationToken;
use url::Url;

use super::errors::{SendError, refusal, retry_after};
use crate::{auth::Authorizer, transport::DeathSlot, verdict::Verdict};

/// Where and how a session's messages are posted.
pub(super) struct Poster {
    pub(super) http: reqwest::Client,
    pub(super) endpoint: Url,
    pub(super) headers: HeaderMap,
    /// The server's authorization, if configured: every POST carries its current token.
    pub(super) auth: Option<Arc<Authorizer>>,
    /// Bound on one POST: the shared client has no overall timeout (its streams are
    /// long-lived), and a hung server must not pile up pending POSTs.
    pub(super) timeout: std::time::Duration,
    pub(super) slot: DeathSlot,
    /// Stops the session's reader; cancelled by a fatal failure, and by the transport's `close`
    /// and `Drop`.
    pub(super) stop: CancellationToken,
}

impl Poster {
    /// POSTs `body`. A fatal failure (404/410, or no connection) fills the slot and stops the
    /// reader, which ends the session.
    pub(super) async fn post(&self, body: bytes::Bytes) -> Result<(), SendError> {
        self.post_within(body, Some(self.timeout)).await
    }

    /// [`post`](Self::post) for a direct probe, without the `POST`'s own bound: a probe is
    /// always awaited within the probe timeout, which drops it (a timer fewer per probe).
    pub(super) async fn post_for_probe(&self, body: bytes::Bytes) -> Result<(), SendError> {
        self.post_within(body, None).await
    }

    async fn post_within(
        &self,
        body: bytes::Bytes,
        timeout: Option<std::time::Duration>,
    ) -> Result<(), SendError> {
        let post = |token: Option<String>| {
            let mut request = self
                .http
                .post(self.endpoint.clone())
                .headers(self.headers.clone())
                .header(
                    reqwest::header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                )
                .body(body.clone());
            if let Some(timeout) = timeout {
                request = request.timeout(timeout);
            }
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            async move { request.send().await.map_err(SendError::Request) }
        };
        let answer = match &self.auth {
            None => post(None).await,
            Some(auth) => auth.send(post, refusal).await.unwrap_or_else(|denied| {
                Err(match denied.transient {
                    true => SendError::AuthUnavailable(denied.detail),
                    false => SendError::Status {
                        status: 401,
                        retry_after: None,
                    },
                })
            }),
        };
        let result = match answer {
            Ok(r) if r.status().is_success() => return Ok(()),
            Ok(r) if matches!(r.status().as_u16(), 404 | 410) => {
                SendError::SessionExpired(r.status().as_u16())
            }
            Ok(r) => SendError::Status {
                status: r.status().as_u16(),
                retry_after: retry_after(r.headers()),
            },
            Err(e) => e,
        };
        if let Verdict::Death(death) = result.verdict(result.to_string()) {
            let _ = self.slot.set(death);
            self.stop.cancel();
        }
        Err(result)
    }
}
