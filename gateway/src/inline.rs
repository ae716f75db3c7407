//! A 2026-07-28 host on the stdio front: no `initialize`, every request self-contained.
//!
//! rmcp's stdio server answers such a host (`server/discover` as a bootstrap, then requests
//! whose `_meta` names the revision); what the core adds is when the upstreams start and where
//! the host hears of changes:
//!
//! - the session's own upstreams start at the host's first request, whichever it is, and every
//!   request waits for that one start (`Shared::start_inline`);
//! - the host hears list changes only on its `subscriptions/listen` streams, each of which
//!   gets an outbox of its own drained through rmcp's subscription sink (which stamps the
//!   subscription id the stdio revision requires), never as bare lines on stdout;
//! - the revision has no requests from server to client, so what an upstream asks of the host
//!   (elicitation, sampling, roots) is declined, as it is for a 2026-07-28 host of `serve`.
//!
//! Over HTTP a host without a session is served by the HTTP front (`http/front.rs`) instead.

use rmcp::{ErrorData, service::SubscriptionContext};
use tokio_util::sync::CancellationToken;

use super::{
    handler::ProxyHandler,
    outbox::{Form, NotificationBuffer, Outbox, sink},
};

impl ProxyHandler {
    /// Whether a request must first start the upstreams: a stdio host's, before anything
    /// started them (cheap: no allocation, no wait).
    pub(super) fn starts_inline(&self) -> bool {
        self.front.is_none()
            && self.shared.inline.get().is_none()
            && !self.shared.link.is_initialized()
    }

    /// Starts the upstreams of a stdio host that did not initialize, once; nothing for a
    /// host that did, or a host of the HTTP front.
    pub(super) async fn start_inline(&self) -> Result<(), ErrorData> {
        match self.starts_inline() {
            true => self.shared.start_inline().await,
            false => Ok(()),
        }
    }

    /// Serves one listen stream of a stdio host: the tools it would list, each time they
    /// change, until the host cancels the stream or the session ends.
    pub(super) async fn listen_on_stdio(
        &self,
        context: SubscriptionContext,
    ) -> Result<(), ErrorData> {
        self.shared.start_inline().await?;
        // Messages, not lines: the sink hands each to rmcp, which stamps the subscription id.
        let outbox = Outbox::with_form(NotificationBuffer::default(), Form::Messages);
        outbox.open();
        let stop = CancellationToken::new();
        let _stop_announcing = stop.clone().drop_guard();
        let announce = self.shared.clone().announce_to(outbox.clone(), stop);
        let drain = sink::run(outbox.clone(), context.sink().clone());
        tokio::select! {
            () = context.cancelled() => {}
            () = self.shared.stop.cancelled() => {}
            () = announce => {}
            () = drain => {}
        }
        outbox.close();
        Ok(())
    }
}
