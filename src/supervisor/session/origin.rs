//! Liveness per origin: the group of this process's sessions to one server endpoint whose
//! heartbeats share one probe per interval ([`HeartbeatScope::Origin`]).
//!
//! When a member's turn comes it first looks at the group's last answer ([`OriginBeat::turn`]).
//! An answer less than an interval old proves the member alive and it sends nothing; otherwise
//! it probes and, answered, stamps the group. A member the group proved alive then rests in the
//! group ([`super::origin_rest`]) instead of waking every interval. A group of N members sends
//! about one probe per interval, plus the members' own checks (one each per
//! `session_check_every` intervals), instead of N, and wakes about as often. What that proves
//! and what it does not is said on [`HeartbeatScope`].
//!
//! Why an endpoint (origin and path) and not the origin alone: two endpoints of one origin can
//! be two servers behind one proxy, and one answering proves nothing about the other.
//!
//! # Invariants
//!
//! 1. Only an answer to a probe stamps a group: a result, a JSON-RPC error, "overloaded". A
//!    miss, a death or a probe not sent leaves the stamp as it was, so the stamp goes stale an
//!    interval after the last answer and every member then probes for itself.
//! 2. One group per key while any member holds it; the map keeps groups weakly.
//! 3. At most one member probes for the group at a time. A member whose turn comes while that
//!    probe is under way waits for its outcome (at most one probe timeout) instead of sending
//!    its own; when it went unanswered, the member probes for itself, as every member does
//!    while the group's answer is stale: a hung origin is found by each session at most one
//!    interval (the last answer's proof) and one probe timeout (the wait) later than with
//!    per-session probing.
//!
//! [`HeartbeatScope`]: crate::config::HeartbeatScope
//! [`HeartbeatScope::Origin`]: crate::config::HeartbeatScope::Origin

use std::{
    collections::{BTreeMap, HashMap},
    sync::{
        Arc, LazyLock, Mutex, MutexGuard, PoisonError, Weak,
        atomic::{AtomicU64, AtomicUsize, Ordering},
    },
    time::Duration,
};

use tokio::{sync::Notify, task::JoinHandle, time::Instant};

use super::resting::{Resting, Woke};

/// What makes two sessions members of one group: the endpoint, and the heartbeat settings
/// (a member with a shorter interval must not trust an answer as old as a longer one allows).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    endpoint: String,
    interval: Duration,
    timeout: Duration,
}

/// The last answer to a probe of one group (invariant 1), the probe under way for it, and its
/// resting members ([`super::origin_rest`]).
#[derive(Debug)]
pub(in crate::supervisor) struct OriginProof {
    state: Mutex<ProofState>,
    /// Woken when the probe under way for the group ends, whatever its outcome.
    done: Notify,
    /// The group's heartbeat interval (how long an answer proves it alive) and probe timeout.
    pub(super) interval: Duration,
    pub(super) timeout: Duration,
    /// The members holding the group ([`OriginBeat`]s not dropped).
    members: AtomicUsize,
    /// Wakes the group's timer ([`super::origin_rest`]); its own allocation, so that the timer
    /// holds the group weakly.
    pub(super) poke: Arc<Notify>,
    /// The group's timer; aborted with the group.
    timer: Mutex<Option<JoinHandle<()>>>,
    /// Heartbeat wake-ups of the members and the timer, and group probes that went unanswered:
    /// what the tests' hook reads ([`counts`]).
    pub(super) wakes: AtomicU64,
    unanswered: AtomicU64,
}

#[derive(Debug, Default)]
pub(super) struct ProofState {
    /// When a probe of a member was last answered.
    pub(super) last: Option<Instant>,
    /// When the member probing for the group sent its probe (invariant 3); `None` when nobody
    /// does, and stale after one probe timeout (its member's task may have ended).
    pub(super) probing: Option<Instant>,
    /// When the timer last handed the group's probe to a resting member.
    pub(super) asked: Option<Instant>,
    /// The members resting in the group, by the order they lay down.
    pub(super) resting: BTreeMap<u64, Arc<Resting>>,
    /// The key of the next member to lie down.
    pub(super) next_rest: u64,
    /// The timer waits for a member to lie down: the next one pokes it.
    pub(super) timer_waits: bool,
}

impl Drop for OriginProof {
    fn drop(&mut self) {
        if let Some(timer) = self.timer().take() {
            timer.abort();
        }
    }
}

/// What a member does at its turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::supervisor) enum Turn {
    /// The group was answered less than an interval ago: nothing to send.
    Proven,
    /// Probe for itself; `for_group` when it probes for the group too, and must tell how it
    /// ended ([`OriginProof::finished`]).
    Probe { for_group: bool },
}

impl OriginProof {
    fn new(interval: Duration, timeout: Duration) -> Self {
        OriginProof {
            state: Mutex::default(),
            done: Notify::new(),
            interval,
            timeout,
            members: AtomicUsize::new(0),
            poke: Arc::new(Notify::new()),
            timer: Mutex::new(None),
            wakes: AtomicU64::new(0),
            unanswered: AtomicU64::new(0),
        }
    }

    pub(super) fn state(&self) -> MutexGuard<'_, ProofState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn timer(&self) -> MutexGuard<'_, Option<JoinHandle<()>>> {
        self.timer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many members hold the group.
    pub(super) fn members(&self) -> usize {
        self.members.load(Ordering::Relaxed)
    }

    /// A member's own probe was answered now.
    pub(in crate::supervisor) fn answered(&self) {
        self.state().last = Some(Instant::now());
    }

    /// The probe a member sent for the group ended, `answered` or not (invariant 3). Unanswered,
    /// it wakes every resting member to probe for itself at its next turn.
    pub(in crate::supervisor) fn finished(&self, answered: bool) {
        let mut state = self.state();
        state.probing = None;
        let resting = match answered {
            true => {
                state.last = Some(Instant::now());
                BTreeMap::new()
            }
            false => std::mem::take(&mut state.resting),
        };
        drop(state);
        self.done.notify_waiters();
        if !answered {
            self.unanswered.fetch_add(1, Ordering::Relaxed);
            resting.values().for_each(|member| member.wake(Woke::Stale));
        }
    }

    /// True when a member's probe was answered less than `within` ago.
    pub(in crate::supervisor) fn answered_within(&self, within: Duration) -> bool {
        self.state().last.is_some_and(|at| at.elapsed() < within)
    }
}

impl OriginBeat {
    /// This member's turn (invariant 3): proven by an answer less than `interval` old; else,
    /// when another member's probe for the group is under way, its outcome is waited for (at
    /// most the probe timeout) and, unanswered, this member probes for itself; else it probes
    /// for the group.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: a claim left by a dropped probe goes stale after one probe timeout.
    pub(in crate::supervisor) async fn turn(&self, interval: Duration) -> Turn {
        // The common case first, without registering for the outcome of a probe.
        if self.proof.answered_within(interval) {
            return Turn::Proven;
        }
        let done = self.proof.done.notified();
        tokio::pin!(done);
        // Registered before the state is read, so a probe that ends meanwhile wakes us.
        done.as_mut().enable();
        let waited = {
            let mut state = self.proof.state();
            if state.last.is_some_and(|at| at.elapsed() < interval) {
                return Turn::Proven;
            }
            match state.probing {
                Some(sent) if sent.elapsed() < self.timeout => self.timeout - sent.elapsed(),
                _ => {
                    state.probing = Some(Instant::now());
                    return Turn::Probe { for_group: true };
                }
            }
        };
        let _ = tokio::time::timeout(waited, done).await;
        match self.proof.answered_within(interval) {
            true => Turn::Proven,
            false => Turn::Probe { for_group: false },
        }
    }
}

type Groups = Mutex<HashMap<Key, Weak<OriginProof>>>;

/// Every group some member holds (invariant 2).
static GROUPS: LazyLock<Groups> = LazyLock::new(Groups::default);

/// One member's place in its group; dropped, it leaves the group.
#[derive(Debug)]
pub(in crate::supervisor) struct OriginBeat {
    pub(in crate::supervisor) proof: Arc<OriginProof>,
    /// The member's own probe goes out once in this many of its intervals, at least.
    pub(in crate::supervisor) check_every: u32,
    /// The heartbeat's probe timeout: how long a probe for the group is waited for.
    timeout: Duration,
}

impl Drop for OriginBeat {
    fn drop(&mut self) {
        self.proof.members.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The group of the sessions to `url` with this heartbeat's `interval` and `timeout`, joined
/// (invariant 2). `None` for a URL that is not `http` or `https`.
pub(in crate::supervisor) fn join(
    url: &url::Url,
    interval: Duration,
    timeout: Duration,
    check_every: u32,
) -> Option<OriginBeat> {
    let endpoint = endpoint(url)?;
    let key = Key {
        endpoint,
        interval,
        timeout,
    };
    let mut groups = GROUPS.lock().unwrap_or_else(PoisonError::into_inner);
    let proof = match groups.get(&key).and_then(Weak::upgrade) {
        Some(proof) => proof,
        None => {
            groups.retain(|_, group| group.strong_count() > 0);
            let proof = Arc::new(OriginProof::new(interval, timeout));
            groups.insert(key, Arc::downgrade(&proof));
            proof
        }
    };
    proof.members.fetch_add(1, Ordering::Relaxed);
    Some(OriginBeat {
        proof,
        check_every: check_every.max(1),
        timeout,
    })
}

/// What names a group's endpoint: scheme, host, port and path. `None` unless `http` or `https`.
fn endpoint(url: &url::Url) -> Option<String> {
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    Some(format!(
        "{}://{}:{}{}",
        url.scheme(),
        url.host_str()?,
        url.port_or_known_default()?,
        url.path()
    ))
}

/// What the live groups of `url`'s endpoint did, summed over their heartbeat settings:
/// (heartbeat wake-ups, group probes unanswered, members resting now). For the tests' hook only.
#[cfg_attr(not(feature = "test-hooks"), allow(dead_code))]
pub(in crate::supervisor) fn counts(url: &url::Url) -> (u64, u64, u64) {
    let mut counts = (0, 0, 0);
    let Some(endpoint) = endpoint(url) else {
        return counts;
    };
    let groups = GROUPS.lock().unwrap_or_else(PoisonError::into_inner);
    let live = groups
        .iter()
        .filter(|(key, _)| key.endpoint == endpoint)
        .filter_map(|(_, group)| group.upgrade());
    for group in live {
        counts.0 += group.wakes.load(Ordering::Relaxed);
        counts.1 += group.unanswered.load(Ordering::Relaxed);
        counts.2 += group.state().resting.len() as u64;
    }
    counts
}

#[cfg(test)]
#[path = "origin_tests.rs"]
mod tests;
