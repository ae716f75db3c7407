//! What every host session of the gateway shares: the `shared` upstreams, and the table of live
//! hosts that their notifications fan out to.
//!
//! # Invariants
//!
//! 1. A host gets a shared upstream's log message only at or above the level it set (all of
//!    them if it set none), a resource update only for a URI it subscribed to, and every list
//!    change; through its own bounded outbox, so a slow host costs only itself.
//! 2. A session removed from the table has its own (`per_host`) upstreams shut down by a task
//!    the hub owns and awaits in [`Hub::shutdown`].

// Logging is deprecated by SEP-2577, but hosts and servers of the session era use it.
#![allow(deprecated)]

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, MutexGuard, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
};

use rmcp::model::ServerNotification;
use tokio::task::JoinHandle;

use crate::{
    Mode, ProxyOptions,
    host::{Fanout, HostLink, Target, for_host, handlers},
    shared::Shared,
    upstreams::Upstreams,
};
use mcp_resilient::ServerConfig;

/// The shared upstreams and the live hosts.
#[derive(Debug)]
pub(in crate::http) struct Hub {
    pub(in crate::http) common: Arc<Upstreams>,
    pub(in crate::http) hosts: Arc<Hosts>,
}

/// The live hosts: host sessions by id, and 2026-07-28 listen streams.
#[derive(Debug)]
pub(in crate::http) struct Hosts {
    mode: Mode,
    table: Mutex<HashMap<HostKey, Entry>>,
    listens: AtomicU64,
    /// Sessions being shut down (their `per_host` upstreams).
    closing: Mutex<Vec<JoinHandle<()>>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum HostKey {
    Session(String),
    Listen(u64),
}

#[derive(Debug)]
struct Entry {
    link: Arc<HostLink>,
    /// A session's state (its own upstreams); none for a listen stream.
    shared: Option<Arc<Shared>>,
    /// Drains the session's outbox to its streams.
    writer: Option<JoinHandle<()>>,
}

/// Keeps a listen stream in the table while it lives.
#[derive(Debug)]
pub(in crate::http) struct Listening {
    hosts: Arc<Hosts>,
    key: HostKey,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.hosts.lock().remove(&self.key);
    }
}

impl Hub {
    /// Starts the shared upstreams (their notifications fan out to the hosts) and waits up to
    /// the startup wait for them.
    pub(in crate::http) async fn start(
        configs: Vec<ServerConfig>,
        mode: Mode,
        options: &ProxyOptions,
    ) -> Result<Hub, crate::upstreams::StartFailed> {
        let hosts = Arc::new(Hosts::new(mode));
        let target = Target::Shared(hosts.clone());
        let common =
            Upstreams::start(configs, options, |callers| handlers(target, callers, mode)).await?;
        common.wait_ready(options.startup_wait).await;
        Ok(Hub {
            common: Arc::new(common),
            hosts,
        })
    }

    /// Transparent or aggregated.
    pub(in crate::http) fn mode(&self) -> Mode {
        self.hosts.mode
    }

    /// Closes every session (their own upstreams shut down), then the shared upstreams.
    pub(in crate::http) async fn shutdown(&self) {
        let ids: Vec<String> = self
            .hosts
            .lock()
            .keys()
            .filter_map(|key| match key {
                HostKey::Session(id) => Some(id.clone()),
                HostKey::Listen(_) => None,
            })
            .collect();
        for id in ids {
            self.hosts.close(&id);
        }
        let closing = std::mem::take(
            &mut *self
                .hosts
                .closing
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        futures::future::join_all(closing).await;
        self.common.shutdown().await;
    }
}

impl Hosts {
    /// No host yet.
    pub(in crate::http) fn new(mode: Mode) -> Self {
        Self {
            mode,
            table: Mutex::new(HashMap::new()),
            listens: AtomicU64::new(0),
            closing: Mutex::new(Vec::new()),
        }
    }

    /// Adds an initialized host session, whose outbox `writer` drains (the own front has none
    /// while the host holds no stream: `gateway/src/http/own/`).
    pub(in crate::http) fn register(
        &self,
        id: String,
        shared: Arc<Shared>,
        writer: Option<JoinHandle<()>>,
    ) {
        let entry = Entry {
            link: shared.link.clone(),
            shared: Some(shared),
            writer,
        };
        if let Some(old) = self.lock().insert(HostKey::Session(id), entry) {
            self.retire(old);
        }
    }

    /// Session `id` ended: it leaves the table and its own upstreams are shut down (invariant
    /// 2). Once; later calls do nothing.
    pub(in crate::http) fn close(&self, id: &str) {
        let entry = self.lock().remove(&HostKey::Session(id.to_owned()));
        if let Some(entry) = entry {
            self.retire(entry);
        }
    }

    /// Whether session `id` is in the table.
    pub(in crate::http) fn has(&self, id: &str) -> bool {
        self.lock().contains_key(&HostKey::Session(id.to_owned()))
    }

    /// Live host sessions.
    pub(in crate::http) fn sessions(&self) -> usize {
        let table = self.lock();
        table
            .keys()
            .filter(|key| matches!(key, HostKey::Session(_)))
            .count()
    }

    /// Live host sessions by the revision they initialized with, and the 2026-07-28 listen
    /// streams open (for the status page).
    pub(in crate::http) fn revisions(&self) -> (Vec<(String, usize)>, usize) {
        let links: Vec<(bool, Arc<HostLink>)> = (self.lock().iter())
            .map(|(key, entry)| (matches!(key, HostKey::Listen(_)), entry.link.clone()))
            .collect();
        let mut by: std::collections::BTreeMap<String, usize> = Default::default();
        let mut listens = 0;
        for (listen, link) in links {
            if listen {
                listens += 1;
                continue;
            }
            let revision = link.protocol().unwrap_or_else(|| "unknown".into());
            *by.entry(crate::calls::bounded(&revision, 32)).or_default() += 1;
        }
        (by.into_iter().collect(), listens)
    }

    /// Adds a listen stream's host while the guard lives.
    pub(in crate::http) fn listen(self: &Arc<Self>, link: Arc<HostLink>) -> Listening {
        let key = HostKey::Listen(self.listens.fetch_add(1, Ordering::Relaxed));
        let entry = Entry {
            link,
            shared: None,
            writer: None,
        };
        self.lock().insert(key.clone(), entry);
        Listening {
            hosts: self.clone(),
            key,
        }
    }

    fn retire(&self, entry: Entry) {
        entry.link.outbox.close();
        let task = tokio::spawn(async move {
            if let Some(shared) = entry.shared {
                shared.shutdown().await;
            }
            if let Some(writer) = entry.writer {
                writer.abort();
            }
        });
        let mut closing = self.closing.lock().unwrap_or_else(PoisonError::into_inner);
        closing.retain(|task| !task.is_finished());
        closing.push(task);
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<HostKey, Entry>> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Fanout for Hosts {
    fn notify(&self, server: &Arc<str>, notification: ServerNotification) {
        let Some(notification) = for_host(server, self.mode, notification) else {
            return;
        };
        let links: Vec<Arc<HostLink>> = self
            .lock()
            .values()
            .filter(|entry| wants(&entry.link, &notification))
            .map(|entry| entry.link.clone())
            .collect();
        for link in links {
            link.outbox.notify(notification.clone());
        }
    }
}

/// Whether `link`'s host is told `notification` (invariant 1).
fn wants(link: &HostLink, notification: &ServerNotification) -> bool {
    match notification {
        ServerNotification::LoggingMessageNotification(message) => link
            .level()
            .is_none_or(|level| message.params.level as u8 >= level as u8),
        ServerNotification::ResourceUpdatedNotification(updated) => {
            link.subscribed(&updated.params.uri)
        }
        _ => true,
    }
}
