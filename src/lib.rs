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
//! A host that calls a model API itself takes the tools as OpenAI or Anthropic `tools` JSON with
//! [`definitions`] ([`Snapshot::openai_tools`], [`Snapshot::anthropic_tools`]). With feature
//! `rig`, `rig::ToolSync` keeps a rig agent's tool server in step with the registry.
// `deny`, not `forbid`: one audited function may allow it (the death signal of a stdio child,
// set between fork and exec: see `transport::stdio::spawner`).
#![deny(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

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
pub mod text;
mod transport;
mod verdict;

pub use call::CallOptions;
pub use config::ServerConfig;
pub use error::{CallError, StartError};
pub use registry::definitions;
pub use registry::{Snapshot, ToolHandle, ToolRegistry, ToolsChanged};
pub use state::{Cause, ConnectionState, Death, Event, Generation, Reason};
pub use supervisor::{Supervisor, same_origin_redirects};
