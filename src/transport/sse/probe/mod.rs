//! Legacy SSE's direct probe (see [`crate::transport::direct`]): `ping` POSTed to the session's
//! endpoint as any message is, its answer picked off the event stream by the reader
//! ([`Waiting::take`]) before anything is decoded for rmcp.
//!
//! Through rmcp the answer is decoded as any server message (serde's untagged buffering, a miss
//! made and dropped per variant tried) and goes through the session loop and a responder; here
//! the reader looks for the probe's mark only while a probe waits, reads the envelope from a
//! borrowed view of the bytes, and completes the probe's one-shot.
//!
//! # Invariants
//!
//! 1. Only an answer to a probe that is waiting is taken; every other message, an answer to a
//!    probe that gave up included, goes to rmcp's session as before (where a stray answer is
//!    dropped: its id is none of rmcp's).
//! 2. A taken answer stamps the session's activity as a message, as rmcp's path would.
//! 3. A probe never keeps the transport alive: it holds the poster weakly, and a stopped reader
//!    (a dead session) ends its wait. Nor does it keep the session's `Activity` alive, which
//!    holds it: the reader's side holds the activity weakly.

use std::sync::{
    Arc, Mutex, PoisonError, Weak,
    atomic::{AtomicUsize, Ordering},
};

use rmcp::model::{ErrorData, RequestId};
use tokio::sync::oneshot;

use super::post::Poster;
use crate::{
    transport::{
        Activity,
        decode::Head,
        direct::{self, Answered, Body, MARK, Templates},
        innermost,
    },
    verdict::Verdict};

/// One session's direct probes.
pub(crate) struct SseProbe {
    poster: Weak<Poster>,
    waiting: Arc<Waiting>,
    templates: Templates<Body>,
}

impl std::fmt::Debug for SseProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseProbe")
            .field("templates", &self.templates)
            .finish_non_exhaustive()
    }
}

impl SseProbe {
    pub(super) fn new(poster: &Arc<Poster>, waiting: Arc<Waiting>) -> Self {
        SseProbe {
            poster: Arc::downgrade(poster),
            waiting,
            templates: Templates::new(),
        }
    }

    /// Sends one probe (`server/discover` when `discover`, else `ping`) and waits for its
    /// answer on the stream. A failed `POST` is judged as any send's; a session that ends
    /// first is a closed transport.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: dropping the future abandons the `POST` and the wait (an answer that comes
    /// later goes to rmcp's session, which drops it).
    pub(crate) async fn send(&self, discover: bool) -> Result<Answered, Verdict> {
        let closed = || Verdict::transport("transport closed");
        let Some(poster) = self.poster.upgrade().filter(|p| !p.stop.is_cancelled()) else {
            return Err(closed());
        };
        let (body, n, id) = self.templates.next(discover, || template(discover));
        let body = body.with_id(&id);
        let (_ticket, answer) = self.waiting.expect(n);
        let stop = poster.stop.clone();
        // Boxed, so that the POST's future (reqwest's, the authorizer's) is not copied as the
        // probe's moves.
        let post = Box::pin(poster.post_for_probe(body));
        let posted = tokio::select! {
            posted = post => posted,
            () = stop.cancelled() => return Err(closed()),
        };
        drop(poster);
        if let Err(e) = posted {
            return Err(e.verdict(crate::verdict::plain(&innermost(&e))));
        }
        tokio::select! {
            answered = answer => answered.map_err(|_| closed()),
            () = stop.cancelled() => Err(closed()),
        }
    }
}

/// The probe's body (legacy SSE is 2024-11-05: no `_meta`).
fn template(discover: bool) -> Body {
    // Our own types always encode.
    Body::around_mark(
        &serde_json::to_vec(&direct::marked(direct::request(discover))).unwrap_or_default(),
    )
}

/// The probes of one session waiting for their answers; shared by its probe and its reader.
pub(super) struct Waiting {
    /// How many wait: the reader looks at no message while none does.
    count: AtomicUsize,
    probes: Mutex<Vec<(u64, oneshot::Sender<Answered>)>>,
    /// Weak: the activity holds the session's probe, which holds this.
    activity: Weak<Activity>,
}

impl Waiting {
    pub(super) fn new(activity: &Arc<Activity>) -> Arc<Self> {
        Arc::new(Waiting {
            count: AtomicUsize::new(0),
            probes: Mutex::new(Vec::new()),
            activity: Arc::downgrade(activity),
        })
    }

    /// Registers probe `n`: its answer comes through the receiver while the ticket lives.
    fn expect(self: &Arc<Self>, n: u64) -> (Ticket, oneshot::Receiver<Answered>) {
        let (tx, rx) = oneshot::channel();
        let mut probes = self.lock();
        probes.push((n, tx));
        self.count.store(probes.len(), Ordering::Release);
        let ticket = Ticket {
            waiting: self.clone(),
            n,
        };
        (ticket, rx)
    }

    /// Takes `data` (a `message` event's) when it answers a waiting probe: the probe gets its
    /// answer and the message goes no further. False for anything else.
    pub(super) fn take(&self, data: &str) -> bool {
        if self.count.load(Ordering::Acquire) == 0 || !data.contains(MARK) {
            return false;
        }
        let Some((n, answered)) = reply(data) else {
            return false;
        };
        let tx = {
            let mut probes = self.lock();
            let Some(at) = probes.iter().position(|(k, _)| *k == n) else {
                return false;
            };
            let (_, tx) = probes.swap_remove(at);
            self.count.store(probes.len(), Ordering::Release);
            tx
        };
        if let Some(activity) = self.activity.upgrade() {
            activity.touch();
        }
        let _ = tx.send(answered);
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, oneshot::Sender<Answered>)>> {
        self.probes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A probe's registration; removed when dropped (answered or not).
struct Ticket {
    waiting: Arc<Waiting>,
    n: u64,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut probes = self.waiting.lock();
        probes.retain(|(k, _)| *k != self.n);
        self.waiting.count.store(probes.len(), Ordering::Release);
    }
}

/// Which probe `data` answers, and with what: `None` unless it is a response or an error
/// response whose id is a probe's.
fn reply(data: &str) -> Option<(u64, Answered)> {
    let reply: Head = serde_json::from_str(data).ok()?;
    let Some(RequestId::String(id)) = &reply.id else {
        return None;
    };
    let n = direct::probe_number(id)?;
    if reply.method.is_some() {
        return None;
    }
    let answered = match (reply.result, reply.error) {
        (Some(_), None) => Answered::Result,
        (None, Some(error)) => {
            Answered::Error(serde_json::from_str::<ErrorData>(error.get()).ok()?)
        }
        _ => return None,
    };
    Some((n, answered))
}

#[cfg(test)]
mod tests;
