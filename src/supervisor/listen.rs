//! The `subscriptions/listen` stream of a 2026-07-28 generation.
//!
//! A 2026-07-28 server keeps no session; the one thing that lives as long as a generation is the
//! listen request, on which the server sends its list-change notifications. So it is watched like
//! an SSE stream: a list change re-syncs the tools through the actor's serialized, fenced sync,
//! and the stream ending without its final response is the generation's death
//! (`stream_closed`). A final response (the server ended the subscription in good order) or a
//! lagged channel is answered by subscribing again; if that fails, the generation is dead.
//!
//! # Invariants
//!
//! 1. The listener runs until the generation is reported dead (by anyone) or closed; it never
//!    outlives it (its task is owned and awaited by the generation's `Running`).
//! 2. It reports death only through [`Live::report_unless_ended`], like every other watcher.

use std::sync::Arc;

use rmcp::{
    Peer, RoleClient,
    model::{ProtocolVersion, ServerNotification, SubscriptionFilter},
    service::{Subscription, SubscriptionEnd},
};
use tokio::sync::mpsc;

use super::{actor::Msg, connect::era::is_modern, live::Live};
use crate::state::{Cause, Death};

/// Subscribes to tool-list changes when the server speaks 2026-07-28 and says its tools can
/// change; `Ok(None)` when there is nothing to listen to.
pub(crate) async fn subscribe(
    peer: &Peer<RoleClient>,
    protocol: &ProtocolVersion,
) -> Result<Option<Subscription>, String> {
    let changes = peer
        .peer_info()
        .and_then(|info| info.capabilities.tools.as_ref()?.list_changed)
        .unwrap_or(false);
    if !is_modern(protocol) || !changes {
        return Ok(None);
    }
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    peer.listen(filter)
        .await
        .map(Some)
        .map_err(|e| format!("subscriptions/listen failed: {e}"))
}

/// Watches `subscription` for `live`'s generation (see the module docs).
pub(crate) async fn run(
    mut subscription: Subscription,
    live: Arc<Live>,
    tx: mpsc::UnboundedSender<Msg>,
) {
    loop {
        let next = tokio::select! {
            next = subscription.next() => next,
            _ = live.dead.cancelled() => {
                let _ = subscription.cancel().await;
                return;
            }
        };
        match next {
            Ok(Some(ServerNotification::ToolListChangedNotification(_))) => {
                let _ = tx.send(Msg::ListChanged {
                    generation: live.generation,
                });
            }
            Ok(Some(_)) => {}
            Ok(None) => {
                let why = match subscription.end() {
                    Some(SubscriptionEnd::Graceful(_)) => "the server ended the subscription",
                    Some(SubscriptionEnd::Lagged { .. }) => "notifications were lost (lagged)",
                    Some(SubscriptionEnd::Cancelled) => "the subscription was cancelled",
                    _ => {
                        return die(&live, "the listen stream ended without its final response");
                    }
                };
                tracing::info!(server = %live.server, generation = live.generation, "{why}; subscribing again");
                // A change may have been missed meanwhile.
                let _ = tx.send(Msg::ListChanged {
                    generation: live.generation,
                });
                match subscribe(&live.peer, &live.protocol).await {
                    Ok(Some(again)) => subscription = again,
                    Ok(None) => return,
                    Err(detail) => return die(&live, &format!("{why}, and {detail}")),
                }
            }
            Err(e) => return die(&live, &format!("the listen stream failed: {e}")),
        }
    }
}

fn die(live: &Live, detail: &str) {
    live.report_unless_ended(Death::new(Cause::StreamClosed, detail));
}
