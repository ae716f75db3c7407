//! The `DELETE` that ends a session: bounded by [`SESSION_DELETE_WAIT`], and a session already
//! gone (the server killed or restarted) taken as deleted rather than reported as a failure.

use std::time::Duration;

use reqwest::StatusCode;
use rmcp::transport::streamable_http_client::StreamableHttpError;

use super::{
    core::Core,
    errors::{describe, redacted, session_gone},
};

/// How long the `DELETE` that ends a session may take: a healthy server answers it at once, and
/// a hung one must not hold the close (a host restarting the proxy, a reconnect) for longer.
/// Left unanswered, the session is the server's to expire.
pub(in crate::transport) const SESSION_DELETE_WAIT: Duration = Duration::from_secs(1);

impl Core {
    /// Ends the transport in good order: stops its streams, deletes the session (bounded),
    /// and waits for the standalone stream's task.
    pub(super) async fn close(&self) {
        self.stop.cancel();
        self.delete_session().await;
        let task = self
            .standalone_task
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }

    /// Deletes the session, if there is one, within [`SESSION_DELETE_WAIT`].
    pub(super) async fn delete_session(&self) {
        if self.session.id.get().is_none() {
            return;
        }
        let delete = self.authorized(|token| async move {
            let response = self.execute(|| self.delete(token.as_deref())).await?;
            match response.status() {
                // A server that keeps no sessions to delete.
                StatusCode::METHOD_NOT_ALLOWED => Ok(()),
                _ => response
                    .error_for_status()
                    .map(drop)
                    .map_err(StreamableHttpError::Client),
            }
        });
        match tokio::time::timeout(SESSION_DELETE_WAIT, delete).await {
            Ok(Ok(())) => {}
            // A killed or restarted server: there is no session left to end.
            Ok(Err(error)) if session_gone(&error) => {
                tracing::debug!("no session left to delete: {}", describe(&error));
            }
            Ok(deleted) => {
                if let Err(error) = redacted(deleted) {
                    tracing::warn!("the session DELETE failed: {}", describe(&error));
                }
            }
            Err(_) => tracing::info!(
                "the session DELETE got no answer within {SESSION_DELETE_WAIT:?}; the server \
                 is left to expire the session"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::transport::http::HttpError;

    /// A reqwest error from a DELETE to a server on 127.0.0.1 that answers `status` (or to a
    /// port nobody listens on, for `None`).
    async fn delete_error(status: Option<&str>) -> HttpError {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        match status {
            None => drop(listener),
            Some(status) => {
                let answer = format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\n\r\n");
                tokio::spawn(async move {
                    let (mut socket, _) = listener.accept().await.unwrap();
                    let mut request = [0u8; 1024];
                    let _ = socket.read(&mut request).await;
                    let _ = socket.write_all(answer.as_bytes()).await;
                });
            }
        }
        let sent = reqwest::Client::new()
            .delete(format!("http://127.0.0.1:{port}/mcp"))
            .timeout(std::time::Duration::from_secs(5))
            .send()
            .await
            .and_then(reqwest::Response::error_for_status);
        StreamableHttpError::Client(sent.expect_err("the DELETE fails"))
    }

    #[tokio::test]
    async fn a_session_delete_to_a_killed_or_restarted_server_finds_the_session_gone() {
        assert!(session_gone(&delete_error(None).await), "refused");
        assert!(session_gone(&delete_error(Some("404 Not Found")).await));
        assert!(session_gone(&StreamableHttpError::SessionExpired));
        let failed = delete_error(Some("500 Internal Server Error")).await;
        assert!(!session_gone(&failed), "a server error is still one");
    }
}
