//! The loopback redirect of the authorization code flow: one HTTP request read and answered by
//! hand (no server framework for one request).

use std::time::Duration;

use rmcp::transport::auth::AuthError;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpListener,
};
use url::Url;

/// Serves the loopback redirect until one request to `/callback` arrives; returns its full URL.
/// Other requests (a browser's favicon) get 404. The error of an authorization server that
/// refused (`error=access_denied`) is returned as such.
pub(super) async fn callback(listener: &TcpListener, port: u16) -> Result<String, AuthError> {
    loop {
        let (mut socket, _) = listener
            .accept()
            .await
            .map_err(|e| AuthError::InternalError(format!("loopback callback: {e}")))?;
        let mut head = Vec::with_capacity(1024);
        let mut buf = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
            match tokio::time::timeout(Duration::from_secs(10), socket.read(&mut buf)).await {
                Ok(Ok(n)) if n > 0 => head.extend_from_slice(&buf[..n]),
                _ => break,
            }
        }
        let line = String::from_utf8_lossy(&head);
        let target = line
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("GET "))
            .and_then(|l| l.split(' ').next())
            .unwrap_or("");
        let url = format!("http://127.0.0.1:{port}{target}");
        let parsed = Url::parse(&url).ok().filter(|u| u.path() == "/callback");
        let Some(parsed) = parsed else {
            let _ = socket
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await;
            continue;
        };
        let error = parsed
            .query_pairs()
            .find(|(k, _)| k == "error")
            .map(|(_, v)| v.into_owned());
        let body = match &error {
            None => "Authorized. You can close this window and return to mcp-resilient.",
            Some(_) => "The authorization was refused. You can close this window.",
        };
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = socket.write_all(answer.as_bytes()).await;
        let _ = socket.shutdown().await;
        return match error {
            None => Ok(url),
            Some(error) => Err(AuthError::AuthorizationFailed(format!(
                "the authorization server answered `{error}`"
            ))),
        };
    }
}
