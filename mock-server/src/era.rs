//! Which protocol era a request belongs to.

use rmcp::RoleServer;
use rmcp::service::RequestContext;

/// Whether the request uses the 2026-07-28 lifecycle (no `initialize`: per-request `_meta`),
/// as opposed to an initialize-era session.
pub(crate) fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| !version.has_initialize())
}
