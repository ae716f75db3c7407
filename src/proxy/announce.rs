//! `notifications/tools/list_changed` for the host, sent exactly when the tools the proxy would
//! list differ from the ones it announced (or answered `initialize` with) last.

use rmcp::model::{Tool, ToolListChangedNotification};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use super::outbox::Outbox;
use crate::ToolRegistry;

/// Watches `registries` until `stop` or the end of the host's session; `host_tools` is the
/// list the proxy would answer `tools/list` with now (it depends on the proxy's mode, which
/// this module need not know). `baseline` is the list the host could have seen when
/// `initialize` was answered.
pub(super) async fn tools(
    registries: Vec<ToolRegistry>,
    host_tools: impl Fn() -> Vec<Tool>,
    outbox: Outbox,
    mut baseline: Vec<Tool>,
    stop: CancellationToken,
) {
    let mut changes: Vec<_> = registries.iter().map(ToolRegistry::changes).collect();
    if changes.is_empty() {
        return;
    }
    loop {
        let next = futures::future::select_all(changes.iter_mut().map(|c| Box::pin(c.recv())));
        let received = tokio::select! {
            _ = stop.cancelled() => return,
            (received, _, _) = next => received,
        };
        match received {
            // A lagging receiver has missed changes, not the current set: compare that.
            Ok(_) | Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => return,
        }
        let now = host_tools();
        if now == baseline {
            continue;
        }
        baseline = now;
        tracing::debug!(tools = baseline.len(), "telling the host its tools changed");
        // Coalesced in the outbox, never dropped.
        outbox.notify(ToolListChangedNotification::default().into());
    }
}
