//! The `DELETE` that ends a session (item 6 of the module docs of `transport::http`): bounded by
//! [`SESSION_DELETE_WAIT`], and a session already gone (the server killed or restarted) taken
//! as deleted rather than reported to rmcp, which would log it at error level.

use std::{collections::HashMap, sync::Arc, time::Duration};

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::transport::streamable_http_client::StreamableHttpClient;

use super::{
    HttpClient, HttpError,
    errors::{describe, redact_error, redacted, session_gone},
};

/// How long the `DELETE` that ends a session may take (see item 6 of the module docs of `transport::http`).
pub(crate) const SESSION_DELETE_WAIT: Duration = Duration::from_secs(1);

impl HttpClient {
    /// Deletes session `session_id` at `uri`, within [`SESSION_DELETE_WAIT`].
    pub(super) async fn delete_bounded(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        let delete = self.authorized(|token| {
            self.inner.delete_session(
                uri.clone(),
                session_id.clone(),
                token.or_else(|| auth_header.clone()),
                custom_headers.clone(),
            )
        });
        match tokio::time::timeout(SESSION_DELETE_WAIT, delete).await {
            // Ok, not an error: rmcp would log a session already gone (a killed or restarted
            // server) as a failure, at error level, after every such death.
            Ok(Err(error)) if session_gone(&error) => {
                tracing::debug!(
                    "no session left to delete: {}",
                    describe(&redact_error(error))
                );
                Ok(())
            }
            Ok(deleted) => redacted(deleted),
            Err(_) => {
                // Ok, not an error: rmcp would log it as a failure, and nothing failed on our
                // side; the server did not answer, and its session expires there.
                tracing::info!(
                    "the session DELETE got no answer within {SESSION_DELETE_WAIT:?}; the server \
                     is left to expire the session"
                );
                Ok(())
            }
        }
    }
}
