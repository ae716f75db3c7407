//! Server configuration: what to connect to, how to notice death, and how to come back.
//!
//! A [`ServerConfig`] comes from one of two places:
//!
//! - the builder: `ServerConfig::stdio("fs", "mcp-fs").arg("/tmp")`, `ServerConfig::sse(..)`,
//!   `ServerConfig::http(..)`, `ServerConfig::remote(..)`, followed by policy setters;
//! - with feature `config-files`, the config files MCP hosts already have (`load_servers`,
//!   `load_servers_file`, `load_servers_with`): Claude Desktop, Claude Code, Cursor, Cline,
//!   Windsurf and VS Code, their variables and host-specific keys, plus our optional
//!   `reconnect`, `heartbeat` and `limits` blocks. A bad entry is skipped and reported
//!   (`LoadedServers`), not fatal to the file.
//!
//! Either way, [`ServerConfig::resolve`] is the one validation step. Bad configuration fails loud,
//! at load, with the dotted path of the offending field ([`ConfigError`]), instead of surfacing
//! later as a reconnect storm or a heartbeat that can never succeed.
//!
//! # Invariants
//!
//! 1. A config returned by [`ServerConfig::resolve`] (and so every config the JSON loaders
//!    return in `LoadedServers::servers`) satisfies every documented bound: non-zero delays
//!    and timeouts, none longer than [`MAX_DURATION`] (24 h), `max_delay >= initial_delay`,
//!    heartbeat `timeout < interval`, at least one attempt, a valid server name, an
//!    `http`/`https` URL, well-formed headers, and [`Limits`] of at least 1 (counts) or 1024
//!    (bytes).
//! 2. Builders never panic. A mistake they cannot express in their return type (an unparsable URL,
//!    `.arg()` on a remote server) is kept and reported by `resolve`.
//! 3. Reconnect and heartbeat bounds are checked only when the policy is `enabled`; a disabled
//!    policy's numbers are never used.
//! 4. Error paths name the key the user wrote: builder paths use Rust field names
//!    (`reconnect.initial_delay`), JSON paths use the JSON keys
//!    (`mcpServers.weather.reconnect.initialDelay`).

mod builder;
pub(crate) mod duration;
mod http2;
#[cfg(feature = "config-files")]
pub(crate) mod json;
mod limits;
mod liveness;
mod policy;
mod scope;
pub(crate) mod server;
mod transport;
mod unknown;
mod validate;

#[cfg(test)]
mod tests;

pub use self::duration::MAX_DURATION;
pub use self::duration::format_duration;
pub use self::duration::{DurationError, parse_duration};
pub use self::http2::Http2;
#[cfg(feature = "config-files")]
pub use self::json::{
    LoadedServers, SkippedServer, load_servers, load_servers_file, load_servers_with,
};
pub(crate) use self::limits::Bytes;
pub use self::limits::Limits;
#[cfg(feature = "config-files")]
pub(crate) use self::limits::parse_bytes;
pub use self::policy::{Heartbeat, Reconnect};
pub use self::scope::HeartbeatScope;
pub(crate) use self::server::ServerConfig;
pub use self::server::{DEFAULT_CALL_WAIT, ProtocolChoice, Replay, Sessions, TransportConfig};
pub use self::transport::{RemoteConfig, RemoteKind, StdioConfig};
pub use self::unknown::UnknownValue;
#[cfg(any(test, feature = "config-files"))]
pub(in crate::config) use self::validate::validate_server_name;
pub use crate::verdict::limit::ListBudget;

/// A configuration that was rejected: which field, and why.
///
/// `path` is dotted: `reconnect.max_delay` for a builder config,
/// `mcpServers.weather.reconnect.maxDelay` for a JSON file (`servers.gh.args[2]` for a list
/// item), and empty for the JSON document as a whole; `load_servers_file` puts the file's path
/// in front (`/home/me/mcp.json` alone when the file cannot be read or parsed). `message` is
/// lowercase and does not repeat the path. Configuration errors are permanent: retrying the
/// same input gives the same error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}{}{message}", if .path.is_empty() { "" } else { ": " })]
#[non_exhaustive]
pub struct ConfigError {
    /// Dotted path of the offending field; empty for the document root.
    pub(in crate::config) path: String,
    /// What is wrong, in lowercase, e.g. `must be at least initial_delay (500ms), got 100ms`.
    pub(in crate::config) message: String,
}

impl ConfigError {
    /// An error at `path` (dotted) with `message`.
    pub(crate) fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }

    /// The dotted path of the offending field (`reconnect.max_delay`,
    /// `mcpServers.weather.reconnect.maxDelay`); empty for the document as a whole.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What is wrong, in lowercase, without the path: `must be at least initial_delay (500ms),
    /// got 100ms`.
    pub fn message(&self) -> &str {
        &self.message
    }
}
