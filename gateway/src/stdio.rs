//! This process's stdin and stdout for the host's session, each read or written on a thread of
//! its own that nothing ever joins.
//!
//! Why threads: a read of stdin cannot be cancelled. `tokio::io::stdin()` reads on the
//! runtime's blocking pool, and a runtime waits for its blocking threads when it shuts down, so
//! a host that keeps stdin open (and sends SIGTERM) kept the proxy alive for good. The same goes
//! for a write to a host that does not read. A plain thread is not waited for: once the proxy's
//! orderly close is done, the process exits whatever the thread is blocked in.
//!
//! # Invariants
//!
//! 1. The reader thread reads at most [`CHUNK`] bytes ahead of the session, times the channel's
//!    capacity: a host that writes fast is slowed down, not buffered without end.
//! 2. The writer thread holds at most one chunk besides the one it writes: a host that does not
//!    read fills the outbox (whose bounds apply), not this channel.

use std::{
    io::{self, Read, Write},
    pin::Pin,
    task::{Context, Poll, ready},
};

use bytes::{Buf, Bytes};
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    sync::{mpsc, oneshot},
};
use tokio_util::sync::PollSender;

/// The most bytes one read of stdin takes.
const CHUNK: usize = 64 * 1024;
/// How many chunks of stdin may wait for the session.
const READ_AHEAD: usize = 4;

/// Starts the two threads; fails only if the OS refuses a thread.
pub(super) fn host_stdio() -> io::Result<(ThreadReader, ThreadWriter)> {
    let (read_tx, read_rx) = mpsc::channel(READ_AHEAD);
    std::thread::Builder::new()
        .name("mcp-proxy-stdin".into())
        .spawn(move || read_stdin(read_tx))?;
    let (write_tx, write_rx) = mpsc::channel(1);
    let (done_tx, done_rx) = oneshot::channel();
    std::thread::Builder::new()
        .name("mcp-proxy-stdout".into())
        .spawn(move || write_stdout(write_rx, done_tx))?;
    let reader = ThreadReader {
        chunks: read_rx,
        chunk: Bytes::new(),
    };
    let writer = ThreadWriter {
        chunks: PollSender::new(write_tx),
        done: Some(done_rx),
    };
    Ok((reader, writer))
}

fn read_stdin(chunks: mpsc::Sender<io::Result<Bytes>>) {
    let stdin = io::stdin();
    let mut stdin = stdin.lock();
    let mut buffer = vec![0; CHUNK];
    loop {
        let read = match stdin.read(&mut buffer) {
            Ok(0) => return,
            Ok(n) => Ok(Bytes::copy_from_slice(&buffer[..n])),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => Err(error),
        };
        let failed = read.is_err();
        // The session has gone when the receiver has: nothing more to read for.
        if chunks.blocking_send(read).is_err() || failed {
            return;
        }
    }
}

fn write_stdout(mut chunks: mpsc::Receiver<Vec<u8>>, done: oneshot::Sender<()>) {
    let stdout = io::stdout();
    while let Some(chunk) = chunks.blocking_recv() {
        let mut out = stdout.lock();
        if out.write_all(&chunk).and_then(|()| out.flush()).is_err() {
            // The host closed stdout; dropping the receiver tells the writer task.
            return;
        }
    }
    let _ = done.send(());
}

/// stdin, read on its own thread.
#[derive(Debug)]
pub(super) struct ThreadReader {
    chunks: mpsc::Receiver<io::Result<Bytes>>,
    /// What is left of the chunk read last.
    chunk: Bytes,
}

impl AsyncRead for ThreadReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.chunk.is_empty() {
            match ready!(this.chunks.poll_recv(cx)) {
                Some(Ok(chunk)) => this.chunk = chunk,
                Some(Err(error)) => return Poll::Ready(Err(error)),
                // End of input (or the thread could not read any more).
                None => return Poll::Ready(Ok(())),
            }
        }
        let n = this.chunk.len().min(buf.remaining());
        buf.put_slice(&this.chunk[..n]);
        this.chunk.advance(n);
        Poll::Ready(Ok(()))
    }
}

/// stdout, written on its own thread.
#[derive(Debug)]
pub(super) struct ThreadWriter {
    chunks: PollSender<Vec<u8>>,
    /// Resolves once the thread has written everything sent before the shutdown.
    done: Option<oneshot::Receiver<()>>,
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the host closed stdout")
}

impl AsyncWrite for ThreadWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.chunks.poll_reserve(cx)).map_err(|_| closed())?;
        this.chunks.send_item(buf.to_vec()).map_err(|_| closed())?;
        Poll::Ready(Ok(buf.len()))
    }

    /// Handing a chunk to the thread is as far as a flush goes; the thread flushes each one.
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// Waits until the thread has written everything (or has stopped).
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.chunks.close();
        if let Some(done) = this.done.as_mut() {
            let _ = ready!(Pin::new(done).poll(cx));
            this.done = None;
        }
        Poll::Ready(Ok(()))
    }
}
