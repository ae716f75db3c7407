//! Acting only after a reply was written: the `crash` tool exits (or, in-process, kills the
//! server), `wedge` stops reading stdin, and `--exit-after-list` exits after the first
//! `tools/list` reply.
//!
//! The tool (or handler) arms a [`CrashSwitch`] with a marker, a byte string found only in the
//! reply it is about to send, and what to do after it. Every byte stream the server writes to
//! (stdout, each accepted TCP connection) is wrapped in a [`CrashTap`], which looks for the armed
//! marker in what it writes and fires the switch once the write holding it has been flushed. No
//! timer is involved, so a client always receives the complete reply first.
//!
//! # Invariants
//!
//! 1. The switch fires at most once per arming, and only after a successful `poll_flush` that
//!    follows the write containing the armed marker.
//! 2. `wedged` only goes from `false` to `true`, when a [`AfterFlush::Wedge`] arming fires.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// The reply text of `crash`.
pub(crate) const REPLY: &str = "crashing";
/// How the reply appears in its serialized JSON-RPC response.
const MARKER: &[u8] = br#""text":"crashing""#;
/// The reply text of `wedge`.
pub(crate) const WEDGE_REPLY: &str = "wedged";
/// How the `wedge` reply appears in its serialized JSON-RPC response.
pub(crate) const WEDGE_MARKER: &[u8] = br#""text":"wedged""#;
/// Found in every serialized `tools/list` result and in no other message the server sends (a
/// quote inside a tool's text is escaped, so no tool reply contains it).
pub(crate) const LIST_MARKER: &[u8] = br#""tools":["#;

/// What firing an armed switch does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AfterFlush {
    /// The switch's [`CrashAction`] with this exit code.
    Exit(i32),
    /// Stop reading requests for good (stdio): see [`CrashSwitch::wedged`].
    Wedge,
}

/// What firing the switch does.
#[derive(Debug, Clone)]
pub(crate) enum CrashAction {
    /// Leave the process with the armed code (binary mode).
    Exit,
    /// Cancel this token, which kills the in-process server like a crash would.
    Kill(CancellationToken),
}

/// A marker to look for, and what to do once it has been flushed.
type Arming = (&'static [u8], AfterFlush);

/// Armed by a tool or the handler, fired by a [`CrashTap`].
#[derive(Debug, Clone)]
pub(crate) struct CrashSwitch {
    /// The armed marker and what follows it; set by `arm*`, taken by the tap that fires.
    armed: Arc<Mutex<Option<Arming>>>,
    action: CrashAction,
    /// Set once a `Wedge` arming fired; read by the stdio transport.
    wedged: watch::Sender<bool>,
}

impl CrashSwitch {
    pub(crate) fn new(action: CrashAction) -> Self {
        Self {
            armed: Arc::new(Mutex::new(None)),
            action,
            wedged: watch::Sender::new(false),
        }
    }

    /// Arms the `crash` tool's exit with `code`.
    pub(crate) fn arm(&self, code: i32) {
        self.arm_after(MARKER, AfterFlush::Exit(code));
    }

    /// Arms `then` to happen once a write containing `marker` has been flushed.
    pub(crate) fn arm_after(&self, marker: &'static [u8], then: AfterFlush) {
        *self.armed.lock().unwrap_or_else(PoisonError::into_inner) = Some((marker, then));
    }

    fn armed_marker(&self) -> Option<&'static [u8]> {
        let armed = self.armed.lock().unwrap_or_else(PoisonError::into_inner);
        armed.map(|(marker, _)| marker)
    }

    /// Resolves once a `wedge` reply has been flushed (at once if it already was).
    ///
    /// # Cancel safety
    /// Cancel safe: it only observes a watch channel.
    pub(crate) async fn wedged(&self) {
        let mut wedged = self.wedged.subscribe();
        // The sender lives in `self`, so `wait_for` cannot fail while we borrow it.
        let _ = wedged.wait_for(|on| *on).await;
    }

    fn fire(&self) {
        let armed = self
            .armed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        match armed.map(|(_, then)| then) {
            None => {}
            Some(AfterFlush::Wedge) => {
                tracing::info!("wedge: no longer reading requests");
                self.wedged.send_replace(true);
            }
            Some(AfterFlush::Exit(code)) => match &self.action {
                CrashAction::Exit => {
                    tracing::info!(code, "reply flushed: exiting");
                    std::process::exit(code);
                }
                CrashAction::Kill(token) => token.cancel(),
            },
        }
    }
}

/// A byte stream that fires the crash switch once the crash reply has been flushed through it.
pub(crate) struct CrashTap<IO> {
    inner: IO,
    switch: CrashSwitch,
    /// The last `marker.len() - 1` bytes written, so a marker split across writes is found.
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

    fn scan(&mut self, written: &[u8], marker: &[u8]) {
        self.tail.extend_from_slice(written);
        if self.tail.windows(marker.len()).any(|w| w == marker) {
            self.pending = true;
        }
        let keep = marker.len().saturating_sub(1);
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
        if let Some(marker) = self.switch.armed_marker() {
            self.scan(&buf[..written], marker);
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

    #[tokio::test]
    async fn a_wedge_arming_sets_wedged_after_the_flush() {
        let switch = CrashSwitch::new(CrashAction::Exit);
        let mut tap = CrashTap::new(Vec::new(), switch.clone());
        switch.arm_after(WEDGE_MARKER, AfterFlush::Wedge);
        tap.write_all(br#"{"text":"wedged"}"#).await.ok();
        assert!(!*switch.wedged.borrow());
        tap.flush().await.ok();
        switch.wedged().await;
    }
}
