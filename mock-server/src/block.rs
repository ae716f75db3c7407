//! The `block` tool: a server whose event loop is stuck in a long synchronous tool. It is busy,
//! not dead: it keeps reading requests, but for the block's duration nothing leaves it. Every
//! outgoing message (ping answers, other replies, notifications) is held, in order, and goes out
//! when the block ends, before the block's own reply.
//!
//! `hang` is the other silence: it drops what stdio would send and never ends by itself.
//!
//! A call that asked for progress gets one announcement first, `notifications/progress` with
//! the message [`ANNOUNCEMENT`], sent once the block has started and never held: whatever the
//! client sends after seeing it meets a blocked server (tests synchronize on it, not on time).
//!
//! # Invariants
//!
//! 1. While any block runs, every outgoing path waits in [`Block::hold`]: the stdio transport's
//!    sends (in the order they were queued) and, in remote modes, body frames (in order within
//!    each response) and the heads of responses to requests that arrived while blocked. Nothing
//!    held is dropped. Across separate HTTP responses (Streamable HTTP POSTs) the release order
//!    is not defined; on one stream (legacy SSE, stdio) it is.
//! 2. A block ends when its time is up or its call is cancelled or dropped (a guard ends it), so
//!    a cancelled call or a killed session never leaves the server blocked.
//! 3. The announcement is the only message let through while blocked; it is recognized by its
//!    content ([`is_announcement`], [`frame_is_announcement`]).
//! 4. [`Block::run`] returns only after its block ended and everything held was released (or
//!    [`DRAIN_LIMIT`] passed, e.g. when a client stopped reading), so the block's reply is
//!    queued after what it held.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{JsonRpcMessage, ServerNotification};
use rmcp::service::TxJsonRpcMessage;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// The message of the progress notification that announces a block.
pub(crate) const ANNOUNCEMENT: &str = "blocking";
/// How the announcement's message appears in a serialized frame (a quote inside some other
/// message's text would be escaped, so only the announcement holds it).
const ANNOUNCEMENT_BYTES: &[u8] = br#""message":"blocking""#;

/// Whether an outgoing stdio message is a block's announcement.
pub(crate) fn is_announcement(message: &TxJsonRpcMessage<RoleServer>) -> bool {
    let JsonRpcMessage::Notification(notification) = message else {
        return false;
    };
    let ServerNotification::ProgressNotification(progress) = &notification.notification else {
        return false;
    };
    progress.params.message.as_deref() == Some(ANNOUNCEMENT)
}

/// Whether an HTTP body frame carries a block's announcement.
pub(crate) fn frame_is_announcement(frame: &[u8]) -> bool {
    let has = |needle: &[u8]| frame.windows(needle.len()).any(|w| w == needle);
    has(ANNOUNCEMENT_BYTES) && has(b"notifications/progress")
}

/// How long a block's reply waits for the messages it held to be released.
const DRAIN_LIMIT: Duration = Duration::from_secs(2);

/// Counts one unit in a watch counter while it lives.
struct Count(watch::Sender<usize>);

impl Count {
    fn up(counter: &watch::Sender<usize>) -> Self {
        counter.send_modify(|n| *n += 1);
        Self(counter.clone())
    }
}

impl Drop for Count {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// The block state of one server (one process, or one in-process `MockServer`).
pub(crate) struct Block {
    /// Blocks running now; changed only by [`Block::run`] (through its guard).
    running: watch::Sender<usize>,
    /// Outgoing items waiting in [`Block::hold`] now; changed only by `hold` (through its guard).
    held: watch::Sender<usize>,
}

impl Block {
    pub(crate) fn new() -> Self {
        Self {
            running: watch::Sender::new(0),
            held: watch::Sender::new(0),
        }
    }

    pub(crate) fn is_blocked(&self) -> bool {
        *self.running.borrow() > 0
    }

    /// Resolves at once if no block runs, else once every block has ended.
    ///
    /// # Cancel safety
    /// Cancel safe: it holds nothing but a counter guard.
    pub(crate) async fn hold(&self) {
        if !self.is_blocked() {
            return;
        }
        let _held = Count::up(&self.held);
        let mut running = self.running.subscribe();
        // The sender lives in `self`, so `wait_for` cannot fail while we borrow it.
        let _ = running.wait_for(|n| *n == 0).await;
    }

    /// Blocks the server for `duration`, or until `cancel` fires; `announce` runs once the
    /// block has started (and counts towards it). Then, if no other block still runs, waits (at
    /// most [`DRAIN_LIMIT`]) until everything held has been released. Returns `false` if
    /// cancelled.
    ///
    /// # Cancel safety
    /// Dropping the future ends the block at once (invariant 2).
    pub(crate) async fn run(
        &self,
        duration: Duration,
        cancel: &CancellationToken,
        announce: impl Future<Output = ()>,
    ) -> bool {
        let running = Count::up(&self.running);
        let finished = tokio::select! {
            () = async { announce.await; tokio::time::sleep(duration).await } => true,
            () = cancel.cancelled() => false,
        };
        drop(running);
        if !self.is_blocked() {
            let mut held = self.held.subscribe();
            let drained = tokio::time::timeout(DRAIN_LIMIT, held.wait_for(|n| *n == 0)).await;
            if drained.is_err() {
                tracing::debug!("block: held messages not released within the drain limit");
            }
        }
        finished
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use futures::FutureExt;

    use super::*;

    const HOUR: Duration = Duration::from_secs(3600);

    #[tokio::test]
    async fn holds_until_the_block_ends_and_a_dropped_block_ends_too() {
        let block = Arc::new(Block::new());
        let stop = CancellationToken::new();
        let run = tokio::spawn({
            let (block, stop) = (block.clone(), stop.clone());
            async move { block.run(HOUR, &stop, async {}).await }
        });
        let mut running = block.running.subscribe();
        running.wait_for(|n| *n == 1).await.expect("sender alive");
        let mut held = std::pin::pin!(block.hold());
        assert!(
            (&mut held).now_or_never().is_none(),
            "not held while blocked"
        );
        assert_eq!(*block.held.borrow(), 1);
        stop.cancel();
        held.await;
        assert_eq!(run.await.ok(), Some(false), "a cancelled block reports it");
        assert_eq!(*block.held.borrow(), 0);

        let never = CancellationToken::new();
        assert!(block.run(HOUR, &never, async {}).now_or_never().is_none());
        assert!(!block.is_blocked(), "a dropped block must end");
        assert!(block.hold().now_or_never().is_some());
    }

    #[test]
    fn only_the_announcement_frame_is_recognized() {
        let frame = br#"data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"b","progress":0.0,"message":"blocking"}}"#;
        assert!(frame_is_announcement(frame));
        let echoed = br#"data: {"result":{"content":[{"text":"notifications/progress \"message\":\"blocking\""}]}}"#;
        assert!(!frame_is_announcement(echoed));
    }
}
