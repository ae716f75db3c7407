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
//!    Between lines at most [`LINE_BUFFER_KEEP`] bytes of buffer are kept.
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

use crate::transport::{Activity, BOM, LINE_BUFFER_KEEP, decode};

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
    memchr::memchr(b'\n', bytes)
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
            if self.line.capacity() > LINE_BUFFER_KEEP {
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
mod tests;
