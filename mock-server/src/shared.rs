//! State shared by every session of one mock server (one process, or one in-process `MockServer`).
//!
//! # Invariants
//!
//! 1. `tools` is only changed by [`Shared::set_tools`]; a change is visible to the next
//!    `tools/list` of every session.
//! 2. `hang` only goes from `false` to `true` through the `hang` tool or `/_mock/hang`, and back
//!    only through `/_mock/unhang`; every outgoing path (stdio transport, HTTP bodies) checks it.
//! 3. Every outgoing path also waits in `block.hold()` (see [`crate::block`]).
//! 4. `exit_after_list` is taken (set to `false`) by the first `tools/list`, so only that reply
//!    arms the exit.
//! 5. `methods` counts every JSON-RPC request when it arrives (stdio: when read; remote: at the
//!    gate, before any fault answers it), never a notification or a response.
//! 6. A notifying `set_tools` reaches every initialized legacy session and every live
//!    `subscriptions/listen` subscription that asked for tools `list_changed` (see
//!    [`crate::listen`]).
//! 7. A counter bump is visible to `resources/read` before any `resources/updated` it causes is
//!    sent, and that notification reaches every live initialize-era subscriber of
//!    `mock://counter` ([`crate::subscribers`]) and every listen subscription whose filter
//!    accepted it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError, RwLock};

use rmcp::{Peer, RoleServer};
use tokio::sync::watch;

use crate::block::Block;
use crate::confirm::Nonces;
use crate::crash::CrashSwitch;
use crate::listen::Listens;
use crate::logging::LastLevel;
use crate::notify;
use crate::resources::COUNTER;
use crate::set_tools::SetTools;
use crate::subscribers::Subscribers;
use crate::tools::ToolSet;

/// The state every session of one server shares (see the module docs).
pub(crate) struct Shared {
    pub(crate) boot_id: String,
    pub(crate) pid: u32,
    /// `tools/call` requests received so far; incremented by the handler only.
    calls: AtomicU64,
    /// The W3C `traceparent` the last `tools/call` carried in its `_meta`; set by the handler.
    traceparent: std::sync::Mutex<Option<String>>,
    /// Calls of cancellable tools that ended because their request was cancelled; incremented
    /// by those tools only.
    cancelled: AtomicU64,
    /// The value of `mock://counter`; changed only by [`Shared::bump_counter`].
    counter: watch::Sender<u64>,
    /// The level `logging/setLevel` set last; set by the handler only.
    pub(crate) log_level: LastLevel,
    /// Initialize-era resource subscriptions; changed by the handler only.
    pub(crate) subscribers: Subscribers,
    /// The last session number handed to a handler.
    sessions: AtomicU64,
    /// Requests received so far, by JSON-RPC method; incremented by the transports only.
    methods: Mutex<BTreeMap<String, u64>>,
    /// Answer `initialize` with `-32022` (a 2026-07-28-only server); set by the switch only.
    modern_only: AtomicBool,
    /// Refuse `subscriptions/listen` with `-32601` while still declaring `listChanged`, as an
    /// rmcp server does that never implements `accepted_subscription_filter`.
    refuse_listen: AtomicBool,
    /// The `ttlMs` every `tools/list` page carries; 0: none.
    list_ttl_ms: AtomicU64,
    /// How `server/discover` is refused (hostile kind `discover`); `None`: it is answered.
    pub(crate) discover: crate::hostile::discover::Switch,
    /// Live `subscriptions/listen` subscriptions.
    pub(crate) listens: Listens,
    /// `requestState` nonces of `confirm` calls waiting for their retry.
    pub(crate) confirms: Nonces,
    tools: RwLock<ToolSet>,
    /// Peers of initialized sessions; the handler adds, `notify_all` prunes closed ones.
    peers: Mutex<Vec<Peer<RoleServer>>>,
    hang: watch::Sender<bool>,
    /// Set by the `block` tool while it runs.
    pub(crate) block: Block,
    pub(crate) crash: CrashSwitch,
    /// Serving stdio (the `wedge` tool works only there); set once at construction.
    pub(crate) stdio: bool,
    /// `--exit-after-list` not yet used; taken by the first `tools/list`.
    exit_after_list: AtomicBool,
    /// The hostile kind `escapes` is on (see [`crate::hostile::escapes`]); set by its switch.
    pub(crate) escapes: AtomicBool,
}

impl Shared {
    pub(crate) fn new(boot_id: String, extra_tools: usize, crash: CrashSwitch) -> Self {
        Self {
            boot_id,
            pid: std::process::id(),
            calls: AtomicU64::new(0),
            traceparent: std::sync::Mutex::new(None),
            cancelled: AtomicU64::new(0),
            counter: watch::Sender::new(0),
            log_level: LastLevel::default(),
            subscribers: Subscribers::default(),
            sessions: AtomicU64::new(0),
            methods: Mutex::new(BTreeMap::new()),
            modern_only: AtomicBool::new(false),
            refuse_listen: AtomicBool::new(false),
            list_ttl_ms: AtomicU64::new(0),
            discover: Default::default(),
            listens: Listens::new(),
            confirms: Nonces::default(),
            tools: RwLock::new(ToolSet::with_extra(extra_tools)),
            peers: Mutex::new(Vec::new()),
            hang: watch::Sender::new(false),
            block: Block::new(),
            crash,
            stdio: false,
            exit_after_list: AtomicBool::new(false),
            escapes: AtomicBool::new(false),
        }
    }

    /// Marks the state as serving stdio; with `exit_after_list` the process exits (code 0)
    /// after its first `tools/list` reply has been flushed.
    pub(crate) fn for_stdio(mut self, exit_after_list: bool) -> Self {
        self.stdio = true;
        self.exit_after_list = AtomicBool::new(exit_after_list);
        self
    }

    /// `true` exactly once, for the first `tools/list`, when `--exit-after-list` was given.
    pub(crate) fn take_exit_after_list(&self) -> bool {
        self.exit_after_list.swap(false, Ordering::SeqCst)
    }

    /// Counts one call and returns the count including it.
    pub(crate) fn count_call(&self) -> u64 {
        self.calls.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Notes the `traceparent` of a `tools/call` (`None`: it carried none).
    pub(crate) fn note_traceparent(&self, traceparent: Option<&str>) {
        if let Ok(mut last) = self.traceparent.lock() {
            *last = traceparent.map(str::to_owned);
        }
    }

    pub(crate) fn traceparent(&self) -> Option<String> {
        self.traceparent.lock().ok().and_then(|last| last.clone())
    }

    pub(crate) fn calls(&self) -> u64 {
        self.calls.load(Ordering::SeqCst)
    }

    /// Counts one call of a cancellable tool (`sleep`, `block`, `progress`) that ended because
    /// its request was cancelled: by `notifications/cancelled`, by the client closing the
    /// request's response stream (2026-07-28 over HTTP), or by its session ending.
    pub(crate) fn count_cancelled(&self) {
        self.cancelled.fetch_add(1, Ordering::SeqCst);
    }

    pub(crate) fn cancelled(&self) -> u64 {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// A number no other handler of this server has.
    pub(crate) fn next_session(&self) -> u64 {
        self.sessions.fetch_add(1, Ordering::SeqCst) + 1
    }

    pub(crate) fn counter(&self) -> u64 {
        *self.counter.borrow()
    }

    /// Waits until `mock://counter` is above `value` (cancel safe: it only observes a watch).
    pub(crate) async fn counter_above(&self, value: u64) {
        // The sender lives as long as `self`: the wait ends only by a bump.
        let _ = self.counter.subscribe().wait_for(|now| *now > value).await;
    }

    /// Live resource subscriptions: initialize-era (session, URI) pairs plus the URIs accepted
    /// by running listen subscriptions.
    pub(crate) fn resource_subscriptions(&self) -> usize {
        self.subscribers.count() + self.listens.resource_subscriptions()
    }

    /// Adds one to `mock://counter`, then sends `notifications/resources/updated` for it to
    /// every subscriber; returns the new value.
    pub(crate) async fn bump_counter(&self) -> u64 {
        let mut value = 0;
        self.counter.send_modify(|now| {
            *now += 1;
            value = *now;
        });
        let peers = self.subscribers.of(COUNTER);
        let sinks = self.listens.resource_updated(COUNTER);
        notify::resource_updated(COUNTER, peers, sinks).await;
        value
    }

    /// Counts one request of `method`.
    pub(crate) fn count_method(&self, method: &str) {
        let mut methods = self.methods.lock().unwrap_or_else(PoisonError::into_inner);
        *methods.entry(method.to_owned()).or_default() += 1;
    }

    /// Requests received so far, by JSON-RPC method.
    pub(crate) fn methods(&self) -> BTreeMap<String, u64> {
        self.methods
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn set_modern_only(&self, on: bool) {
        self.modern_only.store(on, Ordering::SeqCst);
    }

    pub(crate) fn modern_only(&self) -> bool {
        self.modern_only.load(Ordering::SeqCst)
    }

    pub(crate) fn set_refuse_listen(&self, on: bool) {
        self.refuse_listen.store(on, Ordering::SeqCst);
    }

    pub(crate) fn refuse_listen(&self) -> bool {
        self.refuse_listen.load(Ordering::SeqCst)
    }

    /// Sets the `ttlMs` of `tools/list` pages from now on (`None`: leave it out).
    pub(crate) fn set_list_ttl(&self, ttl: Option<std::time::Duration>) {
        let ms = ttl.map_or(0, |ttl| u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
        self.list_ttl_ms.store(ms, Ordering::SeqCst);
    }

    pub(crate) fn list_ttl_ms(&self) -> Option<u64> {
        Some(self.list_ttl_ms.load(Ordering::SeqCst)).filter(|ms| *ms > 0)
    }

    /// Ends every live subscription: gracefully (its final result), or abruptly (see
    /// [`crate::listen`], invariant 4).
    pub(crate) fn end_listens(&self, graceful: bool) {
        match graceful || self.stdio {
            true => self.listens.end(graceful),
            false => self.listens.cut(),
        }
    }

    pub(crate) fn tools(&self) -> ToolSet {
        self.tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn set_hang(&self, on: bool) {
        self.hang.send_replace(on);
    }

    pub(crate) fn is_hung(&self) -> bool {
        *self.hang.borrow()
    }

    /// Resolves once the server is not hung.
    ///
    /// # Cancel safety
    /// Cancel safe: it only observes a watch channel.
    pub(crate) async fn wait_unhung(&self) {
        let mut rx = self.hang.subscribe();
        // The sender lives in `self`, so `wait_for` cannot fail while we borrow it.
        let _ = rx.wait_for(|hung| !*hung).await;
    }

    pub(crate) fn add_peer(&self, peer: Peer<RoleServer>) {
        self.peers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(peer);
    }

    /// Open sessions that finished `initialize` and whose transport is still up.
    pub(crate) fn live_peers(&self) -> Vec<Peer<RoleServer>> {
        let mut peers = self.peers.lock().unwrap_or_else(PoisonError::into_inner);
        peers.retain(|peer| !peer.is_transport_closed());
        peers.clone()
    }

    /// Applies a tool-set change, then (if asked) notifies every live session; returns the new
    /// number of tools.
    pub(crate) async fn set_tools(&self, change: &SetTools) -> usize {
        let count = self
            .tools
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .apply(&change.add, &change.remove);
        if change.notify {
            notify::tools_changed(self.live_peers(), self.listens.tools_changed()).await;
        }
        count
    }
}
