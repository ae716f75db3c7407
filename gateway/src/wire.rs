//! The host's session as rmcp's server sees it: a [`Transport`] that reads the host's messages
//! with rmcp's own line reader and sends everything through the [`Outbox`], which one writer
//! task drains to the host.
//!
//! rmcp runs each send as a task of its own; here a send only queues (it never waits), so those
//! tasks end at once and a host that does not read holds no task and no message beyond the
//! outbox's bounds.

use std::{
    io,
    pin::Pin,
    task::{Context, Poll},
};

use rmcp::{
    RoleServer,
    model::{ClientNotification, JsonRpcMessage},
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::{Transport, async_rw::AsyncRwTransport},
};
use tokio::{
    io::{AsyncRead, AsyncWrite},
    task::JoinHandle,
};

use super::{
    outbox::{Outbox, writer},
    session::Ending,
};

/// The longest reply rmcp's reader writes by itself (its answer to a malformed message).
const REPLY_MAX: usize = 64 * 1024;

/// The transport of the host's session.
pub(super) struct HostWire<R: AsyncRead> {
    /// Reads the host; its own replies (to malformed lines) go to the outbox too.
    reader: AsyncRwTransport<RoleServer, R, Replies>,
    outbox: Outbox,
    /// Drains the outbox to the host; owned here, ended by `close` or on drop.
    writer: Option<JoinHandle<()>>,
    ending: Ending,
}

impl<R> HostWire<R>
where
    R: AsyncRead + Send + Unpin + 'static,
{
    /// Reads the host from `read`; starts the task that writes the outbox to `write`.
    pub(super) fn new<W>(read: R, write: W, outbox: Outbox, ending: Ending) -> Self
    where
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let writer = tokio::spawn(writer::run(outbox.clone(), write));
        let replies = Replies {
            outbox: outbox.clone(),
            partial: Vec::new(),
            skipping: false,
        };
        Self {
            reader: AsyncRwTransport::new_server(read, replies),
            outbox,
            writer: Some(writer),
            ending,
        }
    }
}

impl<R> Transport<RoleServer> for HostWire<R>
where
    R: AsyncRead + Send + Unpin + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.outbox.send(&item);
        std::future::ready(Ok(()))
    }

    /// # Cancel safety
    ///
    /// As cancel-safe as rmcp's reader (a partial line is kept for the next call); what is done
    /// with a message read happens before it is returned, without an await.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let message = self.reader.receive().await;
        match &message {
            Some(JsonRpcMessage::Notification(notification))
                if matches!(
                    notification.notification,
                    ClientNotification::InitializedNotification(_)
                ) =>
            {
                self.outbox.open();
            }
            None => self.ending.host_gone(),
            Some(_) => {}
        }
        message
    }

    /// Writes what is queued for the host, for what is left of the drain (at least a moment),
    /// then stops the writer; what a host that does not read has not taken by then is dropped.
    async fn close(&mut self) -> Result<(), Self::Error> {
        self.outbox.close();
        let _ = self.reader.close().await;
        if let Some(mut writer) = self.writer.take() {
            let left = self.ending.left();
            if tokio::time::timeout(left, &mut writer).await.is_err() {
                writer.abort();
                tracing::info!(
                    "the host did not read what was left for it within {left:?}; dropped"
                );
            }
        }
        Ok(())
    }
}

impl<R: AsyncRead> Drop for HostWire<R> {
    fn drop(&mut self) {
        if let Some(writer) = self.writer.take() {
            writer.abort();
        }
    }
}

/// Where rmcp's reader writes its own replies: each whole line is queued in the outbox (a line
/// over [`REPLY_MAX`] is dropped whole).
struct Replies {
    outbox: Outbox,
    partial: Vec<u8>,
    /// The line being written grew over [`REPLY_MAX`]: the rest of it is skipped.
    skipping: bool,
}

impl AsyncWrite for Replies {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        for piece in buf.split_inclusive(|b| *b == b'\n') {
            let whole = piece.ends_with(b"\n");
            if !this.skipping {
                this.partial.extend_from_slice(piece);
            }
            if this.partial.len() > REPLY_MAX {
                this.partial.clear();
                this.skipping = true;
            }
            if whole {
                if !this.skipping {
                    this.outbox.send_line(std::mem::take(&mut this.partial));
                }
                this.skipping = false;
            }
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
