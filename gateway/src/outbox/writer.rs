//! The one task that writes the [`Outbox`] to the host, in batches, in order.

use tokio::io::{AsyncWrite, AsyncWriteExt};

use super::{Outbox, Taken};

/// About how many bytes one write takes (a longer line goes alone).
const BATCH: usize = 64 * 1024;

/// Writes what `outbox` queues to `out` until the outbox is closed and empty, or `out` fails (the
/// host has gone: nothing is queued any more). Also reports drops that came due while the host
/// was idle.
///
/// # Cancel safety
///
/// Dropping it mid-write loses the batch being written (part of a line may have gone out); the
/// proxy drops it only when it gives up on a host that does not read.
pub(crate) async fn run<W: AsyncWrite + Unpin>(outbox: Outbox, mut out: W) {
    let mut batch = Vec::with_capacity(BATCH);
    loop {
        batch.clear();
        if batch.capacity() > 4 * BATCH {
            batch = Vec::with_capacity(BATCH);
        }
        match outbox.take(BATCH, &mut batch) {
            Taken::Lines => {
                let written = async {
                    out.write_all(&batch).await?;
                    out.flush().await
                };
                if let Err(error) = written.await {
                    tracing::debug!(%error, "the host's stdout is closed; nothing more is sent");
                    outbox.broken();
                    return;
                }
                outbox.report_if_due();
            }
            Taken::Closed => break,
            Taken::Nothing => {
                let due = outbox.report_due();
                tokio::select! {
                    () = outbox.woken() => {}
                    () = sleep_until(due), if due.is_some() => outbox.report_if_due(),
                }
            }
        }
    }
    let _ = out.shutdown().await;
}

pub(in crate::outbox) async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
