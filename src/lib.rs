//! # mcp-resilient
//!
//! MCP client connections that stay alive. A [`Supervisor`] per server connects over stdio,
//! legacy HTTP+SSE or Streamable HTTP, notices when the server or its session died (transport
//! end, child exit, HTTP 404, a failing call, a heartbeat probe), rebuilds the session as a new
//! *generation* with bounded backoff, re-lists the tools and swaps them atomically into one
//! shared [`ToolRegistry`]. Host-side [`ToolHandle`]s keep working across reconnects.
//!
//! A runnable example, against the in-process mock server of the `mcp-mock-server` crate (in
//! your program, the config names your server: `ServerConfig::stdio("files", "my-mcp-server")`,
//! `ServerConfig::remote("docs", "https://…/mcp")`):
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use mcp_resilient::{ServerConfig, Supervisor, ToolRegistry};
//! # let mock = mcp_mock_server::MockServer::start(Default::default()).await?;
//! # let url = mock.http_url();
//!
//! let registry = ToolRegistry::new();                  // one per host, shared by its servers
//! let server = Supervisor::spawn(ServerConfig::remote("demo", url), &registry)?;
//! server.wait_ready(Duration::from_secs(30)).await?;   // the first generation is ready
//!
//! let echo = registry.handle("mcp__demo__echo")?;      // survives reconnects
//! let result = echo.call(serde_json::json!({"text": "hi"})).await?;
//! assert_eq!(result.is_error, Some(false));
//!
//! println!("{}", server.status());   // "ready, generation 1, seq 2"; `server.watch()` follows it
//! server.shutdown().await;                             // nothing of it is left running
//! # mock.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! A call made while the server reconnects waits for the next generation (`call_wait`, 10 s by
//! default): a blip costs the caller a short wait, not a failure.
//!
//! `rmcp`, the official Rust SDK, is a public dependency: its model types are in this crate's
//! signatures, re-exported as [`rmcp`]. Depend on the same release (3.11) if you name them
//! yourself.
//!
//! The root holds the types above. The rest, each at one path:
//!
//! - [`config`]: every setting of a server ([`config::Heartbeat`], [`config::Reconnect`],
//!   [`config::Limits`], …) and, with feature `config-files`, the host config-file loader;
//! - [`state`]: what a server's status and events say ([`state::Event`], [`state::Cause`],
//!   [`state::Death`], [`state::Generation`]);
//! - [`call`]: [`call::CallOptions`] for one request (timeout, progress) and
//!   [`call::CallPhase`];
//! - [`registry`]: snapshots, tool changes, public names, and the tools as OpenAI or Anthropic
//!   `tools` JSON ([`registry::Snapshot::openai_tools`], [`registry::RegisteredTool::openai_tool`]);
//! - [`host`]: answers to what a server asks of the host (elicitation, sampling, roots);
//! - [`auth`]: bearer tokens and OAuth (login, token stores);
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
// The internals the fuzz checks in `fuzz/checks/` reach; nothing of its own (FUZZING.md).
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod host;
pub mod registry;
#[cfg(feature = "rig")]
pub mod rig;
pub mod state;
mod supervisor;
pub mod telemetry;
pub mod text;
mod transport;
mod verdict;

/// rmcp, the official Rust SDK, is a public dependency: its model types (`CallToolResult`,
/// `Tool`, `ClientRequest`, …) are in this crate's signatures. Name them through this
/// re-export, or depend on the same rmcp release (3.11) yourself.
pub use rmcp;

// The root holds what the quick start above uses; everything else has one path, in its module.
pub use config::server::ServerConfig;
pub use error::{CallError, NotReady, StartError};
pub use registry::hub::{ToolHandle, ToolRegistry};
pub use state::{connection::ConnectionState, status::Status};
pub use supervisor::board::StatusWatch;
pub use supervisor::{Supervisor, SupervisorBuilder};
