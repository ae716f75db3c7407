//! How the host's session ends within a bound, whatever the upstreams do.
//!
//! The session ends when the host closes stdin or a stop is asked (SIGTERM). rmcp then waits for
//! the requests still being handled (5 s after an end of input, 2 s after a stop), and a request
//! forwarded to a hung upstream would use all of it. So every request the host sent races the
//! [`Ending`]: once the session has been ending for `drain`, the request is answered with an
//! error (and dropped upstream, which tells the upstream it was cancelled), and rmcp's wait ends
//! with it. What is left for the host is then written for what remains of the same drain.
//!
//! # Invariants
//!
//! 1. A request in flight when the session ends is given `drain`, measured from the end, not
//!    from when it was sent; the whole drain (answers, then the last writes) shares it.

use std::{
    borrow::Cow,
    sync::{Arc, OnceLock},
    time::Duration,
};

use rmcp::{
    ErrorData, RoleServer, Service,
    model::{ClientNotification, ClientRequest, ProtocolVersion, ServerConfig, ServerResult},
    service::{NotificationContext, RequestContext},
};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::handler::ProxyHandler;

/// The least time the last writes to the host get, even when the drain is spent.
const MIN_FLUSH: Duration = Duration::from_millis(100);

/// The end of the host's session, once it has begun. Cheap to clone.
#[derive(Debug, Clone)]
pub(super) struct Ending {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// Cancelled when the host's stdin ended.
    host_gone: CancellationToken,
    /// The proxy's stop (a signal).
    stop: CancellationToken,
    /// When the end began; set once.
    at: OnceLock<Instant>,
    drain: Duration,
}

impl Ending {
    pub(super) fn new(stop: CancellationToken, drain: Duration) -> Self {
        Self {
            inner: Arc::new(Inner {
                host_gone: CancellationToken::new(),
                stop,
                at: OnceLock::new(),
                drain,
            }),
        }
    }

    /// The host closed stdin.
    pub(super) fn host_gone(&self) {
        self.begin();
        self.inner.host_gone.cancel();
    }

    fn begin(&self) -> Instant {
        *self.inner.at.get_or_init(Instant::now)
    }

    /// Resolves once the session has been ending for the drain.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: it only waits.
    pub(super) async fn passed(&self) {
        tokio::select! {
            () = self.inner.host_gone.cancelled() => {}
            () = self.inner.stop.cancelled() => {}
        }
        let at = self.begin();
        tokio::time::sleep_until(at + self.inner.drain).await;
    }

    /// What is left of the drain (at least [`MIN_FLUSH`]); all of it if the end has not begun.
    pub(super) fn left(&self) -> Duration {
        match self.inner.at.get() {
            Some(at) => (*at + self.inner.drain)
                .saturating_duration_since(Instant::now())
                .max(MIN_FLUSH),
            None => self.inner.drain,
        }
    }
}

/// The proxy's handler, with every host request bounded by the [`Ending`].
pub(super) struct Draining {
    pub(super) handler: ProxyHandler,
    pub(super) ending: Ending,
}

impl Service<RoleServer> for Draining {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        tokio::select! {
            answer = Service::handle_request(&self.handler, request, context) => answer,
            () = self.ending.passed() => {
                tracing::info!(
                    "a request was still in flight when the host's session ended; abandoned"
                );
                Err(ErrorData::internal_error(
                    "the proxy is shutting down; the request was abandoned",
                    None,
                ))
            }
        }
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Service::handle_notification(&self.handler, notification, context).await
    }

    fn get_info(&self) -> ServerConfig {
        Service::get_info(&self.handler)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Service::<RoleServer>::supported_protocol_versions(&self.handler)
    }
}
