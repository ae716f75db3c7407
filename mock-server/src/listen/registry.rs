//! The live subscriptions of one server and the events that reach them (see [`super`]).

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use rmcp::service::SubscriptionSink;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

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

#[cfg(test)]
mod tests {
    use super::*;

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
