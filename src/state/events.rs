//! [`Events`]: where one server's [`Event`]s go.

use std::sync::{Arc, OnceLock};

use tokio::sync::broadcast;

use super::Event;

/// Where a board's events go: a broadcast channel made when the first receiver subscribes.
/// Until then an event has no receiver, which the channel would drop too; so an idle connection
/// nobody watches does not hold the channel's ring (32 events, ~5 KiB, allocated whole).
#[derive(Debug, Clone, Default)]
pub(crate) struct Events(Arc<OnceLock<broadcast::Sender<Event>>>);

impl Events {
    /// Events are rare (state changes, tool changes, probe misses): a slow reader lags rather
    /// than every watched connection holding a larger ring.
    const CAPACITY: usize = 32;

    /// Sends `event` to every receiver subscribed now, if any.
    pub(crate) fn send(&self, event: Event) {
        if let Some(sender) = self.0.get() {
            let _ = sender.send(event);
        }
    }

    /// A receiver of every event sent from now on; the first makes the channel.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.0
            .get_or_init(|| broadcast::channel(Self::CAPACITY).0)
            .subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Generation;

    fn stable(n: u64) -> Event {
        Event::Stable {
            server: "s".into(),
            generation: Generation::of(n),
        }
    }

    #[test]
    fn the_ring_is_made_by_the_first_receiver_and_events_before_it_reach_no_one() {
        let events = Events::default();
        events.send(stable(1));
        assert!(events.0.get().is_none(), "no receiver, no ring");
        let clone = events.clone();
        let mut first = events.subscribe();
        clone.send(stable(2));
        let mut second = clone.subscribe();
        clone.send(stable(3));
        assert_eq!(first.try_recv().unwrap(), stable(2));
        assert_eq!(first.try_recv().unwrap(), stable(3));
        assert_eq!(second.try_recv().unwrap(), stable(3));
        assert!(first.try_recv().is_err() && second.try_recv().is_err());
    }
}
