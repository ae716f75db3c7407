//! What the outcome of a POST says about the delivery of the request it carried (see
//! [`crate::transport::ledger`]), and how it is known whether any of its bytes left.
//!
//! A request's body is a [`Departure`]'s body: it marks the request as departed when the
//! connection first asks it for bytes, which hyper does only once a connection is open and the
//! request's head is written or queued. A body never asked for never left: the server cannot
//! have read the request, whatever ended its send (a refused connection, a connect that was
//! still under way when the generation stopped, a renewal that found no token).

use std::{
    convert::Infallible,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll},
};

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use rmcp::transport::streamable_http_client::StreamableHttpError;

use crate::transport::ledger::Sent;

/// Whether any byte of one request's body was asked for (see the module docs). Shared by the
/// bodies of its every attempt (a resend after a token renewal included).
#[derive(Debug, Default)]
pub(super) struct Departure(Arc<AtomicBool>);

impl Departure {
    /// `bytes` as a body that marks this request departed when it is first asked for.
    pub(super) fn body(&self, bytes: Bytes) -> reqwest::Body {
        reqwest::Body::wrap(Departing {
            bytes: Some(bytes),
            left: self.0.clone(),
        })
    }

    /// True once a body of this request was asked for: some of it may have reached the server.
    pub(super) fn left(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// One attempt's body: its bytes, in one frame of known length (so it goes with a
/// `Content-Length`, as plain bytes would).
struct Departing {
    bytes: Option<Bytes>,
    left: Arc<AtomicBool>,
}

impl http_body::Body for Departing {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        this.left.store(true, Ordering::Release);
        Poll::Ready(this.bytes.take().map(|bytes| Ok(Frame::data(bytes))))
    }

    fn is_end_stream(&self) -> bool {
        self.bytes.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.bytes.as_ref().map_or(0, |b| b.len() as u64))
    }
}

/// What a POST's `result` says about the delivery of its request (see
/// [`crate::transport::ledger`]): answered with an error status, the status says whether it
/// ran; refused before a connection was made (or, on HTTP/2, refused unprocessed as often as
/// it was sent), or failed before its body was asked for (`left` false), it never reached the
/// server; cut off after that, it may have run.
pub(super) fn of<T>(result: &Result<T, StreamableHttpError<reqwest::Error>>, left: bool) -> Sent {
    match result {
        Ok(_) => Sent::Delivered,
        Err(
            StreamableHttpError::HttpStatus(_)
            | StreamableHttpError::SessionExpired
            | StreamableHttpError::AuthRequired(_)
            | StreamableHttpError::InsufficientScope(_)
            | StreamableHttpError::UnexpectedServerResponse(_),
        ) => Sent::Refused,
        Err(error) if super::errors::never_left(error) => Sent::Failed,
        Err(_) if !left => Sent::Failed,
        Err(_) => Sent::Delivered,
    }
}

/// What became of a request whose send was given up before its POST was answered (the
/// generation stopped, or the request was cancelled): it may have left only if its body was
/// asked for.
pub(super) fn abandoned(left: bool) -> Sent {
    match left {
        true => Sent::Delivered,
        false => Sent::Failed,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::{
        io::{AsyncReadExt, AsyncWriteExt},
        net::TcpListener,
    };

    use super::*;

    const BODY: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

    #[tokio::test]
    async fn a_body_is_asked_for_only_once_a_connection_is_open() {
        let client = reqwest::Client::new();
        let limit = Duration::from_secs(10);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        drop(listener);
        let refused = Departure::default();
        let post = client
            .post(&url)
            .body(refused.body(Bytes::from_static(BODY)));
        let result = tokio::time::timeout(limit, post.send()).await.unwrap();
        assert!(result.is_err_and(|e| e.is_connect()), "nobody listens");
        assert!(!refused.left(), "a refused connection asked for no byte");

        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            while !request.ends_with(BODY) {
                let mut chunk = [0u8; 1024];
                let n = socket.read(&mut chunk).await.unwrap();
                assert!(n > 0, "the request ended early");
                request.extend_from_slice(&chunk[..n]);
            }
            let answer = b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n";
            socket.write_all(answer).await.unwrap();
            String::from_utf8_lossy(&request).to_lowercase()
        });
        let sent = Departure::default();
        let post = client.post(&url).body(sent.body(Bytes::from_static(BODY)));
        let response = tokio::time::timeout(limit, post.send()).await.unwrap();
        assert_eq!(response.unwrap().status(), 202);
        assert!(sent.left(), "a body the server read was asked for");
        let request = tokio::time::timeout(limit, server).await.unwrap().unwrap();
        let length = format!("content-length: {}\r\n", BODY.len());
        assert!(request.contains(&length), "sent with its length: {request}");
        assert!(!request.contains("transfer-encoding"), "{request}");
    }

    #[test]
    fn a_request_whose_body_was_never_asked_for_never_left() {
        let refused: Result<(), _> =
            Err(StreamableHttpError::<reqwest::Error>::ServerDoesNotSupportSse);
        assert_eq!(of(&refused, false), Sent::Failed);
        assert_eq!(of(&refused, true), Sent::Delivered);
        let expired: Result<(), _> = Err(StreamableHttpError::<reqwest::Error>::SessionExpired);
        assert_eq!(
            of(&expired, false),
            Sent::Refused,
            "the server's word decides"
        );
        assert_eq!(abandoned(false), Sent::Failed);
        assert_eq!(abandoned(true), Sent::Delivered);
    }
}
