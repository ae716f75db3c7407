//! The `progress` tool (`{"steps": N, "ms": M}`): a slow call that reports how far it got.
//!
//! It waits `ms` milliseconds before each of its `steps` steps; after each wait it sends
//! `notifications/progress` for the request's progress token (from the request's `_meta`;
//! none without one) with `progress` = the step number (1…N), `total` = N and the message
//! `step i/N`, and after the last one it replies `progressed N steps`. So the call takes about
//! N × M ms, and a client that restarts a timeout on progress sees one every M ms.
//!
//! Like `sleep` and `block`, it ends as soon as its request is cancelled, and that is counted
//! (see [`crate::shared::Shared::count_cancelled`]).
//!
//! # Invariants
//!
//! 1. Every notification is sent (or given up after a timeout) before the next wait starts,
//!    and the last one before the reply, so they leave in step order, ahead of the reply.

use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde::Deserialize;

/// How long one progress notification may take to go out.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(2);

/// The arguments of `progress`.
#[derive(Deserialize)]
pub(crate) struct Progress {
    steps: u32,
    ms: u64,
}

/// Runs `progress` for one call. `Err(())` means the request was cancelled first.
pub(crate) async fn run(
    Progress { steps, ms }: Progress,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResult, ()> {
    let token = context.meta.get_progress_token();
    for step in 1..=steps {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(ms)) => {}
            () = context.ct.cancelled() => return Err(()),
        }
        let Some(token) = token.clone() else {
            continue;
        };
        let progress = ProgressNotificationParam::new(token, f64::from(step))
            .with_total(f64::from(steps))
            .with_message(format!("step {step}/{steps}"));
        let sent = tokio::time::timeout(NOTIFY_TIMEOUT, context.peer.notify_progress(progress));
        if !matches!(sent.await, Ok(Ok(()))) {
            tracing::debug!(step, "progress: a notification was not sent");
        }
    }
    let text = format!("progressed {steps} steps");
    Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
}

/// The error a cancelled cancellable tool answers (rmcp sends no answer to a request the
/// client cancelled with `notifications/cancelled`; this reaches only other cancellations).
pub(crate) fn cancelled(tool: &str) -> ErrorData {
    ErrorData::internal_error(format!("{tool} cancelled"), None)
}
