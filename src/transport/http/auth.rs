//! The authorization of Streamable HTTP requests: every request carries the server's current
//! token, and one refused for it is sent once more with a renewed one (see [`crate::auth`]).
//!
//! rmcp's `AuthClient` does the 401 half of this for its own `AuthorizationManager`; ours also
//! serves the legacy SSE transport (which rmcp does not have), shares one renewal among all
//! requests and processes, does the `insufficient_scope` step-up, and reports why it gave up.

use std::future::Future;

use rmcp::transport::streamable_http_client::{AuthRequiredError, StreamableHttpError};

use super::{HttpClient, HttpError};

impl HttpClient {
    /// Runs `send` with the current token; after a 401 (or a 403 `insufficient_scope`), renews
    /// the token and runs it once more. Without configured auth, `send(None)` as it is.
    pub(super) async fn authorized<T, F, Fut>(&self, send: F) -> Result<T, HttpError>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let Some(auth) = &self.auth else {
            return send(None).await;
        };
        let refused = |challenge: String| {
            StreamableHttpError::AuthRequired(AuthRequiredError::new(challenge))
        };
        let token = auth.token().await.map_err(|d| refused(d.detail))?;
        let renewed = match send(token.clone()).await {
            Err(StreamableHttpError::AuthRequired(challenge)) => {
                let header = challenge.www_authenticate_header;
                auth.renew(token.as_deref(), &header).await
            }
            Err(StreamableHttpError::InsufficientScope(challenge)) => {
                auth.step_up(&challenge.www_authenticate_header).await
            }
            Ok(answer) => {
                auth.accepted();
                return Ok(answer);
            }
            Err(other) => return Err(other),
        };
        let token = renewed.map_err(|d| refused(d.detail))?;
        let answer = send(Some(token)).await?;
        auth.accepted();
        Ok(answer)
    }
}
