//! The authorization of Streamable HTTP requests: every request carries the server's current
//! token, and one refused for it is sent once more with a renewed one (see [`crate::auth`]).
//!
//! The same [`crate::auth::Authorizer`] serves the legacy SSE transport: it shares one renewal
//! among all requests and processes, does the `insufficient_scope` step-up, and reports why it
//! gave up.

use std::future::Future;

use rmcp::transport::{
    auth::AuthError,
    streamable_http_client::{AuthRequiredError, StreamableHttpError},
};

use super::{HttpError, core::Core};
use crate::auth::Refusal;

impl Core {
    /// Runs `send` with the current token through [`crate::auth::Authorizer::send`] (one
    /// renewal and resend after a 401 or a 403 `insufficient_scope`). Without configured auth,
    /// `send(None)` as it is.
    pub(super) async fn authorized<T, F, Fut>(&self, send: F) -> Result<T, HttpError>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let Some(auth) = &self.auth else {
            return send(None).await;
        };
        let refusal = |answer: &Result<T, HttpError>| match answer {
            Err(StreamableHttpError::AuthRequired(challenge)) => Some(Refusal::Unauthorized(
                challenge.www_authenticate_header.clone(),
            )),
            Err(StreamableHttpError::InsufficientScope(challenge)) => Some(
                Refusal::InsufficientScope(challenge.www_authenticate_header.clone()),
            ),
            _ => None,
        };
        auth.send(send, refusal).await.unwrap_or_else(|denied| {
            Err(match denied.transient {
                // The authorization server did not answer: judged `AuthUnavailable` (the
                // request was not sent), not a 401 (see `errors::verdict`).
                true => StreamableHttpError::Auth(AuthError::TokenRefreshFailed(denied.detail)),
                false => StreamableHttpError::AuthRequired(AuthRequiredError::new(denied.detail)),
            })
        })
    }
}
