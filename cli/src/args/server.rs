//! Which server a command supervises and with what policy ([`ServerArgs`], turned into a
//! `ServerConfig` by `config`), and the duration flag every command's flags parse with
//! ([`flag_duration`]): below the commands that take them.

use std::{path::PathBuf, time::Duration};

use clap::Args;

use mcp_resilient::config::{MAX_DURATION, ProtocolChoice, RemoteKind};
use mcp_resilient::config::{format_duration, parse_duration};

/// Which server, and the supervision policy.
#[derive(Debug, Args)]
pub(crate) struct ServerArgs {
    /// Run the server as a child process: the command follows `--` at the end of the line.
    #[arg(long)]
    pub(super) stdio: bool,
    /// An MCP host's config file as it is (Claude Desktop, Claude Code, Cursor, Cline,
    /// Windsurf, VS Code): `mcpServers` or `servers`.
    #[arg(long)]
    pub(super) config: Option<PathBuf>,
    /// The server's name in `--config` (`proxy` takes it more than once, or none for all).
    #[arg(long = "server", value_name = "NAME")]
    pub(super) servers: Vec<String>,
    /// A remote server's URL.
    #[arg(long)]
    pub(super) url: Option<String>,
    /// Remote transport: auto (try Streamable HTTP, fall back to legacy SSE), sse or http.
    #[arg(long, default_value = "auto")]
    pub(super) transport: RemoteKind,
    /// MCP revision: auto (ask with server/discover, fall back to initialize), 2025-11-25 or
    /// 2026-07-28.
    #[arg(long)]
    pub(super) protocol: Option<ProtocolChoice>,
    /// An HTTP header for every request, `Name: value` (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    pub(super) headers: Vec<String>,
    /// The server's name in logs and public tool names (default: `server`; `proxy` names a
    /// `--url` server after its host and a `--stdio` one after its command or package).
    #[arg(long)]
    pub(super) name: Option<String>,
    /// How requests to `--url` are authorized: none, oauth (tokens from `mcp-resilient login`),
    /// or bearer (the token in the variable named by --token-env).
    #[arg(long, value_name = "none|oauth|bearer")]
    pub(super) auth: Option<String>,
    /// With `--auth bearer`: the environment variable holding the token.
    #[arg(long, value_name = "VAR")]
    pub(super) token_env: Option<String>,
    /// OAuth: a client id registered beforehand (default: dynamic registration).
    #[arg(long)]
    pub(super) client_id: Option<String>,
    /// OAuth: the environment variable holding that client's secret.
    #[arg(long, value_name = "VAR")]
    pub(super) client_secret_env: Option<String>,
    /// OAuth: a scope to ask for (repeatable; default: what the server suggests).
    #[arg(long = "scope", value_name = "SCOPE")]
    pub(super) scopes: Vec<String>,
    /// OAuth: the port of the loopback redirect (default: any free port).
    #[arg(long)]
    pub(super) callback_port: Option<u16>,
    /// OAuth: obtain tokens with client credentials (machine to machine) instead of a login;
    /// needs --client-id and --client-secret-env.
    #[arg(long)]
    pub(super) client_credentials: bool,
    /// Heartbeat interval, e.g. 30s.
    #[arg(long, value_parser = flag_duration)]
    pub(super) heartbeat_interval: Option<Duration>,
    /// Heartbeat probe timeout (must be below the interval).
    #[arg(long, value_parser = flag_duration)]
    pub(super) heartbeat_timeout: Option<Duration>,
    /// Consecutive missed probes that mean death.
    #[arg(long)]
    pub(super) heartbeat_failures: Option<u32>,
    /// First reconnect delay.
    #[arg(long, value_parser = flag_duration)]
    pub(super) reconnect_initial: Option<Duration>,
    /// Largest reconnect delay (also the stability window).
    #[arg(long, value_parser = flag_duration)]
    pub(super) reconnect_max: Option<Duration>,
    /// Consecutive failed attempts per outage before giving up.
    #[arg(long)]
    pub(super) max_attempts: Option<u32>,
    /// Timeout of one tool call.
    #[arg(long, value_parser = flag_duration)]
    pub(super) call_timeout: Option<Duration>,
    /// Timeout of one connection attempt; `tools` and `call` also give up on transient
    /// failures (a refused port, say) after this long in all.
    #[arg(long, value_parser = flag_duration)]
    pub(super) connect_timeout: Option<Duration>,
    /// The child command and its arguments (with --stdio).
    #[arg(last = true, value_name = "COMMAND")]
    pub(super) command: Vec<String>,
}

/// A duration flag: [`parse_duration`], at most [`MAX_DURATION`] (24 h) like every duration of
/// a configuration. Refused here, clap names the flag and exits 2.
pub(crate) fn flag_duration(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s).map_err(|e| e.to_string())?;
    if d > MAX_DURATION {
        return Err(format!(
            "must be at most {}, got {}",
            format_duration(MAX_DURATION),
            format_duration(d)
        ));
    }
    Ok(d)
}
