//! A host session restored from the store (another replica held it): what the host had set up
//! on the upstreams is set up again here, its subscriptions and its log level, as it would be
//! on an upstream's new generation. The host sees nothing of it.

// Resource subscriptions and the log level are deprecated by SEP-2577, but they are what a
// session-era host set.
#![allow(deprecated)]

use rmcp::model::SetLevelRequestParams;

use super::{handler::ProxyHandler, shared::lock};

impl ProxyHandler {
    /// Renews the host's subscriptions and log level on the upstreams, in a task of the
    /// session's own (ended with it).
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(super) fn renew(&self) {
        let handler = self.clone();
        let stop = self.shared.stop.clone();
        let task = tokio::spawn(async move {
            tokio::select! {
                () = stop.cancelled() => {}
                () = handler.renew_now() => {}
            }
        });
        lock(&self.shared.tasks).push(task);
    }

    async fn renew_now(&self) {
        let link = &self.shared.link;
        for (uri, _server) in link.subscriptions() {
            // Taken out and asked again, so the upstream's count of who holds it sees this host.
            link.unsubscribe(&uri);
            if let Err(error) = self.subscribe_for_host(&uri).await {
                tracing::warn!(error = %error.message, "a restored session's subscription was not renewed");
            }
        }
        if let Some(level) = link.level()
            && let Err(error) = self.set_levels(SetLevelRequestParams::new(level)).await
        {
            tracing::warn!(error = %error.message, "a restored session's log level was not sent again");
        }
        tracing::debug!("a restored host session's subscriptions and level are renewed");
    }
}
