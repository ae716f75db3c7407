//! Fan-out of one change to every client that should hear of it: initialize-era sessions (their
//! peers) and `subscriptions/listen` subscriptions (their sinks), all at once, each send bounded
//! by [`NOTIFY_TIMEOUT`] so one stuck client delays no one past it.

use std::time::Duration;

use futures::future::{join, join_all};
use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};

/// How long one notification send may take before we give up on that client.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(2);

/// Sends `notifications/tools/list_changed` to every peer and sink.
pub(crate) async fn tools_changed(peers: Vec<Peer<RoleServer>>, sinks: Vec<SubscriptionSink>) {
    tracing::debug!(
        peers = peers.len(),
        subscriptions = sinks.len(),
        "sending tools/list_changed"
    );
    let to_peers = peers.into_iter().map(|peer| async move {
        let sent = tokio::time::timeout(NOTIFY_TIMEOUT, peer.notify_tool_list_changed()).await;
        log_send("list_changed", sent.map(|r| r.map_err(|e| e.to_string())));
    });
    let to_sinks = sinks.into_iter().map(|sink| async move {
        let sent = tokio::time::timeout(NOTIFY_TIMEOUT, sink.notify_tool_list_changed()).await;
        log_send("list_changed", sent.map(|r| r.map_err(|e| e.to_string())));
    });
    join(join_all(to_peers), join_all(to_sinks)).await;
}

/// Sends `notifications/resources/updated` for `uri` to every peer and sink.
pub(crate) async fn resource_updated(
    uri: &str,
    peers: Vec<Peer<RoleServer>>,
    sinks: Vec<SubscriptionSink>,
) {
    tracing::debug!(
        uri,
        peers = peers.len(),
        subscriptions = sinks.len(),
        "sending resources/updated"
    );
    let to_peers = peers.into_iter().map(|peer| async move {
        let update = rmcp::model::ResourceUpdatedNotificationParam::new(uri);
        let sent = tokio::time::timeout(NOTIFY_TIMEOUT, peer.notify_resource_updated(update));
        log_send(
            "resources/updated",
            sent.await.map(|r| r.map_err(|e| e.to_string())),
        );
    });
    let to_sinks = sinks.into_iter().map(|sink| async move {
        let sent = tokio::time::timeout(NOTIFY_TIMEOUT, sink.notify_resource_updated(uri));
        log_send(
            "resources/updated",
            sent.await.map(|r| r.map_err(|e| e.to_string())),
        );
    });
    join(join_all(to_peers), join_all(to_sinks)).await;
}

fn log_send(what: &str, result: Result<Result<(), String>, tokio::time::error::Elapsed>) {
    match result {
        Ok(Ok(())) => {}
        Ok(Err(error)) => tracing::debug!(%error, "{what} not sent"),
        Err(_) => tracing::debug!("{what} send timed out"),
    }
}
