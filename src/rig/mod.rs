//! Use the registry's tools from [rig](https://docs.rs/rig-core) agents (feature `rig`).
//!
//! rig's tool servers take tools from refreshable outside sources through
//! [`ManagedToolSink`](rig_core::tool::ManagedToolSink): an install returns one token per tool,
//! and each later reconcile hands the tokens back, so a stale refresh cannot overwrite a newer
//! registration. [`ToolSync`] is that refresh for a whole [`ToolRegistry`](crate::ToolRegistry):
//!
//! ```no_run
//! # async fn demo(registry: mcp_resilient::ToolRegistry, sink: impl rig_core::tool::ManagedToolSink + Send + 'static) {
//! use mcp_resilient::rig::ToolSync;
//!
//! // `sink`: rig-agent's `ToolServer::new().run()`, or any other sink.
//! let sync = ToolSync::start(registry, sink); // the current tools are installed now
//! // ... the agent runs; servers reconnect, add and remove tools ...
//! sync.shutdown().await;
//! # }
//! ```
//!
//! Each tool becomes a [`DynamicTool`](rig_core::tool::DynamicTool) named by its public name
//! (`mcp__<server>__<tool>`) with the server's description and schema. Its callback calls through
//! a [`ToolHandle`](crate::ToolHandle), so a tool installed before a reconnect answers from the
//! generation after it. Its `is_live` probe is true while the server is ready: during an outage
//! a sink that honours it (rig-agent's tool server does) stops offering the tool to the model,
//! and the sync installs it again when the server is back.
//!
//! Results: text stays text; `structuredContent` is kept as a JSON block; `isError` becomes a
//! tool error with the server's text; an outage becomes a tool error that says, in words the
//! model can act on, whether the call was sent ([`call_error`]).
//!
//! # Invariants
//!
//! See [`ToolSync`]; the tool conversion keeps the registry's invariant 4 (a tool holds names,
//! not a connection).

mod result;
mod sync;
mod tool;

pub use result::{call_error, tool_output};
pub use sync::ToolSync;
pub use tool::{dynamic_tool, dynamic_tools};
