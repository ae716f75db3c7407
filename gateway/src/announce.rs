//! `notifications/tools/list_changed` for the host, sent exactly when the tools the proxy would
//! list differ from the ones it announced (or answered `initialize` with) last.

use std::hash::{DefaultHasher, Hasher};

use mcp_resilient::state::RecvError;
use rmcp::model::{Tool, ToolListChangedNotification};
use tokio_util::sync::CancellationToken;

use super::outbox::Outbox;
use mcp_resilient::ToolRegistry;

/// Watches `registries` until `stop` or the end of the host's session; `host_tools` is the
/// list the proxy would answer `tools/list` with now (it depends on the proxy's mode, which
/// this module need not know). `baseline` is the [`digest`] of the list the host could have
/// seen when `initialize` was answered.
pub(super) async fn tools(
    registries: Vec<ToolRegistry>,
    host_tools: impl Fn() -> Vec<Tool>,
    outbox: Outbox,
    mut baseline: u64,
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
        let seen = digest(&now);
        if seen == baseline {
            continue;
        }
        baseline = seen;
        tracing::debug!(tools = now.len(), "telling the host its tools changed");
        // Coalesced in the outbox, never dropped.
        outbox.notify(ToolListChangedNotification::default().into());
    }
}

/// A 64-bit digest of a tool list as the host would read it (its JSON), what each host session
/// keeps of the list it last saw: a copy would cost every idle session the whole list (4.2 KiB
/// for the mock's few tools, 1,000 sessions: BENCHMARKS.md section 22), growing with the tools.
/// Two different lists share a digest with probability 2^-64, and then one `list_changed` is
/// not sent. serde_json's maps are sorted unless a crate in the build turns on its
/// `preserve_order`; then a schema whose keys a server reorders costs one needless
/// `list_changed`.
pub(super) fn digest(tools: &[Tool]) -> u64 {
    let mut hasher = DefaultHasher::new();
    match serde_json::to_vec(tools) {
        Ok(bytes) => hasher.write(&bytes),
        // Not serializable (it was deserialized, so never): the count still tells a change.
        Err(_) => hasher.write_usize(tools.len()),
    }
    hasher.finish()
}
