//! Liveness per origin: the group of this process's sessions to one server endpoint whose
//! heartbeats share one probe per interval ([`HeartbeatScope::Origin`]).
//!
//! There is no task per group: each member's heartbeat keeps its own timer, and when its turn
//! comes it first looks at the group's last answer ([`OriginProof::answered_within`]). An
//! answer less than an interval old proves the member alive and it sends nothing; otherwise it
//! probes for itself and, answered, stamps the group ([`OriginProof::answered`]). So the member
//! whose turn comes first after the last answer goes stale probes for everyone, and a group of
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
//!
//! [`HeartbeatScope`]: crate::config::HeartbeatScope
//! [`HeartbeatScope::Origin`]: crate::config::HeartbeatScope::Origin

use std::{
    collections::HashMap,
    sync::{Arc, LazyLock, Mutex, PoisonError, Weak},
    time::Duration,
};

use tokio::time::Instant;

/// What makes two sessions members of one group: the endpoint, and the heartbeat settings
/// (a member with a shorter interval must not trust an answer as old as a longer one allows).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    endpoint: String,
    interval: Duration,
    timeout: Duration,
}

/// The last answer to a probe of one group (invariant 1).
#[derive(Debug, Default)]
pub(in crate::supervisor) struct OriginProof {
    /// When a probe of a member was last answered; written by [`OriginProof::answered`] only.
    last: Mutex<Option<Instant>>,
}

impl OriginProof {
    /// A member's probe was answered now.
    pub(in crate::supervisor) fn answered(&self) {
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
    }

    /// True when a member's probe was answered less than `within` ago.
    pub(in crate::supervisor) fn answered_within(&self, within: Duration) -> bool {
        let last = *self.last.lock().unwrap_or_else(PoisonError::into_inner);
        last.is_some_and(|at| at.elapsed() < within)
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
        assert!(!group.proof.answered_within(S), "nothing answered yet");
        group.proof.answered();
        tokio::time::advance(S / 2).await;
        assert!(group.proof.answered_within(S));
        tokio::time::advance(S / 2).await;
        assert!(!group.proof.answered_within(S), "an interval old: stale");
    }
}
