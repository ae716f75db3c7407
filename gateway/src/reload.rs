//! A set of upstreams takes a new list of servers while it serves: servers added, removed or
//! changed; the unchanged ones are not touched (their generations, their hosts' subscriptions
//! and calls go on).
//!
//! # Invariants
//!
//! 1. A place in the list is one server's for the set's life: a changed server's replacement
//!    takes its place, a new server takes the place of a removed one of its name or a new
//!    place at the end, a removed server's place stays (its upstream retired: keeper ended,
//!    supervisor shut down, tools unregistered). What routes by place (resources, prompts)
//!    and the host sessions that hold the list stay right.
//! 2. At most [`MAX_PLACES`] places: a reload that needs more is refused, and changes nothing.
//! 3. A server whose configuration compares equal is unchanged: its upstream is the same
//!    object before and after.

use std::sync::{Arc, PoisonError};

use mcp_resilient::{ServerConfig, host::HostHandlers};

use super::{
    ProxyOptions,
    host::{CallerMap, Callers},
    upstreams::{StartFailed, Upstreams, spawn},
};

/// The most places a set's list may have (servers ever configured in it, by name).
pub(crate) const MAX_PLACES: usize = 1024;

/// What a reload did, by server name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Change {
    pub(crate) added: Vec<String>,
    pub(crate) removed: Vec<String>,
    pub(crate) changed: Vec<String>,
    pub(crate) unchanged: Vec<String>,
}

/// Why a reload changed nothing, or what went wrong while it changed something.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// The new list needs more than [`MAX_PLACES`] places.
    TooManyPlaces,
    /// A new supervisor could not be started: the servers before it in the list were
    /// changed, it and those after were not.
    Start(StartFailed),
}

impl Upstreams {
    /// Takes `configs` as the set's servers (invariants 1 to 3). `transparent`: the one server
    /// always takes the first place, whatever its name. New upstreams get `handlers` and
    /// their keepers.
    pub(crate) async fn reload(
        &self,
        configs: Vec<ServerConfig>,
        options: &ProxyOptions,
        transparent: bool,
        handlers: impl Fn(Arc<CallerMap>) -> HostHandlers,
    ) -> Result<Change, Refusal> {
        let before = self
            .configured
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let list = self.list();
        let place_of = |name: &str| match transparent {
            true => Some(0),
            false => list.iter().position(|u| u.name() == name),
        };
        let new_places = (configs.iter())
            .filter(|c| place_of(c.name()).is_none())
            .count();
        if list.len() + new_places > MAX_PLACES {
            return Err(Refusal::TooManyPlaces);
        }
        let mut change = Change::default();
        for old in &before {
            if !configs.iter().any(|c| c.name() == old.name()) {
                change.removed.push(old.name().to_owned());
            }
        }
        // Removed first: a new server may take a removed one's name (and, transparent, place).
        for name in &change.removed {
            if let Some(upstream) = list.iter().find(|u| u.name() == name && !u.retired()) {
                upstream.retire();
                upstream.supervisor.shutdown().await;
            }
        }
        for config in configs {
            let name = config.name().to_owned();
            let old = before.iter().find(|c| c.name() == name);
            if old == Some(&config) && place_of(&name).is_some_and(|p| !list[p].retired()) {
                change.unchanged.push(name);
                continue;
            }
            match old {
                Some(_) => change.changed.push(name.clone()),
                None => change.added.push(name.clone()),
            }
            if let Some(place) = place_of(&name)
                && let Some(upstream) = self.list().get(place).filter(|u| !u.retired())
            {
                // The registry holds one set per name: the old one goes before the new one comes.
                upstream.retire();
                upstream.supervisor.shutdown().await;
            }
            let calls = Arc::new(Callers::default());
            let map: CallerMap = [(name.clone(), calls.clone())].into_iter().collect();
            let handlers = handlers(Arc::new(map));
            let upstream = spawn(
                config.clone(),
                options,
                &handlers,
                calls,
                &self.registry,
                &self.stop,
            )
            .map_err(Refusal::Start)?;
            self.place(upstream.clone(), place_of(&name));
            let keeper = tokio::spawn(upstream.keep());
            let mut keepers = self.keepers.lock().unwrap_or_else(PoisonError::into_inner);
            keepers.retain(|k| !k.is_finished());
            keepers.push(keeper);
            let mut configured = self
                .configured
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            configured.retain(|c| c.name() != name && !transparent);
            configured.push(config);
        }
        let mut configured = self
            .configured
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        configured.retain(|c| !change.removed.iter().any(|r| r == c.name()));
        Ok(change)
    }

    /// Puts `upstream` at `place` (replacing what was there), or at the end.
    fn place(&self, upstream: Arc<crate::upstream::Upstream>, place: Option<usize>) {
        let mut list = self.list.write().unwrap_or_else(PoisonError::into_inner);
        let mut next: Vec<_> = list.iter().cloned().collect();
        match place.filter(|p| *p < next.len()) {
            Some(place) => next[place] = upstream,
            None => next.push(upstream),
        }
        *list = Arc::new(next);
    }
}
