//! Opening a legacy SSE session: the `GET`, its refusals (and whether a Streamable HTTP server
//! sent them), and the `endpoint` event, within the connect's deadline.

use std::sync::Arc;

use reqwest::header::{ACCEPT, HeaderMap, HeaderValue};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{
    CHANNEL, SseProbe, SseTransport,
    errors::{refusal, retry_after},
    post::Poster,
    probe::Waiting,
    stream,
};
use crate::{
    auth::Authorizer,
    config::{Limits, RemoteConfig},
    text::redact_url,
    transport::{Activity, DeathSlot, http, innermost},
    verdict::Verdict};

/// Why opening the stream failed; `status` is the HTTP answer to the `GET`, if there was one.
#[derive(Debug)]
pub(crate) struct ConnectError {
    pub(crate) status: Option<u16>,
    /// The answer's raw `Retry-After`, if it had one.
    pub(crate) retry_after: Option<String>,
    pub(crate) detail: String,
    /// The answer was a Streamable HTTP server's refusal of a `GET` without a session, which
    /// no legacy SSE endpoint sends (see `streamable_refusal`).
    pub(crate) streamable: bool,
}

impl ConnectError {
    fn new(detail: impl Into<String>) -> Self {
        ConnectError {
            status: None,
            retry_after: None,
            detail: detail.into(),
            streamable: false,
        }
    }

    /// What this failure says about the server. A 404/405 (the other protocol, or a wrong URL)
    /// is left to [`super::detect`], which knows whether another protocol remains to be tried.
    pub(crate) fn verdict(&self) -> Verdict {
        match self.status {
            Some(status) => {
                Verdict::of_status(status, self.retry_after.as_deref(), self.detail.clone())
            }
            None => Verdict::transport(self.detail.clone()),
        }
    }
}

/// Opens the stream, waits for its `endpoint` (at most `endpoint_timeout`) and starts reading.
/// `progress` is stamped when the stream's headers and its `endpoint` arrive. With `auth`, the
/// `GET` carries the server's token, renewed once if the server refuses it. One event is bounded
/// by `limits.max_sse_event_bytes`.
pub(crate) async fn connect(
    http: &reqwest::Client,
    config: &RemoteConfig,
    limits: &Limits,
    auth: Option<Arc<Authorizer>>,
    slot: DeathSlot,
    progress: &Arc<Activity>,
) -> Result<SseTransport, ConnectError> {
    let headers = http::header_map(config).map_err(ConnectError::new)?;
    let get = |token: Option<String>| {
        let mut request = http
            .get(config.url.clone())
            .headers(headers.clone())
            .header(ACCEPT, HeaderValue::from_static("text/event-stream"));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        async move {
            request.send().await.map_err(|e| {
                // reqwest's text would name the URL again, query and all: ours is redacted.
                let why = innermost(&e.without_url());
                ConnectError::new(format!("GET {} failed: {why}", redact_url(&config.url)))
            })
        }
    };
    let response = match &auth {
        None => get(None).await?,
        Some(auth) => auth
            .send(get, refusal)
            .await
            .map_err(|denied| ConnectError {
                // The authorization server did not answer: a failed connect, retried with
                // backoff (no status), not a 401.
                status: (!denied.transient).then_some(401),
                retry_after: None,
                detail: denied.detail,
                streamable: false,
            })??,
    };
    progress.touch();
    let status = response.status();
    if !status.is_success() {
        let detail = format!("GET {} answered HTTP {status}", redact_url(&config.url));
        let retry_after = retry_after(response.headers());
        return Err(ConnectError {
            status: Some(status.as_u16()),
            retry_after,
            detail,
            streamable: streamable_refusal(response).await,
        });
    }
    if !is_event_stream(response.headers()) {
        // A Streamable HTTP server may answer a session-less GET with a JSON error or an empty
        // 200; either way this is not a legacy SSE endpoint.
        return Err(ConnectError {
            status: Some(406),
            retry_after: None,
            detail: format!(
                "GET {} did not answer with an event stream",
                redact_url(&config.url)
            ),
            streamable: streamable_refusal(response).await,
        });
    }
    let (max_event, max_line) = (limits.max_sse_event_bytes, limits.max_sse_line_bytes);
    let mut events = stream::events(response, max_event, max_line, progress.clone());
    let endpoint = stream::endpoint(&mut events, &config.url);
    let endpoint = tokio::time::timeout(config.endpoint_timeout, endpoint)
        .await
        .map_err(|_| {
            let limit = config.endpoint_timeout;
            ConnectError::new(format!("no `endpoint` event within {limit:?}"))
        })?
        .map_err(ConnectError::new)?;
    progress.touch();
    let poster = Poster {
        http: http.clone(),
        endpoint,
        headers,
        auth,
        timeout: config.endpoint_timeout,
        slot,
        stop: CancellationToken::new(),
    };
    Ok(start(events, poster, progress))
}

/// The session over an opened stream: its reader task started, its sends and probes posted by
/// `poster` (whose `stop` stops the reader).
fn start(events: stream::Events, poster: Poster, progress: &Arc<Activity>) -> SseTransport {
    let (tx, rx) = mpsc::channel(CHANNEL);
    let waiting = Waiting::new(progress);
    let reader = tokio::spawn(stream::read(
        events,
        tx,
        waiting.clone(),
        progress.clone(),
        poster.slot.clone(),
        poster.stop.clone(),
    ));
    let poster = Arc::new(poster);
    SseTransport {
        probe: Some(SseProbe::new(&poster, waiting)),
        poster,
        rx,
        reader: Some(reader),
        activity: progress.clone(),
    }
}

/// The most of a refusal's body read to see whether a Streamable HTTP server sent it.
const REFUSAL_PEEK: usize = 4096;

/// Whether the body of `response` (a refusal of the `GET`) is how a Streamable HTTP server
/// refuses a `GET` without a session: a JSON-RPC message (the TypeScript and Python SDKs:
/// `{"jsonrpc":"2.0","error":{…"No valid session ID provided"}}`), or a text that asks for a
/// session (rmcp: `Bad Request: Session ID is required`). A legacy SSE endpoint opens its
/// session with this very `GET`, so it has none to ask for. At most [`REFUSAL_PEEK`] bytes are
/// read, within the connect's own deadline.
async fn streamable_refusal(mut response: reqwest::Response) -> bool {
    let mut body = Vec::new();
    while body.len() < REFUSAL_PEEK {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) => break,
            Err(_) => return false,
        }
    }
    body.truncate(REFUSAL_PEEK);
    let jsonrpc = serde_json::from_slice::<serde_json::Value>(&body)
        .is_ok_and(|message| message.get("jsonrpc").and_then(|v| v.as_str()) == Some("2.0"));
    jsonrpc
        || String::from_utf8_lossy(&body)
            .to_lowercase()
            .contains("session")
}

fn is_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            ct.split(';')
                .next()
                .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("text/event-stream"))
        })
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// The answer of a server on 127.0.0.1 that answers a `GET` with `status` and `body`.
    async fn refusal_of(status: &str, body: &'static str) -> reqwest::Response {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let answer = format!(
            "HTTP/1.1 {status}\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 1024];
            let _ = socket.read(&mut request).await;
            let _ = socket.write_all(answer.as_bytes()).await;
        });
        reqwest::Client::new()
            .get(format!("http://127.0.0.1:{port}/mcp"))
            .timeout(std::time::Duration::from_secs(5))
            .send()
            .await
            .expect("an answer")
    }

    #[tokio::test]
    async fn a_streamable_http_servers_refusal_of_a_sessionless_get_is_recognised() {
        let sdk = r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#;
        assert!(streamable_refusal(refusal_of("400 Bad Request", sdk).await).await);
        let rmcp = "Bad Request: Session ID is required";
        assert!(streamable_refusal(refusal_of("400 Bad Request", rmcp).await).await);
        let other = "<html>bad request</html>";
        assert!(!streamable_refusal(refusal_of("400 Bad Request", other).await).await);
        assert!(!streamable_refusal(refusal_of("406 Not Acceptable", "").await).await);
    }
}
