//! The host as the upstreams see it: their requests (elicitation, sampling, roots) go to the
//! host's peer, their notifications to the host's outbox.

// Sampling, roots and logging are deprecated by SEP-2577, but hosts and servers of the session
// era use them, and the proxy passes them on.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::{
    Peer, RoleServer, ServiceError,
    model::{
        ClientCapabilities, ErrorData, LoggingMessageNotification, PromptListChangedNotification,
        ResourceListChangedNotification, ResourceUpdatedNotification, ServerNotification,
    },
};

use super::{Mode, outbox::Outbox};
use crate::host::HostHandlers;

/// The handlers every upstream of this host gets: each request kind the host declared it
/// answers goes to the host (so the upstream sees the host's own capabilities, no more), and the
/// upstream's notifications are queued for the host in `outbox` (without waiting: the handler
/// runs in a task rmcp starts per notification, which must end at once).
pub(super) fn handlers(
    outbox: Outbox,
    peer: Peer<RoleServer>,
    capabilities: &ClientCapabilities,
    mode: Mode,
) -> HostHandlers {
    let mut handlers = HostHandlers::new().on_notification(move |server, notification| {
        forward(&outbox, &server, mode, notification);
        std::future::ready(())
    });
    if capabilities.elicitation.is_some() {
        let peer = peer.clone();
        handlers = handlers.on_elicit(move |_, request| {
            let peer = peer.clone();
            async move { peer.create_elicitation(request).await.map_err(host_error) }
        });
    }
    if capabilities.sampling.is_some() {
        let peer = peer.clone();
        handlers = handlers.on_sample(move |_, request| {
            let peer = peer.clone();
            async move { peer.create_message(request).await.map_err(host_error) }
        });
    }
    if capabilities.roots.is_some() {
        handlers = handlers.on_roots(move |_| {
            let peer = peer.clone();
            async move { peer.list_roots().await.map_err(host_error) }
        });
    }
    handlers
}

/// The host's error as the upstream should see it: the host's own JSON-RPC error, or an
/// internal error that says the host could not be asked.
fn host_error(error: ServiceError) -> ErrorData {
    match error {
        ServiceError::McpError(error) => error,
        other => ErrorData::internal_error(format!("the host did not answer: {other}"), None),
    }
}

/// Passes one upstream notification to the host. Progress is routed per call (with the host's
/// own token: progress that comes here arrived after its call ended), tool list changes are
/// announced from the registry (only when the listed tools changed), and the rest
/// (cancellations, task status, custom notifications) are the proxy's business, not the host's.
fn forward(outbox: &Outbox, server: &Arc<str>, mode: Mode, notification: ServerNotification) {
    let notification: ServerNotification = match notification {
        ServerNotification::LoggingMessageNotification(message) => {
            let mut params = message.params;
            if mode == Mode::Aggregated {
                params.logger = Some(match params.logger.take() {
                    Some(logger) => format!("{server}/{logger}"),
                    None => server.to_string(),
                });
            }
            LoggingMessageNotification::new(params).into()
        }
        ServerNotification::ResourceUpdatedNotification(updated) => {
            ResourceUpdatedNotification::new(updated.params).into()
        }
        ServerNotification::ResourceListChangedNotification(_) => {
            ResourceListChangedNotification::default().into()
        }
        ServerNotification::PromptListChangedNotification(_) => {
            PromptListChangedNotification::default().into()
        }
        ServerNotification::ProgressNotification(_) => {
            tracing::debug!(%server, "progress for a call that has ended; dropped");
            return;
        }
        _ => return,
    };
    outbox.notify(notification);
}
