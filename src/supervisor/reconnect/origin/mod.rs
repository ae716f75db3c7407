//! Watching a down server's origin, so that the next attempt starts as soon as the server
//! listens again rather than when the backoff runs out.
//!
//! Why: after a restart the backoff is the slowest part of a recovery (seconds, where the
//! server was back in milliseconds), and a shorter backoff would cost attempts against a server
//! that is still down. A TCP connect costs the server nothing it notices: no request, no
//! session, no log line.
//!
//! One task per origin (`host:port`) serves every waiter in the process: it connects every
//! [`EVERY`] (jittered down to half of it) while anyone waits, and publishes what it saw. A
//! waiter ([`accepts_again`]) resolves on a refusal followed by an acceptance: a server that
//! went away and came back. An origin that accepts from the start (the server is up, the
//! attempt failed for another reason) or never answers (black-holed) keeps it waiting forever,
//! so the backoff it races decides as before: the watch never adds an attempt against a server
//! that refuses connections, and never hurries one against a server that accepts them.
//!
//! When it resolves, many waiters (many sessions to one restarted server) are released at once;
//! what keeps their attempts a bounded stream and not a herd is the origin's attempt budget
//! ([`budget`]), which every attempt to a web origin passes, whatever ended its wait.
//!
//! # Invariants
//!
//! 1. At most one watch task per origin; it ends (and leaves the map) once nobody waits. The
//!    map's lock is held for the check and the removal, and for every subscription, so a
//!    waiter never subscribes to a task that is ending.
//! 2. Every connect has a deadline ([`CONNECT_WAIT`]); a connection made is closed at once.

use std::{
    collections::HashMap,
    sync::{Arc, LazyLock, Mutex, PoisonError},
    time::Duration,
};

use rand::Rng;
use tokio::sync::watch;

pub(crate) mod budget;

/// The longest pause between two connects to one origin.
const EVERY: Duration = Duration::from_millis(250);
/// How long one connect may take before it counts as no answer.
const CONNECT_WAIT: Duration = Duration::from_secs(1);

/// What the last connect to an origin found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// Not connected yet, or no answer in time.
    Unknown,
    /// The connection was refused: nothing listens.
    Refused,
    /// The connection was accepted.
    Accepted,
}

/// What the watch of one origin publishes: what the last connect found, and its round (so
/// that every round is a change a waiter can see).
type Round = (Seen, u64);

type Watchers = Mutex<HashMap<String, Arc<watch::Sender<Round>>>>;

/// The watch of every origin someone waits for (invariant 1).
static WATCHERS: LazyLock<Watchers> = LazyLock::new(Watchers::default);

fn watchers() -> std::sync::MutexGuard<'static, HashMap<String, Arc<watch::Sender<Round>>>> {
    WATCHERS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Resolves once `origin` was seen refusing connections and then accepting one. Pending
/// forever otherwise.
///
/// # Cancel safety
///
/// Cancel-safe: it only waits; dropping it drops its subscription.
pub(in crate::supervisor) async fn accepts_again(origin: String) {
    let (_sender, mut seen) = subscribe(&origin);
    let refused = seen.wait_for(|s| s.0 == Seen::Refused).await.is_ok();
    if !(refused && seen.wait_for(|s| s.0 == Seen::Accepted).await.is_ok()) {
        // The watch ended without a sign: leave it to the backoff.
        std::future::pending::<()>().await;
    }
}

/// The watch of `origin` and a subscription to it, made under the map's lock (invariant 1);
/// the watch is started if nobody watched the origin yet.
fn subscribe(origin: &str) -> (Arc<watch::Sender<Round>>, watch::Receiver<Round>) {
    let mut map = watchers();
    if let Some(sender) = map.get(origin) {
        return (sender.clone(), sender.subscribe());
    }
    let sender = Arc::new(watch::Sender::new((Seen::Unknown, 0)));
    let receiver = sender.subscribe();
    map.insert(origin.to_owned(), sender.clone());
    tokio::spawn(watch_origin(origin.to_owned(), sender.clone()));
    (sender, receiver)
}

/// The task of one origin (invariants 1, 2).
async fn watch_origin(origin: String, sender: Arc<watch::Sender<Round>>) {
    for round in 1.. {
        let connect = tokio::net::TcpStream::connect(origin.as_str());
        let seen = match tokio::time::timeout(CONNECT_WAIT, connect).await {
            Ok(Ok(_)) => Seen::Accepted,
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => Seen::Refused,
            _ => Seen::Unknown,
        };
        sender.send_replace((seen, round));
        {
            let mut map = watchers();
            if sender.receiver_count() == 0 {
                map.remove(&origin);
                return;
            }
        }
        let pause = rand::rng().random_range(EVERY / 2..=EVERY);
        tokio::time::sleep(pause).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_refused_origin_that_accepts_again_releases_its_waiter() {
        // Bound, not listening: connections are refused until it listens.
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(([127, 0, 0, 1], 0).into()).unwrap();
        let origin = socket.local_addr().unwrap().to_string();
        let waiter = tokio::spawn(accepts_again(origin.clone()));
        let (_, mut seen) = subscribe(&origin);
        tokio::time::timeout(
            Duration::from_secs(10),
            seen.wait_for(|s| s.0 == Seen::Refused),
        )
        .await
        .expect("a refusal seen in time")
        .unwrap();
        assert!(!waiter.is_finished(), "refused: still waiting");
        let _listener = socket.listen(8).unwrap();
        tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .expect("released once the origin accepts")
            .unwrap();
    }

    #[tokio::test]
    async fn an_origin_that_accepts_from_the_start_releases_nobody() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = listener.local_addr().unwrap().to_string();
        let (_, mut seen) = subscribe(&origin);
        let waiter = tokio::spawn(accepts_again(origin));
        tokio::time::timeout(
            Duration::from_secs(10),
            seen.wait_for(|s| s.0 == Seen::Accepted),
        )
        .await
        .expect("an acceptance seen in time")
        .unwrap();
        // Two more rounds of the watch: still accepting, and the waiter still waits (no
        // refusal came first).
        let round = seen.borrow().1;
        tokio::time::timeout(Duration::from_secs(10), seen.wait_for(|s| s.1 >= round + 2))
            .await
            .expect("two more rounds in time")
            .unwrap();
        assert!(!waiter.is_finished());
        waiter.abort();
    }
}
