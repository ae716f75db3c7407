//! [`PingTap`]: counts the HTTP/2 `PING` frames a client sends on one connection (not the
//! acknowledgements of the server's own), for the tests of a client's keep-alive, and when the
//! connection is silenced ([`Faults::silence_pings`]) keeps them from hyper, so that they go
//! unanswered while every other frame flows. Only frame headers are read; a connection that
//! does not open with the h2c preface (HTTP/1.1) is not parsed at all.
//!
//! # Invariants
//!
//! 1. Every byte read is handed on as it was, but for the `PING`s of a silenced connection,
//!    which are dropped whole; a read left empty by that reads again (an empty read would be
//!    the end of the stream).
//! 2. A frame header split across reads is put together before it is counted. (A `PING` split
//!    across reads is handed on: the bytes before its type was seen are gone. On loopback a
//!    17-byte frame is read whole, but for a read that ends at hyper's buffer's end.)
//!
//! [`Faults::silence_pings`]: crate::Faults::silence_pings

use std::{
    io,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    task::{Context, Poll},
};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The `PING` counts and the silence fault of one server, shared by its connections' taps.
#[derive(Debug, Default)]
pub(crate) struct Pings {
    /// `PING`s clients sent (acknowledgements not counted).
    pub(crate) sent: AtomicU64,
    /// `PING`s dropped on silenced connections: never answered.
    pub(crate) unanswered: AtomicU64,
    /// Serial numbers of the taps, in accept order; changed by [`PingTap::new`] only.
    serials: AtomicU64,
    /// Connections with a serial below this are silenced; raised by [`Pings::silence_open`].
    silenced_below: AtomicU64,
}

impl Pings {
    /// Every connection accepted so far stops answering `PING`s; later ones answer.
    pub(crate) fn silence_open(&self) {
        let next = self.serials.load(Ordering::SeqCst);
        self.silenced_below.fetch_max(next, Ordering::SeqCst);
    }
}

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const HEADER: usize = 9;
const PING: u8 = 0x6;
const ACK: u8 = 0x1;

/// Where the tap is in the client's byte stream.
enum Parse {
    /// Reading the first bytes: this many of the preface matched so far.
    Preface(usize),
    /// Reading a frame header: the bytes of it so far.
    Header([u8; HEADER], usize),
    /// Skipping this many bytes of a frame's payload.
    Payload(usize),
    /// Not HTTP/2: nothing more to look at.
    Off,
}

/// A connection's reading side, counting the client's `PING`s into `pings`.
pub(crate) struct PingTap<T> {
    inner: T,
    parse: Parse,
    pings: Arc<Pings>,
    /// This connection's place in accept order (silenced when below `silenced_below`).
    serial: u64,
}

impl<T> PingTap<T> {
    pub(crate) fn new(inner: T, pings: Arc<Pings>) -> Self {
        let serial = pings.serials.fetch_add(1, Ordering::SeqCst);
        PingTap {
            inner,
            parse: Parse::Preface(0),
            pings,
            serial,
        }
    }

    fn silenced(&self) -> bool {
        self.serial < self.pings.silenced_below.load(Ordering::SeqCst)
    }

    /// Looks at `all`, the next bytes the client sent (invariant 2), and says which whole
    /// `PING` frames in it to drop (none unless the connection is silenced).
    fn look(&mut self, all: &[u8]) -> Vec<std::ops::Range<usize>> {
        let silenced = self.silenced();
        let mut drop = Vec::new();
        let mut bytes = all;
        while !bytes.is_empty() {
            let at = all.len() - bytes.len();
            match &mut self.parse {
                Parse::Off => return drop,
                Parse::Preface(matched) => {
                    let want = &PREFACE[*matched..];
                    let n = want.len().min(bytes.len());
                    if bytes[..n] != want[..n] {
                        self.parse = Parse::Off;
                        return drop;
                    }
                    *matched += n;
                    bytes = &bytes[n..];
                    if *matched == PREFACE.len() {
                        self.parse = Parse::Header([0; HEADER], 0);
                    }
                }
                Parse::Header(header, have) => {
                    let whole = *have == 0;
                    let n = (HEADER - *have).min(bytes.len());
                    header[*have..*have + n].copy_from_slice(&bytes[..n]);
                    *have += n;
                    bytes = &bytes[n..];
                    if *have == HEADER {
                        let length = u32::from_be_bytes([0, header[0], header[1], header[2]]);
                        if header[3] == PING && header[4] & ACK == 0 {
                            self.pings.sent.fetch_add(1, Ordering::SeqCst);
                            let end = at + HEADER + length as usize;
                            if silenced && whole && end <= all.len() {
                                self.pings.unanswered.fetch_add(1, Ordering::SeqCst);
                                drop.push(at..end);
                            }
                        }
                        self.parse = Parse::Payload(length as usize);
                    }
                }
                Parse::Payload(left) => {
                    let n = (*left).min(bytes.len());
                    *left -= n;
                    bytes = &bytes[n..];
                    if *left == 0 {
                        self.parse = Parse::Header([0; HEADER], 0);
                    }
                }
            }
        }
        if let Parse::Payload(0) = self.parse {
            self.parse = Parse::Header([0; HEADER], 0);
        }
        drop
    }
}

/// Removes the `ranges` (in order, not overlapping) from `bytes`; returns the length kept.
fn cut(bytes: &mut [u8], ranges: &[std::ops::Range<usize>]) -> usize {
    let mut kept = 0;
    let mut from = 0;
    for range in ranges
        .iter()
        .chain(std::iter::once(&(bytes.len()..bytes.len())))
    {
        bytes.copy_within(from..range.start, kept);
        kept += range.start - from;
        from = range.end;
    }
    kept
}

impl<T: AsyncRead + Unpin> AsyncRead for PingTap<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        loop {
            let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
            if !matches!(polled, Poll::Ready(Ok(()))) || buf.filled().len() == before {
                return polled;
            }
            let this = &mut *self;
            let drop = this.look(&buf.filled()[before..]);
            if drop.is_empty() {
                return polled;
            }
            // Invariant 1: the silenced `PING`s are cut out; nothing left, read again.
            let kept = cut(&mut buf.filled_mut()[before..], &drop);
            buf.set_filled(before + kept);
            if kept > 0 {
                return polled;
            }
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for PingTap<T> {
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

    fn frame(kind: u8, flags: u8, payload: usize) -> Vec<u8> {
        let length = (payload as u32).to_be_bytes();
        let mut out = vec![length[1], length[2], length[3], kind, flags, 0, 0, 0, 1];
        out.extend(std::iter::repeat_n(0u8, payload));
        out
    }

    #[test]
    fn counts_the_clients_pings_across_split_reads_and_not_their_acks() {
        let pings = Arc::new(Pings::default());
        let mut tap = PingTap::new((), pings.clone());
        let mut stream = PREFACE.to_vec();
        stream.extend(frame(0x4, 0, 6)); // SETTINGS
        stream.extend(frame(PING, 0, 8));
        stream.extend(frame(PING, ACK, 8));
        stream.extend(frame(0x1, 0x4, 20)); // HEADERS
        stream.extend(frame(PING, 0, 8));
        for chunk in stream.chunks(5) {
            tap.look(chunk);
        }
        assert_eq!(pings.sent.load(Ordering::SeqCst), 2);
        let http1 = Arc::new(Pings::default());
        let mut tap = PingTap::new((), http1.clone());
        tap.look(b"POST /mcp HTTP/1.1\r\n\r\n");
        tap.look(&frame(PING, 0, 8));
        assert_eq!(http1.sent.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_silenced_connection_drops_the_clients_pings_whole_and_nothing_else() {
        let pings = Arc::new(Pings::default());
        let mut open = PingTap::new((), pings.clone());
        let mut head = PREFACE.to_vec();
        head.extend(frame(0x4, 0, 6));
        assert!(open.look(&head).is_empty());
        pings.silence_open();
        let mut later = PingTap::new((), pings.clone());
        let mut stream = frame(0x1, 0x4, 20);
        stream.extend(frame(PING, 0, 8));
        stream.extend(frame(PING, ACK, 8));
        stream.extend(frame(0x0, 0, 3));
        let drop = open.look(&stream);
        assert_eq!(drop, vec![29..46]);
        let mut kept = stream.clone();
        let n = cut(&mut kept, &drop);
        let mut want = frame(0x1, 0x4, 20);
        want.extend(frame(PING, ACK, 8));
        want.extend(frame(0x0, 0, 3));
        assert_eq!(&kept[..n], &want[..]);
        // A connection accepted after the fault answers.
        assert!(later.look(&head).is_empty());
        assert!(later.look(&frame(PING, 0, 8)).is_empty());
        assert_eq!(pings.unanswered.load(Ordering::SeqCst), 1);
    }
}
