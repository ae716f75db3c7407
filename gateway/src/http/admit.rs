//! What one host may hold at once: sessions per token (and in all), requests in flight per
//! session. Every count is taken before the work starts and given back by a guard, so a host
//! past a bound is refused at once and nobody else waits.
//!
//! # Invariants
//!
//! 1. A session is counted from the moment its `initialize` is let through until the session
//!    closes (idle, `DELETE`, or the end); one whose `initialize` failed is given back at once.
//! 2. The counts never exceed their bounds, under any interleaving: a slot is taken under the
//!    same lock that checks it.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
};

use super::{identify::TokenKey, options::FrontLimits};

/// Why a host was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::http) enum Full {
    /// The token holds its most sessions.
    TokenSessions(usize),
    /// The gateway holds its most sessions.
    Sessions(usize),
    /// The session (or the token's session-less requests) has its most requests in flight.
    Requests(usize),
}

/// Where a request's slot is counted.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(in crate::http) enum Flow {
    /// A host session, by its id.
    Session(String),
    /// Session-less requests (2026-07-28), by token.
    Token(TokenKey),
}

#[derive(Debug, Default)]
struct Counts {
    per_token: HashMap<TokenKey, usize>,
    sessions: usize,
    /// The token of each live session.
    owner: HashMap<String, TokenKey>,
    in_flight: HashMap<Flow, usize>,
}

/// The counts and their bounds. Cheap to clone.
#[derive(Debug, Clone)]
pub(in crate::http) struct Admission {
    limits: FrontLimits,
    counts: Arc<Mutex<Counts>>,
}

/// A session slot taken for an `initialize`: kept by [`Reservation::bind`], else given back.
#[derive(Debug)]
pub(in crate::http) struct Reservation {
    admission: Admission,
    token: Option<TokenKey>,
}

/// A request slot, given back on drop.
#[derive(Debug)]
pub(in crate::http) struct InFlight {
    admission: Admission,
    flow: Flow,
}

impl Admission {
    pub(in crate::http) fn new(limits: FrontLimits) -> Self {
        Self {
            limits,
            counts: Arc::default(),
        }
    }

    /// Takes a session slot for `token`.
    pub(in crate::http) fn reserve(&self, token: TokenKey) -> Result<Reservation, Full> {
        let mut counts = self.lock();
        if counts.sessions >= self.limits.max_sessions {
            return Err(Full::Sessions(self.limits.max_sessions));
        }
        let held = counts.per_token.entry(token.clone()).or_default();
        if *held >= self.limits.max_sessions_per_token {
            return Err(Full::TokenSessions(self.limits.max_sessions_per_token));
        }
        *held += 1;
        counts.sessions += 1;
        Ok(Reservation {
            admission: self.clone(),
            token: Some(token),
        })
    }

    /// Takes a request slot in `flow`.
    pub(in crate::http) fn enter(&self, flow: Flow) -> Result<InFlight, Full> {
        let mut counts = self.lock();
        let held = counts.in_flight.entry(flow.clone()).or_default();
        if *held >= self.limits.max_requests_per_session {
            let max = self.limits.max_requests_per_session;
            if *held == 0 {
                counts.in_flight.remove(&flow);
            }
            return Err(Full::Requests(max));
        }
        *held += 1;
        Ok(InFlight {
            admission: self.clone(),
            flow,
        })
    }

    /// Live sessions per caller (for the status page).
    pub(in crate::http) fn per_token(&self) -> Vec<(TokenKey, usize)> {
        let counts = self.lock();
        let per = counts.per_token.iter().filter(|(_, n)| **n > 0);
        per.map(|(key, n)| (key.clone(), *n)).collect()
    }

    /// The caller that opened session `id`, while it is counted.
    pub(in crate::http) fn owner(&self, id: &str) -> Option<TokenKey> {
        self.lock().owner.get(id).cloned()
    }

    /// Session `id` closed: its slot is given back (once; later calls do nothing).
    pub(in crate::http) fn closed(&self, id: &str) {
        let mut counts = self.lock();
        if let Some(token) = counts.owner.remove(id) {
            release(&mut counts, token);
        }
    }

    /// Live sessions, in all.
    #[cfg(test)]
    fn sessions(&self) -> usize {
        self.lock().sessions
    }

    fn lock(&self) -> MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn release(counts: &mut Counts, token: TokenKey) {
    counts.sessions = counts.sessions.saturating_sub(1);
    if let Some(held) = counts.per_token.get_mut(&token) {
        *held = held.saturating_sub(1);
        if *held == 0 {
            counts.per_token.remove(&token);
        }
    }
}

impl Reservation {
    /// The session `id` was created (or restored): its slot stays taken until it closes. A
    /// session already counted (two requests restored it at once) keeps its one slot.
    pub(in crate::http) fn bind(mut self, id: String) {
        let mut counts = self.admission.lock();
        if counts.owner.contains_key(&id) {
            return;
        }
        if let Some(token) = self.token.take() {
            counts.owner.insert(id, token);
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            release(&mut self.admission.lock(), token);
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut counts = self.admission.lock();
        if let Some(held) = counts.in_flight.get_mut(&self.flow) {
            *held = held.saturating_sub(1);
            if *held == 0 {
                counts.in_flight.remove(&self.flow);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(sessions: usize, per_token: usize, requests: usize) -> FrontLimits {
        FrontLimits {
            max_sessions: sessions,
            max_sessions_per_token: per_token,
            max_requests_per_session: requests,
            ..FrontLimits::default()
        }
    }

    #[test]
    fn a_token_past_its_sessions_is_refused_and_a_closed_session_frees_its_slot() {
        let admission = Admission::new(limits(10, 2, 1));
        let (a, b) = (TokenKey::Static(0), TokenKey::Static(1));
        admission
            .reserve(a.clone())
            .expect("first")
            .bind("s1".into());
        let second = admission.reserve(a.clone()).expect("second");
        assert_eq!(
            admission.reserve(a.clone()).unwrap_err(),
            Full::TokenSessions(2)
        );
        admission
            .reserve(b)
            .expect("another token is not affected")
            .bind("s3".into());
        drop(second);
        admission
            .reserve(a.clone())
            .expect("a failed initialize gave its slot back")
            .bind("s2".into());
        admission.closed("s1");
        admission.closed("s1");
        admission
            .reserve(a.clone())
            .expect("closed once, freed once")
            .bind("s4".into());
        assert_eq!(admission.sessions(), 3);
    }

    #[test]
    fn the_gateway_past_its_sessions_refuses_every_token() {
        let admission = Admission::new(limits(1, 5, 1));
        admission
            .reserve(TokenKey::Anyone)
            .expect("one")
            .bind("s".into());
        assert_eq!(
            admission.reserve(TokenKey::Static(3)).unwrap_err(),
            Full::Sessions(1)
        );
    }

    #[test]
    fn requests_past_the_bound_are_refused_per_session_only() {
        let admission = Admission::new(limits(10, 10, 2));
        let one = Flow::Session("one".into());
        let _a = admission.enter(one.clone()).expect("a");
        let b = admission.enter(one.clone()).expect("b");
        assert_eq!(admission.enter(one.clone()).unwrap_err(), Full::Requests(2));
        let _other = admission
            .enter(Flow::Session("two".into()))
            .expect("another session is not affected");
        drop(b);
        let _c = admission
            .enter(one)
            .expect("a finished request frees its slot");
    }
}
