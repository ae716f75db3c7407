//! The shared, generation-fenced tool registry.
//!
//! Every supervisor — stdio, legacy SSE and Streamable HTTP alike — publishes its server's tool
//! set here. Hosts read [`Snapshot`]s, resolve [`ToolHandle`](crate::ToolHandle)s and listen to
//! [`ToolRegistry::changes`].
//!
//! # Invariants
//!
//! 1. A snapshot is immutable. A publish builds the next snapshot aside and swaps it in whole,
//!    so a reader sees a server's old full set or its new full set, never a mix and never a
//!    duplicate.
//! 2. Publishes are fenced by generation: a set from a generation older than the one already
//!    registered for that server is refused.
//! 3. A list with a duplicate raw name, or whose public names would clash with another
//!    identity's, is refused and the previous set stays.
//! 4. A [`ToolHandle`](crate::ToolHandle) holds only names. It resolves the server's current route at call time, so
//!    it keeps working across reconnects.
//!
//! The lock inside is a `std::sync::RwLock` held only to clone or swap an `Arc`, never across an
//! `.await`.

mod definitions;
pub(crate) mod hub;
mod names;
pub(crate) mod publish;
mod shared;
mod snapshot;

pub(crate) use hub::ToolRegistry;
pub use names::{MAX_PUBLIC_NAME, public_name};
pub(crate) use publish::Publish;
#[cfg(test)]
pub(crate) use publish::PublishError;
pub use snapshot::{RegisteredTool, ServerTools, Snapshot};

pub(crate) use crate::state::ToolsChanged;

/// No tool of that public name is registered ([`ToolRegistry::handle`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no tool named '{name}'{}", .closest.as_ref().map(|c| format!(" (did you mean '{c}'?)")).unwrap_or_default())]
#[non_exhaustive]
pub struct UnknownTool {
    /// The name asked for.
    pub name: String,
    /// The registered name closest to it, when one is close (a typo, a case mistake).
    pub closest: Option<String>,
}

/// How a [`ToolHandle`](crate::ToolHandle) reaches its server: the supervisor's call path, registered by `attach`.
/// A trait so that the registry does not depend on the supervisor that implements it.
pub(crate) trait Route: Send + Sync + std::fmt::Debug {
    /// Calls `tool` (its raw name) on the server's current generation.
    fn call_tool<'a>(
        &'a self,
        tool: &'a str,
        arguments: Option<rmcp::model::JsonObject>,
        options: crate::call::CallOptions,
    ) -> futures::future::BoxFuture<'a, Result<rmcp::model::CallToolResult, crate::CallError>>;

    /// The server's status now.
    fn status(&self) -> crate::state::Status;

    /// A watch of the server's status.
    fn watch(&self) -> crate::supervisor::board::StatusWatch;
}

#[cfg(test)]
mod tests;
