//! The `crash` tool: exit (or, in-process, kill the server) only after the reply was written.
//!
//! The tool arms a [`CrashSwitch`]; every byte stream the server writes to (stdout, each accepted
//! TCP connection) is wrapped in a [`CrashTap`], which looks for the reply's text in what it writes
//! and fires the switch once the write holding it has been flushed. No timer is involved, so a
//! client always receives the complete reply before the process dies.
//!
//! # Invariants
//!
//! 1. The switch fires at most once per arming, and only after a successful `poll_flush` that
//!    follows the write containing [`MARKER`].

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_util::sync::CancellationToken;

/// The reply text of `crash`.
pub(crate) const REPLY: &str = "crashing";
/// How the reply appears in its serialized JSON-RPC response.
const MARKER: &[u8] = br#""text":"crashing""#;

/// What firing the switch does.
#[derive(Debug, Clone)]
pub(crate) enum CrashAction {
    /// Leave the process with the armed code (binary mode).
    Exit,
    /// Cancel this token, which kills the in-process server like a crash would.
    Kill(CancellationToken),
}

/// Armed by the `crash` tool, fired by a [`CrashTap`].
#[derive(Debug, Clone)]
pub(crate) struct CrashSwitch {
    /// The exit code of an armed crash; set by the tool, taken by the tap that fires.
    armed: Arc<Mutex<Option<i32>>>,
    action: CrashAction,
}

impl CrashSwitch {
    pub(crate) fn new(action: CrashAction) -> Self {
        Self {
            armed: Arc::new(Mutex::new(None)),
            action,
        }
    }

    pub(crate) fn arm(&self, code: i32) {
        *self.armed.lock().unwrap_or_else(PoisonError::into_inner) = Some(code);
    }

    fn is_armed(&self) -> bool {
        self.armed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    fn fire(&self) {
        let code = self
            .armed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let Some(code) = code else { return };
        match &self.action {
            CrashAction::Exit => {
                tracing::info!(code, "crash tool: exiting");
                std::process::exit(code);
            }
            CrashAction::Kill(token) => token.cancel(),
        }
    }
}

/// A byte stream that fires the crash switch once the crash reply has been flushed through it.
pub(crate) struct CrashTap<IO> {
    inner: IO,
    switch: CrashSwitch,
    /// The last `MARKER.len() - 1` bytes written, so a marker split across writes is found.
    tail: Vec<u8>,
    /// The marker went out in a write that has not been flushed yet.
    pending: bool,
}

impl<IO> CrashTap<IO> {
    pub(crate) fn new(inner: IO, switch: CrashSwitch) -> Self {
        Self {
            inner,
            switch,
            tail: Vec::new(),
            pending: false,
        }
    }

    fn scan(&mut self, written: &[u8]) {
        self.tail.extend_from_slice(written);
        if self.tail.windows(MARKER.len()).any(|w| w == MARKER) {
            self.pending = true;
        }
        let keep = MARKER.len() - 1;
        if self.tail.len() > keep {
            self.tail.drain(..self.tail.len() - keep);
        }
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for CrashTap<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for CrashTap<IO> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let written = ready!(Pin::new(&mut self.inner).poll_write(cx, buf))?;
        if self.switch.is_armed() {
            self.scan(&buf[..written]);
        } else {
            self.tail.clear();
        }
        Poll::Ready(Ok(written))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(Pin::new(&mut self.inner).poll_flush(cx))?;
        if std::mem::take(&mut self.pending) {
            self.switch.fire();
        }
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn fires_only_after_the_flush_of_a_split_marker() {
        let token = CancellationToken::new();
        let switch = CrashSwitch::new(CrashAction::Kill(token.clone()));
        let mut tap = CrashTap::new(Vec::new(), switch.clone());
        switch.arm(3);
        tap.write_all(br#"{"type":"text","te"#).await.ok();
        tap.write_all(br#"xt":"crashing"}"#).await.ok();
        assert!(!token.is_cancelled());
        tap.flush().await.ok();
        assert!(token.is_cancelled());
    }
}
