//! What a front (the transport a host reaches the core by) adds to the core's handling.
//!
//! The stdio front adds nothing: its one writer drains the host's outbox in the order rmcp's own
//! answers are queued. The HTTP front registers each host session when it initializes, drains
//! its outbox to the session's streams, and serves hosts that have no session (2026-07-28),
//! their `subscriptions/listen` streams included.

use std::{fmt, sync::Arc};

use futures::future::BoxFuture;
use rmcp::{
    ErrorData, RoleServer,
    model::CallToolResult,
    service::{RequestContext, SubscriptionContext},
};

use super::shared::Shared;
use mcp_resilient::CallError;

/// A tool call's outcome, as the core has it before it answers the host.
pub(crate) type CallOutcome = Result<CallToolResult, CallError>;

/// A front's hooks into the core.
pub(crate) trait Front: Send + Sync + fmt::Debug + 'static {
    /// The id of the session an `initialize` opens, if the front has sessions: the key of the
    /// host's state in the store.
    fn session_id(&self, context: &RequestContext<RoleServer>) -> Option<String> {
        let _ = context;
        None
    }

    /// Whether the host of this request may see and call `tool` of upstream `server` (the
    /// HTTP front's access policy); everything, without one.
    fn sees(&self, context: &RequestContext<RoleServer>, server: &str, tool: &str) -> bool {
        let _ = (context, server, tool);
        true
    }

    /// The core answered the host's `initialize`: the session's peer is known.
    fn initialized(
        &self,
        shared: &Arc<Shared>,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData>;

    /// Runs one tool call so that what it queues for the host (its progress) reaches the host
    /// before its answer.
    fn call<'a>(
        &'a self,
        shared: &'a Arc<Shared>,
        context: &'a RequestContext<RoleServer>,
        call: BoxFuture<'a, CallOutcome>,
    ) -> BoxFuture<'a, CallOutcome>;

    /// Serves one 2026-07-28 `subscriptions/listen` stream until the host ends it.
    fn listen(
        &self,
        shared: Arc<Shared>,
        context: SubscriptionContext,
    ) -> BoxFuture<'static, Result<(), ErrorData>>;
}
