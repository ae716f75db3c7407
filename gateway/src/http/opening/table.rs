//! The openings of requests that wait on their session's take-over: when the store makes this
//! process a session's owner, every request of it that waits here is opened at once.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError, Weak},
};

use super::stage::Opening;

/// The openings of requests that wait on their session's take-over, by session id.
#[derive(Debug, Default)]
pub(in crate::http) struct Openings(Mutex<HashMap<String, Vec<Weak<Opening>>>>);

impl Openings {
    /// The store made this process the owner of `session`: every request of it that waits here
    /// is opened now, before the session is rebuilt.
    pub(in crate::http) fn taken_over(&self, session: &str) {
        let waiting = self.lock().get(session).cloned().unwrap_or_default();
        for opening in waiting.iter().filter_map(Weak::upgrade) {
            opening.ask();
        }
    }

    pub(super) fn register(
        self: &Arc<Self>,
        session: String,
        opening: &Arc<Opening>,
    ) -> Registered {
        let weak = Arc::downgrade(opening);
        self.lock()
            .entry(session.clone())
            .or_default()
            .push(weak.clone());
        Registered {
            openings: self.clone(),
            session,
            opening: weak,
        }
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Weak<Opening>>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A request's place among the openings of its session, left when it is dropped.
pub(super) struct Registered {
    openings: Arc<Openings>,
    session: String,
    opening: Weak<Opening>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut all = self.openings.lock();
        if let Some(list) = all.get_mut(&self.session) {
            list.retain(|w| !w.ptr_eq(&self.opening) && w.strong_count() > 0);
            if list.is_empty() {
                all.remove(&self.session);
            }
        }
    }
}
