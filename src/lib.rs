//! # mcp-resilient
//!
//! MCP client connections that stay alive. A [`Supervisor`] per server connects over stdio,
//! legacy HTTP+SSE or Streamable HTTP, notices when the server or its session died (transport
//! end, child exit, HTTP 404, a failing call, a heartbeat probe), rebuilds the session as a new
//! *generation* with bounded backoff, re-lists the tools and swaps them atomically into one
//! shared [`ToolRegistry`]. Host-side [`ToolHandle`]s keep working across reconnects.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use mcp_resilient::{ServerConfig, Supervisor, ToolRegistry, config::Heartbeat};
//!
//! let registry = ToolRegistry::new();
//! let server = Supervisor::start(
//!     ServerConfig::stdio("files", "my-mcp-server").arg("--root").arg("/srv")
//!         .heartbeat(Heartbeat::every(Duration::from_secs(15))),
//!     registry.clone(),
//! ).await?;
//! server.wait_ready(Duration::from_secs(30)).await.map_err(|s| format!("not ready: {s}"))?;
//! let read = registry.handle("mcp__files__read_file")?;       // survives reconnects
//! let result = read.call(serde_json::json!({"path": "README.md"})).await?;
//! println!("{result:?}");
//! server.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! The root holds the types above. The rest, each at one path:
//!
//! - [`config`]: every setting of a server ([`config::Heartbeat`], [`config::Reconnect`],
//!   [`config::Limits`], …) and the host config-file loader;
//! - [`state`]: what a server's state and events say ([`state::Event`], [`state::Cause`],
//!   [`state::Death`]);
//! - [`call`]: [`call::CallOptions`] for one request (timeout, progress) and
//!   [`call::CallPhase`];
//! - [`registry`]: snapshots, tool changes, public names, and the tools as OpenAI or Anthropic
//!   `tools` JSON ([`registry::definitions`], [`registry::Snapshot::openai_tools`]);
//! - [`host`]: answers to what a server asks of the host (elicitation, sampling, roots);
//! - [`auth`]: bearer tokens and OAuth (login, token stores);
//! - `proxy` (feature `proxy`): serve supervised servers to an MCP host over stdio;
//! - `rig` (feature `rig`): `rig::ToolSync` keeps a rig agent's tool server in step with the
//!   registry.
//!
// Lint levels (`unsafe_code`, `missing_docs`, `unreachable_pub`: all denied) are in the
// workspace's `[lints]` table, Cargo.toml, with the reason `unsafe_code` is not `forbid`.

pub mod auth;
pub mod call;
mod clock;
pub mod config;
mod error;
// Also in `cargo test`: the regression tests replay each crash input through its target.
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod host;
#[cfg(feature = "proxy")]
pub mod proxy;
pub mod registry;
#[cfg(feature = "rig")]
pub mod rig;
pub mod state;
mod supervisor;
pub mod telemetry;
mod text;
mod transport;
mod verdict;

/// rmcp, the official Rust SDK, is a public dependency: its model types (`CallToolResult`,
/// `Tool`, `ClientRequest`, …) are in this crate's signatures. Name them through this
/// re-export, or depend on the same rmcp release (3.11) yourself.
pub use rmcp;

// The root holds what the quick start above uses; everything else has one path, in its module.
pub use config::ServerConfig;
pub use error::{CallError, StartError};
pub use registry::{ToolHandle, ToolRegistry};
pub use state::{ConnectionState, Status};
pub use supervisor::{StatusWatch, Supervisor, SupervisorBuilder};

/// Not part of the API: what the `mcp-resilient` command line shares with the library (its
/// redaction of URLs and its duration syntax). It may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use crate::config::duration::{format_duration, human_duration, parse_duration};
    pub use crate::text::{closest, redact, redact_url};
}
