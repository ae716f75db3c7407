//! Liveness per origin: the group of this process's sessions to one server endpoint whose
//! heartbeats share one probe per interval ([`HeartbeatScope::Origin`]).
//!
//! There is no task per group: each member's heartbeat keeps its own timer, and when its turn
//! comes it first looks at the group's last answer ([`OriginBeat::turn`]). An answer less than
//! an interval old proves the member alive and it sends nothing; otherwise it probes and,
//! answered, stamps the group. So the member whose turn comes first after the last answer went
//! stale probes for everyone, and a group of
//! N members sends about one probe per interval, plus the members' own checks (one each per
//! `session_check_every` intervals), instead of N. What that proves and what it does not is
//! said on [`HeartbeatScope`].
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
    collections::HashMap,
    sync::{Arc, LazyLock, Mutex, PoisonError, Weak},
    time::Duration,
};

use tokio::{sync::Notify, time::Instant};

/// What makes two sessions members of one group: the endpoint, and the heartbeat settings
/// (a member with a shorter interval must not trust an answer as old as a longer one allows).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    endpoint: String,
    interval: Duration,
    timeout: Duration,
}

/// The last answer to a probe of one group (invariant 1), and the probe under way for it.
#[derive(Debug, Default)]
pub(in crate::supervisor) struct OriginProof {
    state: Mutex<ProofState>,
    /// Woken when the probe under way for the group ends, whatever its outcome.
    done: Notify,
}

#[derive(Debug, Default, Clone, Copy)]
struct ProofState {
    /// When a probe of a member was last answered.
    last: Option<Instant>,
    /// When the member probing for the group sent its probe (invariant 3); `None` when nobody
    /// does, and stale after one probe timeout (its member's task may have ended).
    probing: Option<Instant>,
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
    fn state(&self) -> std::sync::MutexGuard<'_, ProofState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A member's own probe was answered now.
    pub(in crate::supervisor) fn answered(&self) {
        self.state().last = Some(Instant::now());
    }

    /// The probe a member sent for the group ended, `answered` or not (invariant 3).
    pub(in crate::supervisor) fn finished(&self, answered: bool) {
        let mut state = self.state();
        state.probing = None;
        if answered {
            state.last = Some(Instant::now());
        }
        drop(state);
        self.done.notify_waiters();
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

/// One member's place in its group.
#[derive(Debug, Clone)]
pub(in crate::supervisor) struct OriginBeat {
    pub(in crate::supervisor) proof: Arc<OriginProof>,
    /// The member's own probe goes out once in this many of its intervals, at least.
    pub(in crate::supervisor) check_every: u32,
    /// The heartbeat's probe timeout: how long a probe for the group is waited for.
    timeout: Duration,
}

/// The group of the sessions to `url` with this heartbeat's `interval` and `timeout`, joined
/// (invariant 2). `None` for a URL that is not `http` or `https`.
pub(in crate::supervisor) fn join(
    url: &url::Url,
    interval: Duration,
    timeout: Duration,
    check_every: u32,
) -> Option<OriginBeat> {
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let endpoint = format!(
        "{}://{}:{}{}",
        url.scheme(),
        url.host_str()?,
        url.port_or_known_default()?,
        url.path()
    );
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
            let proof = Arc::new(OriginProof::default());
            groups.insert(key, Arc::downgrade(&proof));
            proof
        }
    };
    Some(OriginBeat {
        proof,
        check_every: check_every.max(1),
        timeout,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> url::Url {
        url::Url::parse(s).unwrap()
    }

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn sessions_to_one_endpoint_with_one_heartbeat_share_a_group() {
        let a = join(&url("http://127.0.0.1:9/mcp"), S, S / 3, 20).unwrap();
        let b = join(&url("http://127.0.0.1:9/mcp?x=1"), S, S / 3, 20).unwrap();
        assert!(Arc::ptr_eq(&a.proof, &b.proof));
        let other_path = join(&url("http://127.0.0.1:9/other"), S, S / 3, 20).unwrap();
        let other_interval = join(&url("http://127.0.0.1:9/mcp"), 2 * S, S / 3, 20).unwrap();
        assert!(!Arc::ptr_eq(&a.proof, &other_path.proof));
        assert!(!Arc::ptr_eq(&a.proof, &other_interval.proof));
        assert!(join(&url("file:///tmp/x"), S, S / 3, 20).is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_proves_the_group_alive_for_one_interval() {
        let group = join(&url("http://127.0.0.1:9/paused"), S, S / 3, 20).unwrap();
        assert_eq!(group.turn(S).await, Turn::Probe { for_group: true });
        group.proof.finished(true);
        tokio::time::advance(S / 2).await;
        assert_eq!(group.turn(S).await, Turn::Proven);
        tokio::time::advance(S / 2).await;
        assert!(!group.proof.answered_within(S), "an interval old: stale");
    }

    #[tokio::test(start_paused = true)]
    async fn a_turn_during_the_groups_probe_waits_for_its_outcome() {
        let url = url("http://127.0.0.1:9/waits");
        let prober = join(&url, S, S / 3, 20).unwrap();
        let member = join(&url, S, S / 3, 20).unwrap();
        assert_eq!(prober.turn(S).await, Turn::Probe { for_group: true });
        let waiting = tokio::spawn(async move { member.turn(S).await });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "waits for the probe under way");
        prober.proof.finished(true);
        assert_eq!(waiting.await.unwrap(), Turn::Proven);
    }

    #[tokio::test(start_paused = true)]
    async fn an_unanswered_group_probe_leaves_each_member_to_probe_for_itself() {
        let url = url("http://127.0.0.1:9/unanswered");
        let prober = join(&url, S, S / 3, 20).unwrap();
        let member = join(&url, S, S / 3, 20).unwrap();
        assert_eq!(prober.turn(S).await, Turn::Probe { for_group: true });
        let waiting = tokio::spawn(async move { member.turn(S).await });
        tokio::task::yield_now().await;
        prober.proof.finished(false);
        assert_eq!(waiting.await.unwrap(), Turn::Probe { for_group: false });
        // A claim whose probe never told how it ended goes stale after one probe timeout.
        let other = join(&url, S, S / 3, 20).unwrap();
        assert_eq!(other.turn(S).await, Turn::Probe { for_group: true });
        let late = join(&url, S, S / 3, 20).unwrap();
        assert_eq!(late.turn(S).await, Turn::Probe { for_group: false });
    }
}
