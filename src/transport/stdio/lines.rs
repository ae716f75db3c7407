//! A stdio session's transport: rmcp's writer for what we send, our reader for what the child
//! writes, so that an answer is read as the one type its request's method returns
//! ([`decode::message_for`], the method from the generation's ledger) instead of through rmcp's
//! untagged decode, which buffers the whole message and tries each kind of result in turn.
//!
//! # Invariants
//!
//! 1. What a line means is what rmcp's own stdio reader makes of it: a line that is no JSON is
//!    skipped; JSON that is no message is answered with an "Invalid request" error, as rmcp
//!    answers it, except a notification, which is skipped (nothing waits for it; rmcp skips the
//!    non-standard ones too); a blank line, a UTF-8 byte order mark and a carriage return
//!    before the newline are ignored.
//! 2. A line is at most `max` bytes: the bounded stdout below it ends the stream at the bound;
//!    past `max` here a line is dropped whole, as a second fence. Memory stays bounded.
//!    Between lines at most [`KEEP`] bytes of buffer are kept.
//! 3. Cancel-safe `receive`: a line read in part stays buffered, and the next call goes on
//!    with it (rmcp polls `receive` inside a `select!`).

use std::sync::Arc;

use rmcp::{
    RoleClient,
    model::{ClientJsonRpcMessage, ErrorData, ServerJsonRpcMessage},
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::{Transport, async_rw::AsyncRwTransport},
};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};

use crate::transport::{Activity, decode};

/// The most of a line's buffer kept between lines: one large message (a long tool list) must
/// not hold its size in every idle session for good.
const KEEP: usize = 64 * 1024;

/// UTF-8's byte order mark, which some servers write before their first line.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One stdio session's transport.
pub struct StdioTransport<R, W: AsyncWrite + Send + 'static> {
    /// rmcp's transport, for sending and closing only: its reader is empty.
    write: AsyncRwTransport<RoleClient, tokio::io::Empty, W>,
    read: BufReader<R>,
    /// The line being read (kept across cancelled `receive`s).
    line: Vec<u8>,
    /// Set while the line being read passed `max`: the rest of it is dropped.
    discarding: bool,
    max: usize,
    /// Where each request's method is remembered.
    activity: Arc<Activity>,
}

impl<R, W> StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// The transport over the child's `stdout` and `stdin`, with lines of at most `max` bytes.
    pub fn new(stdout: R, stdin: W, max: usize, activity: Arc<Activity>) -> Self {
        StdioTransport {
            write: AsyncRwTransport::new_client(tokio::io::empty(), stdin),
            read: BufReader::new(stdout),
            line: Vec::new(),
            discarding: false,
            max,
            activity,
        }
    }

    /// The next whole line into `self.line` (its newline stripped); `false` at end of file or
    /// on a read error.
    async fn next_line(&mut self) -> bool {
        loop {
            let available = match self.read.fill_buf().await {
                Ok([]) => return false,
                Ok(available) => available,
                Err(e) => {
                    tracing::debug!("stdio: reading the child's stdout failed: {e}");
                    return false;
                }
            };
            let (take, done) = match newline(available) {
                Some(at) => (at + 1, true),
                None => (available.len(), false),
            };
            if !self.discarding {
                if self.line.len() + take > self.max.saturating_add(1) {
                    self.discarding = true;
                    self.line.clear();
                } else {
                    self.line.extend_from_slice(&available[..take]);
                }
            }
            self.read.consume(take);
            if done {
                if std::mem::take(&mut self.discarding) {
                    tracing::error!(max = self.max, "stdio: a line over the bound was dropped");
                    continue;
                }
                self.line.pop();
                if self.line.last() == Some(&b'\r') {
                    self.line.pop();
                }
                return true;
            }
        }
    }
}

/// Where the first newline in `bytes` is.
fn newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|b| *b == b'\n')
}

/// JSON that is no message: the server is told (invariant 1).
#[derive(Debug)]
struct Invalid;

/// What one line is (invariant 1): a message, nothing (`None`), or JSON that is no message.
fn read_line(line: &[u8], activity: &Activity) -> Result<Option<ServerJsonRpcMessage>, Invalid> {
    let line = line.strip_prefix(BOM).unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let error = match decode::message_for(line, |id| activity.ledger.method(id)) {
        Ok(message) => return Ok(Some(message)),
        Err(e) => e,
    };
    if !matches!(
        error.classify(),
        serde_json::error::Category::Data | serde_json::error::Category::Io
    ) {
        tracing::debug!("stdio: skipped a line that is no JSON: {error}");
        return Ok(None);
    }
    let notification = serde_json::from_slice::<serde_json::Value>(line).is_ok_and(|value| {
        value.get("id").is_none() && value.get("method").is_some_and(|m| m.is_string())
    });
    if notification {
        tracing::debug!("stdio: skipped a notification that does not decode: {error}");
        return Ok(None);
    }
    tracing::debug!("stdio: a line is no JSON-RPC message: {error}");
    Err(Invalid)
}

impl<R, W> Transport<RoleClient> for StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.write.send(item)
    }

    /// # Cancel safety
    ///
    /// Cancel-safe (invariant 3); an "Invalid request" answer interrupted by a cancel is not
    /// sent again.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            if !self.next_line().await {
                return None;
            }
            let line = read_line(&self.line, &self.activity);
            self.line.clear();
            if self.line.capacity() > KEEP {
                self.line = Vec::new();
            }
            match line {
                Ok(Some(message)) => return Some(message),
                Ok(None) => {}
                Err(Invalid) => {
                    let invalid = ErrorData::invalid_request("Invalid request", None);
                    let answer = ClientJsonRpcMessage::error(invalid, None);
                    if self.write.send(answer).await.is_err() {
                        return None;
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.close().await
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{RequestId, ServerResult};
    use tokio::io::AsyncWriteExt;

    use super::*;

    /// A transport over an in-memory pipe, and the child's end of it.
    fn pipe(
        max: usize,
    ) -> (
        StdioTransport<tokio::io::DuplexStream, tokio::io::DuplexStream>,
        tokio::io::DuplexStream,
        tokio::io::DuplexStream,
        Arc<Activity>,
    ) {
        let (stdout, child_out) = tokio::io::duplex(1 << 16);
        let (stdin, child_in) = tokio::io::duplex(1 << 16);
        let activity = Activity::new(true);
        let transport = StdioTransport::new(stdout, stdin, max, activity.clone());
        (transport, child_out, child_in, activity)
    }

    #[tokio::test]
    async fn lines_read_as_rmcp_reads_them_and_answers_typed() {
        let (mut transport, mut child, _stdin, activity) = pipe(1 << 20);
        activity.ledger.handed(&RequestId::Number(3), "tools/call");
        let call = r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}}"#;
        let log = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}"#;
        let odd = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":7}"#;
        let text = format!("\u{feff}{log}\r\n\n  \nnot json\n{odd}\n{call}\n");
        child.write_all(text.as_bytes()).await.unwrap();
        drop(child);
        let first = transport.receive().await.expect("the log message");
        let theirs: ServerJsonRpcMessage = serde_json::from_str(log).unwrap();
        assert_eq!(
            serde_json::to_value(&first).unwrap(),
            serde_json::to_value(&theirs).unwrap()
        );
        match transport.receive().await.expect("the call's answer") {
            rmcp::model::JsonRpcMessage::Response(r) => {
                assert_eq!(r.id, RequestId::Number(3));
                assert!(matches!(r.result, ServerResult::CallToolResult(_)));
            }
            other => panic!("{other:?}"),
        }
        assert!(transport.receive().await.is_none(), "end of file");
    }

    #[tokio::test]
    async fn json_that_is_no_message_is_answered_invalid_and_reading_goes_on() {
        let (mut transport, mut child, mut stdin, _activity) = pipe(1 << 20);
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        child
            .write_all(format!("[1, 2]\n{ping}\n").as_bytes())
            .await
            .unwrap();
        let message = transport.receive().await.expect("the ping");
        assert!(matches!(message, rmcp::model::JsonRpcMessage::Request(_)));
        let mut sent = vec![0; 4096];
        let n = tokio::io::AsyncReadExt::read(&mut stdin, &mut sent)
            .await
            .unwrap();
        let answer: serde_json::Value = serde_json::from_slice(&sent[..n]).unwrap();
        assert_eq!(answer["error"]["code"], -32600, "{answer}");
    }

    #[tokio::test]
    async fn a_line_over_the_bound_is_dropped_whole() {
        let (mut transport, mut child, _stdin, _activity) = pipe(64);
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"{}"}}"#,
            "x".repeat(200)
        );
        child
            .write_all(format!("{long}\n{ping}\n").as_bytes())
            .await
            .unwrap();
        drop(child);
        match transport.receive().await.expect("the ping") {
            rmcp::model::JsonRpcMessage::Request(r) => assert_eq!(r.id, RequestId::Number(1)),
            other => panic!("{other:?}"),
        }
        assert!(transport.line.capacity() <= 1024, "bounded buffer");
        assert!(transport.receive().await.is_none());
    }

    #[tokio::test]
    async fn a_large_line_does_not_keep_its_buffer() {
        let (mut transport, mut child, _stdin, _activity) = pipe(1 << 20);
        let large = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","data":"{}"}}}}"#,
            "x".repeat(200_000)
        );
        let writer = tokio::spawn(async move {
            child
                .write_all(format!("{large}\n").as_bytes())
                .await
                .unwrap();
        });
        transport.receive().await.expect("the large message");
        writer.await.unwrap();
        assert!(
            transport.line.capacity() <= KEEP,
            "{}",
            transport.line.capacity()
        );
    }

    #[tokio::test]
    async fn a_cancelled_receive_keeps_the_part_of_a_line_it_read() {
        let (mut transport, mut child, _stdin, _activity) = pipe(1 << 20);
        child.write_all(br#"{"jsonrpc":"2.0","#).await.unwrap();
        // The bytes are in the pipe: one poll reads them, finds no newline, and is dropped.
        let partial = futures::FutureExt::now_or_never(transport.receive());
        assert!(partial.is_none(), "no whole line yet");
        assert!(!transport.line.is_empty(), "the part read is kept");
        child
            .write_all(br#""id":1,"method":"ping"}"#)
            .await
            .unwrap();
        child.write_all(b"\n").await.unwrap();
        let message = transport.receive().await.expect("the ping, whole");
        assert!(matches!(message, rmcp::model::JsonRpcMessage::Request(_)));
    }
}
