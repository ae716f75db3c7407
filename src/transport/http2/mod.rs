//! HTTP/2 per origin: connections of our own to each origin, shared by every Streamable HTTP
//! session to it in the process, each session's requests and streams multiplexed on them.
//!
//! Why not reqwest's (hyper-util's) pool: it keeps one HTTP/2 connection per origin and queues
//! what goes past the server's `SETTINGS_MAX_CONCURRENT_STREAMS` on it, and a 2025 session holds
//! one stream for good (its standalone `GET`), so the hundred-and-first session to a server that
//! allows a hundred would wait forever. Here:
//!
//! 1. A request goes on the oldest connection with a free stream ([`list`]); when none has one,
//!    another connection opens ([`set`]). The limit is the server's, read from its `SETTINGS`
//!    as they arrive ([`frames`]). How many connections open is bounded by a descriptor budget
//!    ([`budget`]: a share of the process's `RLIMIT_NOFILE`, and at most 1,024 per origin);
//!    past it, requests queue on the least busy connection, and a warning says so once per
//!    origin.
//! 2. A `GOAWAY` drains its connection: no new stream goes there, the streams in flight finish,
//!    new requests go to another connection.
//! 3. A request the server did not process (`REFUSED_STREAM`, above a `GOAWAY`'s last stream,
//!    or never written) goes again on another stream, a bounded number of times ([`error`]).
//! 4. A server that does not speak HTTP/2 (ALPN chose `http/1.1`, or the h2c preface was
//!    answered otherwise) is remembered, and its requests take the HTTP/1.1 client.
//! 5. With liveness per origin, each connection sends an HTTP/2 `PING` when idle for a
//!    heartbeat interval ([`Ping`]): one per connection, however many sessions ride it.
//!
//! Which origins: [`Http2::Auto`] asks over TLS (ALPN) only; [`Http2::PriorKnowledge`] also
//! speaks h2c to `http` URLs. A request through a configured HTTP proxy, or with `http2` off,
//! takes the HTTP/1.1 client as before. Redirects are not followed on these connections.
//!
//! # Invariants
//!
//! 1. One [`OriginSet`] per origin (scheme, host, port) in the process while any session holds it; the
//!    registry keeps it weakly, so the last session to let go closes its connections.
//! 2. A request that failed here says whether it never ran ([`Http2Error::never_ran`]).

mod body;
mod budget;
mod conn;
mod error;
mod frames;
mod list;
mod set;

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, OnceLock, PoisonError, Weak},
};

use url::Url;

pub(crate) use error::Http2Error;
pub(crate) use set::{OriginSet, SendError};

use crate::config::Http2;
pub(crate) use conn::Ping;
use conn::Target;
#[cfg(feature = "test-hooks")]
pub(crate) use conn::trust_beside_the_platform;

/// The origin set of `url`'s origin, when its requests go over HTTP/2 with `mode` (see the
/// module docs); shared with every other session of that origin, mode and `ping` (invariant 1).
pub(crate) fn origin_set(url: &Url, mode: Http2, ping: Option<Ping>) -> Option<Arc<OriginSet>> {
    let tls = match (url.scheme(), mode) {
        (_, Http2::Off) => return None,
        ("https", _) => true,
        ("http", Http2::PriorKnowledge) => false,
        _ => return None,
    };
    // `None` through a proxy, too.
    crate::transport::origin_of(url)?;
    let target = Target {
        host: url.host_str()?.trim_matches(['[', ']']).to_owned(),
        port: url.port_or_known_default()?,
        tls,
        ping,
    };
    static SETS: OnceLock<Mutex<HashMap<Target, Weak<OriginSet>>>> = OnceLock::new();
    let mut sets = SETS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(set) = sets.get(&target).and_then(Weak::upgrade) {
        return Some(set);
    }
    sets.retain(|_, set| set.strong_count() > 0);
    let set = Arc::new(OriginSet::new(target.clone()));
    sets.insert(target, Arc::downgrade(&set));
    Some(set)
}

#[cfg(test)]
mod tests;
