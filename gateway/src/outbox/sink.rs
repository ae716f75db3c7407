//! Drains one host's outbox to where that host listens through rmcp (an HTTP host session's
//! streams, or one 2026-07-28 listen stream, over HTTP or stdio), one notification at a time,
//! in order. (The stdio front's own outbox has its own writer, `writer.rs`, which writes lines.)
//!
//! Only notifications travel this way: rmcp writes its own answers and the core's requests to
//! the host straight to the session. A host that does not read blocks its own writer (rmcp's
//! session queue is bounded), so its outbox fills and drops what may be dropped, counted; no
//! other host waits.

use futures::future::BoxFuture;
use rmcp::{
    Peer, RoleServer,
    model::{ServerJsonRpcMessage, ServerNotification},
    service::SubscriptionSink,
};

use super::{Outbox, Payload, Taken, writer::sleep_until};

/// How many queued notifications one round takes.
const BATCH: usize = 32;

/// Where a host listens.
pub(crate) trait Sink: Send + Sync + 'static {
    /// Sends one notification; `Err` when the host can no longer be reached.
    fn send(&self, notification: ServerNotification) -> BoxFuture<'_, Result<(), ()>>;
}

impl Sink for Peer<RoleServer> {
    fn send(&self, notification: ServerNotification) -> BoxFuture<'_, Result<(), ()>> {
        Box::pin(async move { self.send_notification(notification).await.map_err(|_| ()) })
    }
}

impl Sink for SubscriptionSink {
    /// What the stream did not ask for (or cannot carry: log messages, progress) is skipped.
    fn send(&self, notification: ServerNotification) -> BoxFuture<'_, Result<(), ()>> {
        Box::pin(async move {
            use rmcp::service::SubscriptionSendError as E;
            match SubscriptionSink::send(self, notification).await {
                Ok(()) | Err(E::NotificationNotAccepted(_) | E::UnsupportedNotification(_)) => {
                    Ok(())
                }
                Err(_) => Err(()),
            }
        })
    }
}

/// Drains `outbox` to `sink` until the outbox is closed and empty, or the sink fails (then
/// nothing more is queued for the host).
///
/// # Cancel safety
///
/// Dropping it loses the batch it holds (at most [`BATCH`] notifications, which may be
/// dropped anyway); the queue itself is untouched.
pub(crate) async fn run(outbox: Outbox, sink: impl Sink) {
    let mut batch = Vec::with_capacity(BATCH);
    loop {
        match outbox.take_payloads(BATCH, &mut batch) {
            Taken::Lines => {
                for payload in batch.drain(..) {
                    if let Payload::Message(message) = payload
                        && let ServerJsonRpcMessage::Notification(notification) = *message
                        && sink.send(notification.notification).await.is_err()
                    {
                        tracing::debug!("the host's stream is gone; nothing more is sent to it");
                        outbox.broken();
                        return;
                    }
                    outbox.sent(1);
                }
                outbox.report_if_due();
            }
            Taken::Closed => return,
            Taken::Nothing => {
                let due = outbox.report_due();
                tokio::select! {
                    () = outbox.woken() => {}
                    () = sleep_until(due), if due.is_some() => outbox.report_if_due(),
                }
            }
        }
    }
}
