//! Command-line arguments and their translation into a [`ServerConfig`].

use std::{path::PathBuf, time::Duration};

use clap::{Args, Parser, Subcommand};
use mcp_resilient::config::{
    ProtocolChoice, RemoteKind, ServerConfig, TransportConfig, load_servers_file, parse_duration,
};

/// Keep MCP client connections alive: supervise a server, list and call its tools, watch it
/// recover.
#[derive(Debug, Parser)]
#[command(name = "mcp-resilient", version, about)]
pub(crate) struct Cli {
    /// More log output on stderr (-v info, -vv debug). RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub(crate) verbose: u8,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Start the embedded mock server, crash it, and show detection and recovery.
    Demo(DemoArgs),
    /// List a server's tools.
    Tools {
        #[command(flatten)]
        server: ServerArgs,
        /// One JSON document instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Call one tool and print the result as one JSON line.
    Call {
        /// The tool's name on the server.
        tool: String,
        /// The arguments, a JSON object.
        #[arg(default_value = "{}")]
        args_json: String,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Supervise a server until interrupted; print one line per event.
    Watch {
        #[command(flatten)]
        server: ServerArgs,
        /// JSON Lines instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run the embedded mock MCP server (used by the demo and the tests).
    #[command(hide = true, disable_help_flag = true)]
    MockServer {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Run a loopback fault proxy (`tcp` partitions, `http` gateway errors) for experiments
    /// against servers written by others.
    #[command(hide = true, disable_help_flag = true)]
    FaultProxy {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Which transports to show: stdio, sse, http, or all.
    #[arg(long, default_value = "all")]
    pub(crate) transport: String,
}

/// Which server, and the supervision policy.
#[derive(Debug, Args)]
pub(crate) struct ServerArgs {
    /// Run the server as a child process: the command follows `--` at the end of the line.
    #[arg(long)]
    stdio: bool,
    /// An MCP host's config file as it is (Claude Desktop, Claude Code, Cursor, Cline,
    /// Windsurf, VS Code): `mcpServers` or `servers`.
    #[arg(long, requires = "server")]
    config: Option<PathBuf>,
    /// The server's name in `--config`.
    #[arg(long)]
    server: Option<String>,
    /// A remote server's URL.
    #[arg(long)]
    url: Option<String>,
    /// Remote transport: auto (try Streamable HTTP, fall back to legacy SSE), sse or http.
    #[arg(long, default_value = "auto")]
    transport: RemoteKind,
    /// MCP revision: auto (ask with server/discover, fall back to initialize), 2025-11-25 or
    /// 2026-07-28.
    #[arg(long)]
    protocol: Option<ProtocolChoice>,
    /// An HTTP header for every request, `Name: value` (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// The server's name in logs and public tool names (default: `server`).
    #[arg(long)]
    name: Option<String>,
    /// Heartbeat interval, e.g. 30s.
    #[arg(long, value_parser = parse_duration)]
    heartbeat_interval: Option<Duration>,
    /// Heartbeat probe timeout (must be below the interval).
    #[arg(long, value_parser = parse_duration)]
    heartbeat_timeout: Option<Duration>,
    /// Consecutive missed probes that mean death.
    #[arg(long)]
    heartbeat_failures: Option<u32>,
    /// First reconnect delay.
    #[arg(long, value_parser = parse_duration)]
    reconnect_initial: Option<Duration>,
    /// Largest reconnect delay (also the stability window).
    #[arg(long, value_parser = parse_duration)]
    reconnect_max: Option<Duration>,
    /// Consecutive failed attempts per outage before giving up.
    #[arg(long)]
    max_attempts: Option<u32>,
    /// Timeout of one tool call.
    #[arg(long, value_parser = parse_duration)]
    call_timeout: Option<Duration>,
    /// Timeout of one connection attempt; `tools` and `call` also give up on transient
    /// failures (a refused port, say) after this long in all.
    #[arg(long, value_parser = parse_duration)]
    connect_timeout: Option<Duration>,
    /// The child command and its arguments (with --stdio).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

impl ServerArgs {
    /// The configuration these flags describe (not yet resolved).
    pub(crate) fn to_config(&self) -> Result<ServerConfig, String> {
        let mut config = self.base()?;
        if let Some(name) = &self.name {
            config.name = name.clone();
        }
        if let TransportConfig::Remote(remote) = &mut config.transport
            && self.url.is_some()
        {
            remote.kind = self.transport;
        }
        let hb = &mut config.heartbeat;
        if let Some(interval) = self.heartbeat_interval {
            hb.interval = interval;
            if self.heartbeat_timeout.is_none() && hb.timeout >= interval {
                hb.timeout = interval / 3;
            }
        }
        set(&mut hb.timeout, self.heartbeat_timeout);
        set(&mut hb.failures, self.heartbeat_failures);
        let rc = &mut config.reconnect;
        set(&mut rc.initial_delay, self.reconnect_initial);
        set(&mut rc.max_delay, self.reconnect_max);
        set(&mut rc.max_attempts, self.max_attempts);
        set(&mut config.call_timeout, self.call_timeout);
        set(&mut config.connect_timeout, self.connect_timeout);
        set(&mut config.protocol, self.protocol);
        Ok(config)
    }

    fn base(&self) -> Result<ServerConfig, String> {
        let name = self.name.clone().unwrap_or_else(|| "server".to_owned());
        let chosen = [
            self.stdio || !self.command.is_empty(),
            self.config.is_some(),
            self.url.is_some(),
        ];
        match chosen.iter().filter(|c| **c).count() {
            0 => {
                return Err(
                    "name a server: --stdio -- COMMAND…, --config FILE --server NAME, or --url URL"
                        .into(),
                );
            }
            1 => {}
            _ => return Err("--stdio, --config and --url exclude each other".into()),
        }
        if let Some(path) = &self.config {
            let wanted = self.server.as_deref().unwrap_or_default();
            let mut loaded = load_servers_file(path).map_err(|e| e.to_string())?;
            // The other entries' problems do not stop this command, but the user should hear.
            // The wanted entry's own problem is the error below.
            let others = loaded.skipped.iter().map(|s| s.name != wanted);
            for (warning, other) in loaded.warnings().zip(others) {
                if other {
                    eprintln!("mcp-resilient: warning: {warning}");
                }
            }
            if let Some(config) = loaded.take(wanted) {
                return Ok(config);
            }
            if let Some(skipped) = loaded.skipped.iter().find(|s| s.name == wanted) {
                return Err(format!(
                    "server '{wanted}' in {}: {}",
                    path.display(),
                    skipped.error
                ));
            }
            if loaded.disabled.iter().any(|name| name == wanted) {
                return Err(format!(
                    "server '{wanted}' is disabled in {}",
                    path.display()
                ));
            }
            let names: Vec<&str> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
            return Err(format!(
                "no server '{wanted}' in {} (it has: {})",
                path.display(),
                names.join(", ")
            ));
        }
        if let Some(url) = &self.url {
            let mut config = ServerConfig::remote(name, url);
            for header in &self.headers {
                let (key, value) = header
                    .split_once(':')
                    .ok_or_else(|| format!("--header '{header}': expected 'Name: value'"))?;
                config = config.header(key.trim(), value.trim());
            }
            return Ok(config);
        }
        let (command, args) = self
            .command
            .split_first()
            .ok_or("--stdio needs the command after `--`, e.g. --stdio -- my-server --flag")?;
        Ok(ServerConfig::stdio(name, command).args(args.iter().cloned()))
    }
}

fn set<T>(slot: &mut T, value: Option<T>) {
    if let Some(value) = value {
        *slot = value;
    }
}
