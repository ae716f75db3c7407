//! `auto`: which remote protocol a server speaks, found the way the spec's backwards
//! compatibility section describes, and remembered.
//!
//! Streamable HTTP is tried first: `POST initialize`. If the server answers 400, 404 or 405, it
//! is an older server, and legacy SSE is tried (`GET` + `endpoint` event). What worked is
//! remembered for every later attempt of the same supervisor; it is detected again only when
//! the remembered protocol fails in the "wrong protocol" way (HTTP answered 400/404/405 to
//! `initialize`, or the SSE `GET` answered 400/404/405/406 or no event stream). Any other
//! failure (connection refused, a timeout) says nothing about the protocol and keeps the memory:
//! the server is merely down.
//!
//! When every protocol tried answered the wrong-protocol way — the one configured, or both for
//! `auto` — the URL is wrong (or not an MCP server): the failure is `rejected`, not retried at
//! the normal pace.

use std::sync::atomic::{AtomicU8, Ordering};

use std::time::Duration;

use crate::{
    config::RemoteKind,
    state::{Cause, Death}};

/// A concrete remote protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// Legacy HTTP+SSE (2024-11-05).
    Sse,
    /// Streamable HTTP.
    Http,
}

impl Protocol {
    fn other(self) -> Protocol {
        match self {
            Protocol::Sse => Protocol::Http,
            Protocol::Http => Protocol::Sse,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Protocol::Sse => "legacy SSE",
            Protocol::Http => "streamable HTTP",
        }
    }

    /// The protocol's name in a configuration (`"type"`) and on the command line (`--transport`).
    fn config_name(self) -> &'static str {
        match self {
            Protocol::Sse => "sse",
            Protocol::Http => "http",
        }
    }

    /// Whether the server's HTTP answer `status` to this protocol's opening request means it
    /// speaks the other one.
    pub(crate) fn is_wrong(self, status: Option<u16>) -> bool {
        match self {
            Protocol::Http => matches!(status, Some(400 | 404 | 405)),
            Protocol::Sse => matches!(status, Some(400 | 404 | 405 | 406)),
        }
    }
}

/// The protocol `auto` found for one supervisor; shared by all its attempts.
#[derive(Debug, Default)]
pub(crate) struct KindMemory {
    /// 0: not known yet; 1: legacy SSE; 2: Streamable HTTP. Written after a successful handshake.
    kind: AtomicU8,
}

impl KindMemory {
    /// The protocol that worked last, if any.
    pub(crate) fn get(&self) -> Option<Protocol> {
        match self.kind.load(Ordering::Relaxed) {
            1 => Some(Protocol::Sse),
            2 => Some(Protocol::Http),
            _ => None,
        }
    }

    fn remember(&self, protocol: Protocol) {
        let value = match protocol {
            Protocol::Sse => 1,
            Protocol::Http => 2,
        };
        self.kind.store(value, Ordering::Relaxed);
    }
}

/// Why one protocol's attempt failed.
#[derive(Debug)]
pub(crate) struct Failure {
    /// `connect_failed` (transient), `unauthorized` or `rejected`.
    pub(crate) death: Death,
    /// The HTTP status by which the server said it speaks the other protocol, if it did.
    pub(crate) wrong_protocol: Option<u16>,
    /// How long the server asked us to wait before trying again (429, 503).
    pub(crate) retry_after: Option<Duration>,
    /// The answer showed that the other protocol is spoken there (a Streamable HTTP server's
    /// JSON-RPC error to the legacy SSE `GET`).
    pub(crate) speaks_other: bool,
}

impl Failure {
    /// The failure of the last protocol there was to try, `tried`: an answer in the other
    /// protocol means the transport is configured wrong, and a 404 or 405 a wrong URL; retrying
    /// fixes neither. A bare 400 or 406 stays transient: some servers answer those for a request
    /// they merely did not like.
    fn last(mut self, tried: Protocol) -> Failure {
        if self.speaks_other {
            let other = tried.other();
            self.death.cause = Cause::Rejected;
            self.death.detail.push_str(&format!(
                "; this is a {} endpoint, not {}: use transport `{}` or `auto` (`--transport {}`)",
                other.name(),
                tried.name(),
                other.config_name(),
                other.config_name(),
            ));
        } else if matches!(self.wrong_protocol, Some(404 | 405)) {
            self.death.cause = Cause::Rejected;
            self.death.detail.push_str(
                "; not an MCP endpoint of that transport (check the URL and the transport)",
            );
        }
        self
    }
}

/// Runs `attempt` with the configured protocol, or for `auto` with the remembered one (Streamable
/// HTTP first), falling back to the other protocol once when the first is the wrong one.
pub(crate) async fn open<T, F, Fut>(
    kind: RemoteKind,
    memory: &KindMemory,
    mut attempt: F,
) -> Result<T, Failure>
where
    F: FnMut(Protocol) -> Fut,
    Fut: Future<Output = Result<T, Failure>>,
{
    let first = match kind {
        RemoteKind::Sse => {
            let failed = |f: Failure| f.last(Protocol::Sse);
            return attempt(Protocol::Sse).await.map_err(failed);
        }
        RemoteKind::Http => {
            let failed = |f: Failure| f.last(Protocol::Http);
            return attempt(Protocol::Http).await.map_err(failed);
        }
        RemoteKind::Auto => memory.get().unwrap_or(Protocol::Http),
    };
    let failure = match attempt(first).await {
        Ok(opened) => {
            memory.remember(first);
            return Ok(opened);
        }
        Err(failure) if failure.wrong_protocol.is_some() => failure,
        Err(failure) => return Err(failure),
    };
    let second = first.other();
    tracing::info!(
        "{} is not spoken there ({}); trying {}",
        first.name(),
        crate::verdict::plain(&failure.death.detail),
        second.name()
    );
    match attempt(second).await {
        Ok(opened) => {
            memory.remember(second);
            Ok(opened)
        }
        Err(again) => {
            let mut again = again.last(second);
            again.death.detail = format!(
                "{}: {}; {}: {}",
                first.name(),
                failure.death.detail,
                second.name(),
                again.death.detail
            );
            Err(again)
        }
    }
}

/// The transport's word in metrics and logs: `stdio`, `sse` or `http` (`detected` decides
/// `auto`).
pub(crate) fn name(
    config: &crate::config::ServerConfig,
    detected: Option<Protocol>,
) -> &'static str {
    use crate::config::{RemoteKind, TransportConfig};
    match &config.transport {
        TransportConfig::Stdio(_) => "stdio",
        TransportConfig::Remote(remote) => match (remote.kind, detected) {
            (RemoteKind::Sse, _) | (RemoteKind::Auto, Some(Protocol::Sse)) => "sse",
            _ => "http",
        },
    }
}

#[cfg(test)]
mod tests;
