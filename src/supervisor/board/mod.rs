//! The board: one server's [`Status`] and its live generation in one `watch`, and the events
//! derived from it. The actor is the only writer; handles, tool calls and the registry read.
//!
//! # Invariants
//!
//! 1. One value holds the status and the generation that takes calls (`live`), replaced whole:
//!    no reader can see one without the other. `live` is `Some` exactly in the `ready` state.
//! 2. A state change is visible in the watch before its [`Event::State`] is sent, with the same
//!    `seq` (see [`Status`]'s invariants); and a receiver from [`Board::events`] never gets the
//!    event of a status that was visible before it subscribed: the watch update and the event
//!    are sent under one lock, which `events` takes to subscribe. Reading the status never
//!    takes it.
//! 3. A generation whose death was reported (its `dead` token) may still be on the board until
//!    the actor takes it off; readers that need one that takes calls skip it
//!    ([`Published::taking_calls`]) and wait for the next status.
//! 4. A publish that changes nothing (the same state about the same generation, no generation
//!    taking calls) is not a change: no `seq`, no event.

mod status_watch;

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{broadcast, watch};

pub use status_watch::StatusWatch;

use crate::state::{ConnectionState, Event, Events, Generation, Status};
use crate::supervisor::session::live::Live;

/// What the board holds: the status and the ready generation.
#[derive(Debug, Clone)]
pub(in crate::supervisor) struct Published {
    pub(in crate::supervisor) status: Status,
    /// The ready generation; `Some` exactly when `status` is `ready`.
    pub(in crate::supervisor) live: Option<Arc<Live>>,
}

impl Published {
    /// The ready generation, unless its death was already reported.
    pub(in crate::supervisor) fn taking_calls(&self) -> Option<&Arc<Live>> {
        self.live.as_ref().filter(|live| !live.dead.is_cancelled())
    }

    /// True when the board still shows a generation whose death was reported: the actor has
    /// not taken it off yet, and a new status follows.
    pub(in crate::supervisor) fn catching_up(&self) -> bool {
        self.live
            .as_ref()
            .is_some_and(|live| live.dead.is_cancelled())
    }
}

/// One server's status board.
#[derive(Debug)]
pub(in crate::supervisor) struct Board {
    server: Arc<str>,
    watch: watch::Sender<Published>,
    events: Events,
    /// Held while a change is published and while a receiver of events subscribes (invariant
    /// 2); never across an `.await`.
    publishing: Mutex<()>,
}

impl Board {
    /// A board in its first status: `connecting`, attempt 1, seq 1.
    pub(in crate::supervisor) fn new(server: Arc<str>) -> Self {
        let connecting = ConnectionState::Connecting { attempt: 1 };
        let status = Status {
            seq: 1,
            state: connecting,
            generation: Some(Generation::FIRST),
        };
        Board {
            server,
            watch: watch::Sender::new(Published { status, live: None }),
            events: Events::default(),
            publishing: Mutex::new(()),
        }
    }

    /// The board as it is now.
    pub(in crate::supervisor) fn current(&self) -> Published {
        self.watch.borrow().clone()
    }

    /// The generation taking calls now (ready, its death not reported), read in place: no
    /// clone of the status.
    pub(crate) fn ready_generation(&self) -> Option<Generation> {
        self.watch
            .borrow()
            .taking_calls()
            .map(|live| live.generation)
    }

    /// The status as it is now.
    pub(in crate::supervisor) fn status(&self) -> Status {
        self.watch.borrow().status.clone()
    }

    /// A receiver of every change (the latest wins if it lags).
    pub(in crate::supervisor) fn subscribe(&self) -> watch::Receiver<Published> {
        self.watch.subscribe()
    }

    /// A receiver of the events of every change after the status now.
    pub(in crate::supervisor) fn events(&self) -> broadcast::Receiver<Event> {
        let _publishing = self
            .publishing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.events.subscribe()
    }

    /// Publishes a new status (the actor only): the watch first, then its event.
    pub(in crate::supervisor) fn publish(
        &self,
        state: ConnectionState,
        generation: Option<Generation>,
        live: Option<Arc<Live>>,
    ) -> Status {
        debug_assert_eq!(state.is_ready(), live.is_some());
        let _publishing = self
            .publishing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let seq = {
            let board = self.watch.borrow();
            if !Self::changes(&board, &state, generation, live.as_ref()) {
                return board.status.clone();
            }
            board.status.seq + 1
        };
        let status = Status {
            seq,
            state,
            generation,
        };
        self.watch.send_replace(Published {
            status: status.clone(),
            live,
        });
        self.events.send(Event::State {
            server: self.server.clone(),
            status: status.clone(),
        });
        status
    }

    /// True when publishing this would change the board (invariant 4).
    pub(in crate::supervisor) fn would_change(
        &self,
        state: &ConnectionState,
        generation: Option<Generation>,
        live: Option<&Arc<Live>>,
    ) -> bool {
        Self::changes(&self.watch.borrow(), state, generation, live)
    }

    fn changes(
        board: &Published,
        state: &ConnectionState,
        generation: Option<Generation>,
        live: Option<&Arc<Live>>,
    ) -> bool {
        live.is_some()
            || board.live.is_some()
            || board.status.state != *state
            || board.status.generation != generation
    }

    /// Sends an event that is not a status change (tools, stability, probe misses).
    pub(in crate::supervisor) fn event(&self, event: Event) {
        self.events.send(event);
    }

    /// The sender, for watchers that report events themselves (the heartbeat's misses).
    pub(in crate::supervisor) fn event_sender(&self) -> Events {
        self.events.clone()
    }
}
