//! `subscriptions/listen` (2026-07-28): the server's live subscriptions, how a tool-set change
//! or a resource update reaches them, and how `end_listens` ends them.
//!
//! rmcp acknowledges a subscription (`notifications/subscriptions/acknowledged`) *before* it
//! calls the handler's `listen`, so a change made between the two would find no sink to notify.
//! Every change and every end therefore gets a number (an *event*); the handler takes a mark
//! (the last event number) before the acknowledgment and, once its sink is registered, catches
//! up on whatever happened after the mark.
//!
//! # Invariants
//!
//! 1. A subscription acknowledged before a notifying tools change, or before an update of a
//!    resource its filter accepted, is notified of it: either the change finds its sink
//!    registered, or the registration finds the change newer than the mark and the subscription
//!    notifies itself (both may happen: a duplicate, never a loss).
//! 2. An `end_listens` after the acknowledgment ends the subscription, the same way.
//! 3. A sink is registered only while its `listen` runs (a [`Registration`] removes it).
//! 4. An abrupt end in remote modes ends no `listen` itself: it cuts the HTTP responses of the
//!    listen requests that arrived before it (each holds the abort token current at its
//!    arrival), which drops their streams; rmcp then cancels the `listen`, and nothing more is
//!    written. Elsewhere (stdio) an abrupt end answers the listen request with an error.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::service::{SubscriptionContext, SubscriptionSink};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// How long the catch-up `list_changed` of a new subscription may take to go out.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(2);

/// How the subscriptions live at one `end_listens` end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct End {
    /// The event number of this end; 0 = none yet.
    pub(crate) at: u64,
    /// With the final `SubscriptionsListenResult`, or without it.
    pub(crate) graceful: bool,
}

/// What a subscription must do at once after registering (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CatchUp {
    pub(crate) tools_changed: bool,
    /// Resources its filter accepted that were updated since the mark.
    pub(crate) updated: Vec<String>,
}

#[derive(Default)]
struct State {
    /// The last event number handed out.
    event: u64,
    /// The event number of the last notifying tools change; 0 = none.
    tools_changed_at: u64,
    /// The event number of each resource's last update.
    updated_at: BTreeMap<String, u64>,
    next_id: u64,
    /// Registered sinks; changed only by [`Listens::register`] and [`Registration`]'s drop.
    sinks: Vec<(u64, SubscriptionSink)>,
}

/// The subscriptions of one server (one process, or one in-process `MockServer`).
pub(crate) struct Listens {
    state: Mutex<State>,
    /// The last end; replaced by [`Listens::end`] under the state lock.
    ends: watch::Sender<End>,
    /// Cut listen responses (remote abrupt end); cancelled and replaced by [`Listens::cut`].
    abort: Mutex<CancellationToken>,
}

/// Keeps one sink registered while it lives.
pub(crate) struct Registration<'a> {
    listens: &'a Listens,
    id: u64,
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        self.listens.state().sinks.retain(|(id, _)| *id != self.id);
    }
}

impl Listens {
    pub(crate) fn new() -> Self {
        Self {
            state: Mutex::new(State::default()),
            ends: watch::Sender::new(End {
                at: 0,
                graceful: true,
            }),
            abort: Mutex::new(CancellationToken::new()),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The last event number: taken before a subscription is acknowledged.
    pub(crate) fn mark(&self) -> u64 {
        self.state().event
    }

    /// Registers `sink` and says what happened since `mark`.
    pub(crate) fn register(
        &self,
        sink: SubscriptionSink,
        mark: u64,
    ) -> (Registration<'_>, CatchUp) {
        let mut state = self.state();
        state.next_id += 1;
        let id = state.next_id;
        let updated = state
            .updated_at
            .iter()
            .filter(|(uri, at)| **at > mark && accepts(&sink, uri))
            .map(|(uri, _)| uri.clone())
            .collect();
        let catch_up = CatchUp {
            tools_changed: state.tools_changed_at > mark && wants_tools(&sink),
            updated,
        };
        state.sinks.push((id, sink));
        (Registration { listens: self, id }, catch_up)
    }

    /// Records a notifying tools change; returns the sinks whose filter accepted it.
    pub(crate) fn tools_changed(&self) -> Vec<SubscriptionSink> {
        let mut state = self.state();
        state.event += 1;
        state.tools_changed_at = state.event;
        let sinks = state.sinks.iter().map(|(_, sink)| sink);
        sinks.filter(|sink| wants_tools(sink)).cloned().collect()
    }

    /// Records an update of the resource `uri`; returns the sinks whose filter accepted it.
    pub(crate) fn resource_updated(&self, uri: &str) -> Vec<SubscriptionSink> {
        let mut state = self.state();
        state.event += 1;
        let at = state.event;
        state.updated_at.insert(uri.to_owned(), at);
        state
            .sinks
            .iter()
            .filter(|(_, sink)| accepts(sink, uri))
            .map(|(_, sink)| sink.clone())
            .collect()
    }

    /// Ends every subscription acknowledged so far, with or without its final result.
    pub(crate) fn end(&self, graceful: bool) {
        let mut state = self.state();
        state.event += 1;
        self.ends.send_replace(End {
            at: state.event,
            graceful,
        });
    }

    /// Resolves with the first end after `mark` (at once if there was one).
    ///
    /// # Cancel safety
    /// Cancel safe: it only observes a watch channel.
    pub(crate) async fn ended_since(&self, mark: u64) -> End {
        let mut ends = self.ends.subscribe();
        let end = ends.wait_for(|end| end.at > mark).await.map(|end| *end);
        match end {
            Ok(end) => end,
            // The sender lives in `self`, so this cannot happen while we borrow it.
            Err(_) => std::future::pending().await,
        }
    }

    /// The token that cuts the responses of listen requests arriving now.
    pub(crate) fn abort_token(&self) -> CancellationToken {
        self.abort
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Cuts the responses of every listen request that arrived so far (remote abrupt end).
    pub(crate) fn cut(&self) {
        let next = CancellationToken::new();
        let old = std::mem::replace(
            &mut *self.abort.lock().unwrap_or_else(PoisonError::into_inner),
            next,
        );
        old.cancel();
    }

    /// Subscriptions whose `listen` runs now.
    pub(crate) fn count(&self) -> usize {
        self.state().sinks.len()
    }

    /// Resource URIs accepted by the subscriptions whose `listen` runs now, summed.
    pub(crate) fn resource_subscriptions(&self) -> usize {
        let state = self.state();
        let uris = |sink: &SubscriptionSink| {
            let accepted = sink.accepted().resource_subscriptions.as_ref();
            accepted.map_or(0, Vec::len)
        };
        state.sinks.iter().map(|(_, sink)| uris(sink)).sum()
    }
}

/// Whether `sink`'s accepted filter includes tools `list_changed`.
fn wants_tools(sink: &SubscriptionSink) -> bool {
    sink.accepted().tools_list_changed == Some(true)
}

/// Whether `sink`'s accepted filter includes updates of `uri`.
fn accepts(sink: &SubscriptionSink, uri: &str) -> bool {
    let accepted = sink.accepted().resource_subscriptions.as_ref();
    accepted.is_some_and(|uris| uris.iter().any(|u| u == uri))
}

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

    #[tokio::test]
    async fn an_end_after_the_mark_is_seen_even_by_a_late_waiter() {
        let listens = Listens::new();
        let mark = listens.mark();
        listens.end(false);
        let end = listens.ended_since(mark).await;
        assert!(!end.graceful);
        let token = listens.abort_token();
        listens.cut();
        assert!(token.is_cancelled());
        assert!(!listens.abort_token().is_cancelled());
    }
}
