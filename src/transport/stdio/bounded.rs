//! The child's stdout with a bound on its lines: one message (one line) is at most
//! `limits.max_message_bytes`.
//!
//! rmcp's line reader has a bound of its own, but it drops an overlong line and reads on, so the
//! request it answered waits for its timeout with no verdict. Here the line that passes the bound
//! ends the stream instead: the death (cause `limit_exceeded`, naming the limit) goes into the
//! generation's slot, then the reader reports end of file, which is how every stdio generation
//! ends (invariant: the monitor reads the slot before it looks at the exit status).
//!
//! # Invariants
//!
//! 1. Bytes are counted as they arrive, not when a line completes: the bytes of one line that
//!    reach rmcp never exceed the bound, so memory stays bounded whatever the child writes.
//! 2. Counting is linear: each byte is looked at once, whatever the line shape.

use std::{
    io,
    pin::Pin,
    task::{Context, Poll, ready},
};

use tokio::io::{AsyncRead, ReadBuf};

use crate::{config::Bytes, transport::DeathSlot, verdict::limit};

/// An [`AsyncRead`] that ends (end of file) at the first line longer than `max` bytes.
#[derive(Debug)]
pub(crate) struct BoundedLines<R> {
    inner: R,
    max: usize,
    /// Bytes of the line in progress (since the last `\n`).
    line: usize,
    slot: DeathSlot,
    /// A line passed the bound: nothing more is read.
    ended: bool,
}

impl<R> BoundedLines<R> {
    /// Reads `inner`; a line over `max` bytes puts its death in `slot` and ends the stream.
    pub(crate) fn new(inner: R, max: usize, slot: DeathSlot) -> Self {
        Self {
            inner,
            max,
            line: 0,
            slot,
            ended: false,
        }
    }

    /// Counts `fresh` into the line in progress. `Err(keep)` when a line passed the bound:
    /// only the first `keep` bytes (the lines that ended before it) may be handed on.
    fn count(&mut self, fresh: &[u8]) -> Result<(), usize> {
        let mut start = 0;
        while let Some(newline) = memchr::memchr(b'\n', &fresh[start..]) {
            if self.line.saturating_add(newline) > self.max {
                return Err(start);
            }
            self.line = 0;
            start += newline + 1;
        }
        self.line = self.line.saturating_add(fresh.len() - start);
        match self.line <= self.max {
            true => Ok(()),
            false => Err(start),
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.ended {
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        if let Err(keep) = this.count(&buf.filled()[before..]) {
            this.ended = true;
            buf.set_filled(before + keep);
            let _ = this.slot.set(limit::exceeded(format!(
                "a message from the server exceeded limits.max_message_bytes ({}): a stdout \
                 line passed it without ending",
                Bytes(this.max)
            )));
        }
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;
    use crate::state::Cause;

    async fn read_all(input: &'static [u8], max: usize, chunk: usize) -> (Vec<u8>, DeathSlot) {
        let slot = DeathSlot::default();
        let (mut tx, rx) = tokio::io::duplex(chunk);
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            for piece in input.chunks(chunk) {
                if tx.write_all(piece).await.is_err() {
                    return;
                }
            }
        });
        let mut reader = BoundedLines::new(rx, max, slot.clone());
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.expect("read");
        (out, slot)
    }

    #[tokio::test]
    async fn lines_within_the_bound_pass_whatever_the_chunks() {
        let input = b"{\"a\":1}\n0123456789\n\n{}\n";
        for chunk in [1, 3, 64] {
            let (out, slot) = read_all(input, 10, chunk).await;
            assert_eq!(out, input, "chunk {chunk}");
            assert!(slot.get().is_none());
        }
    }

    #[tokio::test]
    async fn the_line_that_passes_the_bound_ends_the_stream_with_the_limit_named() {
        for chunk in [1, 4, 64] {
            let (out, slot) = read_all(b"ok\n0123456789ABC\nnever\n", 10, chunk).await;
            assert!(
                out.len() <= 3 + 10,
                "chunk {chunk}: {} bytes passed",
                out.len()
            );
            assert!(out.starts_with(b"ok\n"));
            let death = slot.get().expect("a death");
            assert_eq!(death.cause, Cause::LimitExceeded);
            assert!(
                death.detail.contains("limits.max_message_bytes (10 B)"),
                "{}",
                death.detail
            );
        }
    }
}
