//! One subscription's run (the handler's `listen`), and the marks it takes before it.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::service::SubscriptionContext;

use super::registry::Listens;

/// How long the catch-up `list_changed` of a new subscription may take to go out.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(2);

/// Runs one subscription (the handler's `listen`): registers its sink, catches up on what
/// happened since `mark`, then waits until the client cancels it (or its stream drops: rmcp
/// then drops whatever we return) or an end after `mark`: graceful returns `Ok` (rmcp sends
/// the final result), abrupt an error.
pub(crate) async fn serve(
    listens: &Listens,
    mark: u64,
    context: SubscriptionContext,
) -> Result<(), ErrorData> {
    let sink = context.sink().clone();
    let (registration, catch_up) = listens.register(sink.clone(), mark);
    if catch_up.tools_changed {
        let sent = tokio::time::timeout(NOTIFY_TIMEOUT, sink.notify_tool_list_changed());
        if !matches!(sent.await, Ok(Ok(()))) {
            tracing::debug!("listen: the catch-up list_changed was not sent");
        }
    }
    for uri in catch_up.updated {
        let sent = tokio::time::timeout(NOTIFY_TIMEOUT, sink.notify_resource_updated(uri));
        if !matches!(sent.await, Ok(Ok(()))) {
            tracing::debug!("listen: the catch-up resources/updated was not sent");
        }
    }
    let end = tokio::select! {
        () = context.cancelled() => return Ok(()),
        end = listens.ended_since(mark) => end,
    };
    drop(registration);
    match end.graceful {
        true => Ok(()),
        false => Err(ErrorData::internal_error(
            "subscription ended without a final result (mock end_listens)",
            None,
        )),
    }
}

/// The marks of one handler's subscriptions between their acknowledgment and their
/// registration. rmcp gives `listen` no way to find the mark its own
/// `accepted_subscription_filter` call took, so a registration takes the smallest pending mark
/// (never newer than its own, so it never misses an event; at worst it catches up on one it
/// had seen) and removes the largest (which keeps the smallest for the others).
#[derive(Default)]
pub(crate) struct PendingMarks(Mutex<Vec<u64>>);

impl PendingMarks {
    pub(crate) fn push(&self, mark: u64) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(mark);
    }

    /// The mark a registering subscription compares against; 0 if none is pending.
    pub(crate) fn take(&self) -> u64 {
        let mut marks = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let smallest = marks.iter().copied().min().unwrap_or(0);
        if let Some(largest) = marks.iter().enumerate().max_by_key(|(_, m)| **m) {
            let index = largest.0;
            marks.swap_remove(index);
        }
        smallest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_marks_never_hand_out_a_mark_newer_than_any_pending_one() {
        let marks = PendingMarks::default();
        marks.push(1);
        marks.push(2);
        // Whichever subscription registers first, both compare against 1.
        assert_eq!(marks.take(), 1);
        assert_eq!(marks.take(), 1);
        assert_eq!(marks.take(), 0, "none pending");
    }
}
