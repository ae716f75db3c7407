//! [`Frames`]: the server's side of a connection, read as it passes to hyper, for the three
//! things hyper does not say in time: whether the server speaks HTTP/2 at all (its first frame
//! must be `SETTINGS`, RFC 9113 § 3.4), its `SETTINGS_MAX_CONCURRENT_STREAMS` (hyper's
//! `Connection::current_max_send_streams` is read only when its task is polled, so it can lag
//! a `SETTINGS` that already arrived), and a `GOAWAY` (hyper says nothing until a request
//! bounces off it).
//!
//! Only frame headers are parsed (9 bytes each); the payloads of `SETTINGS` and `GOAWAY` are
//! read, every other payload is skipped. Nothing is changed: hyper reads the same bytes.
//!
//! # Invariants
//!
//! 1. The first frame is judged once: its verdict goes out on the `first` channel before
//!    anything else is recorded, and a connection that ends or fails before a whole first
//!    frame is judged not to speak HTTP/2.
//! 2. [`Seen`] is written here only; the connection set reads it.

use std::{
    io,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    task::{Context, Poll},
};

use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    sync::oneshot,
};

const HEADER: usize = 9;
const SETTINGS: u8 = 0x4;
const GOAWAY: u8 = 0x7;
const ACK: u8 = 0x1;
const MAX_CONCURRENT_STREAMS: u16 = 0x3;
/// The most of a payload kept to be read (a `SETTINGS` of every known setting is 36 bytes, a
/// `GOAWAY` 8 plus its debug data, which is not read).
const KEEP: usize = 64;

/// What the server's frames said so far; shared with the connection set (invariant 2).
#[derive(Debug)]
pub(super) struct Seen {
    /// The server's `SETTINGS_MAX_CONCURRENT_STREAMS`, once it sent one.
    pub(super) max_streams: AtomicUsize,
    /// Set by the server's first `GOAWAY`: no new stream may go on the connection.
    pub(super) goaway: AtomicBool,
}

/// Why the server's first frame says it does not speak HTTP/2 (invariant 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NotHttp2 {
    /// Its first bytes are no `SETTINGS` frame (an HTTP/1.1 answer to the preface, say).
    Other,
    /// The connection ended or failed before a whole first frame.
    Closed,
}

/// The verdict on the first frame: the server speaks HTTP/2, or why not.
pub(super) type First = Result<(), NotHttp2>;

/// An I/O object whose reads are watched for the server's frames (see the module docs).
pub(super) struct Frames<IO> {
    inner: IO,
    seen: Arc<Seen>,
    /// Taken when the first frame is judged (invariant 1).
    first: Option<oneshot::Sender<First>>,
    /// The frame being read: its header so far, or what is left of its payload.
    state: State,
}

enum State {
    Header(Vec<u8>),
    Payload {
        kind: u8,
        flags: u8,
        left: usize,
        kept: Vec<u8>,
    },
}

impl<IO> Frames<IO> {
    /// Watches `inner`; `seen` gets what the frames say, `first` the verdict on the first one.
    pub(super) fn new(inner: IO, seen: Arc<Seen>, first: oneshot::Sender<First>) -> Self {
        Self {
            inner,
            seen,
            first: Some(first),
            state: State::Header(Vec::with_capacity(HEADER)),
        }
    }

    fn judge_first(&mut self, verdict: First) {
        if let Some(first) = self.first.take() {
            let _ = first.send(verdict);
        }
    }

    /// Reads `bytes`, the next the server sent.
    fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            match &mut self.state {
                State::Header(header) => {
                    let take = (HEADER - header.len()).min(bytes.len());
                    header.extend_from_slice(&bytes[..take]);
                    bytes = &bytes[take..];
                    if header.len() < HEADER {
                        return;
                    }
                    let left = usize::from(header[0]) << 16
                        | usize::from(header[1]) << 8
                        | usize::from(header[2]);
                    let (kind, flags) = (header[3], header[4]);
                    if self.first.is_some() && (kind != SETTINGS || flags & ACK != 0) {
                        self.judge_first(Err(NotHttp2::Other));
                    }
                    self.state = State::Payload {
                        kind,
                        flags,
                        left,
                        kept: Vec::new(),
                    };
                }
                State::Payload {
                    kind, left, kept, ..
                } => {
                    let take = (*left).min(bytes.len());
                    if matches!(*kind, SETTINGS | GOAWAY) && kept.len() < KEEP {
                        let keep = take.min(KEEP - kept.len());
                        kept.extend_from_slice(&bytes[..keep]);
                    }
                    *left -= take;
                    bytes = &bytes[take..];
                }
            }
            self.frame_done();
        }
        self.frame_done();
    }

    /// When the payload being read is whole: what it says, and on to the next header.
    fn frame_done(&mut self) {
        let State::Payload {
            kind,
            flags,
            left: 0,
            kept,
        } = &self.state
        else {
            return;
        };
        match *kind {
            SETTINGS if flags & ACK == 0 => {
                for setting in kept.chunks_exact(6) {
                    let id = u16::from_be_bytes([setting[0], setting[1]]);
                    let value =
                        u32::from_be_bytes([setting[2], setting[3], setting[4], setting[5]]);
                    if id == MAX_CONCURRENT_STREAMS {
                        let value = usize::try_from(value).unwrap_or(usize::MAX);
                        self.seen.max_streams.store(value, Ordering::Release);
                    }
                }
                self.judge_first(Ok(()));
            }
            GOAWAY => self.seen.goaway.store(true, Ordering::Release),
            _ => {}
        }
        self.state = State::Header(Vec::with_capacity(HEADER));
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Frames<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        let result = Pin::new(&mut this.inner).poll_read(cx, buf);
        match &result {
            Poll::Ready(Ok(())) if buf.filled().len() == before => {
                this.judge_first(Err(NotHttp2::Closed));
            }
            Poll::Ready(Ok(())) => this.feed(&buf.filled()[before..]),
            Poll::Ready(Err(_)) => this.judge_first(Err(NotHttp2::Closed)),
            Poll::Pending => {}
        }
        result
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Frames<IO> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, flags: u8, payload: &[u8]) -> Vec<u8> {
        let len = payload.len();
        let mut bytes = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
        bytes.extend_from_slice(&[0, 0, 0, 0]);
        bytes.extend_from_slice(payload);
        bytes
    }

    fn watch() -> (Frames<()>, Arc<Seen>, oneshot::Receiver<First>) {
        let seen = Arc::new(Seen {
            max_streams: AtomicUsize::new(0),
            goaway: AtomicBool::new(false),
        });
        let (tx, rx) = oneshot::channel();
        (Frames::new((), seen.clone(), tx), seen, rx)
    }

    #[test]
    fn settings_then_goaway_are_read_across_any_split() {
        let mut bytes = frame(SETTINGS, 0, &[0, 3, 0, 0, 0, 2, 0, 4, 0, 1, 0, 0]);
        bytes.extend(frame(0x8, 0, &[0, 0, 0, 1]));
        bytes.extend(frame(
            GOAWAY,
            0,
            &[0, 0, 0, 1, 0, 0, 0, 0, b'b', b'y', b'e'],
        ));
        for step in 1..bytes.len() {
            let (mut frames, seen, mut first) = watch();
            for chunk in bytes.chunks(step) {
                frames.feed(chunk);
            }
            assert_eq!(first.try_recv(), Ok(Ok(())), "split every {step}");
            assert_eq!(seen.max_streams.load(Ordering::Acquire), 2);
            assert!(seen.goaway.load(Ordering::Acquire));
        }
    }

    #[test]
    fn an_http1_answer_to_the_preface_is_not_http2() {
        let (mut frames, seen, mut first) = watch();
        frames.feed(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
        assert_eq!(first.try_recv(), Ok(Err(NotHttp2::Other)));
        assert!(!seen.goaway.load(Ordering::Acquire));
    }

    #[test]
    fn a_settings_ack_first_is_not_http2() {
        let (mut frames, _, mut first) = watch();
        frames.feed(&frame(SETTINGS, ACK, &[]));
        assert_eq!(first.try_recv(), Ok(Err(NotHttp2::Other)));
    }
}
