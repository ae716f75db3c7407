//! [`PingTap`]: counts the HTTP/2 `PING` frames a client sends on one connection (not the
//! acknowledgements of the server's own), for the tests of a client's keep-alive. Only frame
//! headers are read, as the bytes pass to hyper unchanged; a connection that does not open with
//! the h2c preface (HTTP/1.1) is not parsed at all.
//!
//! # Invariants
//!
//! 1. Every byte read is handed on as it was; the tap only looks.
//! 2. A frame header split across reads is put together before it is judged.

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
    pings: Arc<AtomicU64>,
}

impl<T> PingTap<T> {
    pub(crate) fn new(inner: T, pings: Arc<AtomicU64>) -> Self {
        PingTap {
            inner,
            parse: Parse::Preface(0),
            pings,
        }
    }

    /// Looks at `bytes`, the next ones the client sent (invariant 2).
    fn look(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            match &mut self.parse {
                Parse::Off => return,
                Parse::Preface(matched) => {
                    let want = &PREFACE[*matched..];
                    let n = want.len().min(bytes.len());
                    if bytes[..n] != want[..n] {
                        self.parse = Parse::Off;
                        return;
                    }
                    *matched += n;
                    bytes = &bytes[n..];
                    if *matched == PREFACE.len() {
                        self.parse = Parse::Header([0; HEADER], 0);
                    }
                }
                Parse::Header(header, have) => {
                    let n = (HEADER - *have).min(bytes.len());
                    header[*have..*have + n].copy_from_slice(&bytes[..n]);
                    *have += n;
                    bytes = &bytes[n..];
                    if *have == HEADER {
                        let length = u32::from_be_bytes([0, header[0], header[1], header[2]]);
                        if header[3] == PING && header[4] & ACK == 0 {
                            self.pings.fetch_add(1, Ordering::SeqCst);
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
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for PingTap<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let this = &mut *self;
            this.look(&buf.filled()[before..]);
        }
        polled
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
        let pings = Arc::new(AtomicU64::new(0));
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
        assert_eq!(pings.load(Ordering::SeqCst), 2);
        let http1 = Arc::new(AtomicU64::new(0));
        let mut tap = PingTap::new((), http1.clone());
        tap.look(b"POST /mcp HTTP/1.1\r\n\r\n");
        tap.look(&frame(PING, 0, 8));
        assert_eq!(http1.load(Ordering::SeqCst), 0);
    }
}
