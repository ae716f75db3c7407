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
    /// Serve MCP on stdio for a host (Claude Desktop, Claude Code, Cursor, VS Code, …) with
    /// supervised upstreams behind it: one transparently, or several under public names.
    Proxy(ProxyArgs),
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

/// `proxy`: the upstreams, and how the proxy answers the host.
#[derive(Debug, Args)]
pub(crate) struct ProxyArgs {
    #[command(flatten)]
    pub(crate) server: ServerArgs,
    /// Show every upstream's tools and prompts as `mcp__<server>__<name>`, even a single one
    /// (the default for two or more).
    #[arg(long)]
    pub(crate) aggregate: bool,
    /// How long the host's `initialize` waits for the upstreams before it is answered with what
    /// the proxy knows.
    #[arg(long, value_parser = parse_duration, default_value = "10s")]
    pub(crate) startup_wait: Duration,
    /// How long a call made during an outage waits for the next generation (for servers whose
    /// configuration sets no `callWait`).
    #[arg(long, value_parser = parse_duration, default_value = "10s")]
    pub(crate) call_wait: Duration,
}

/// Which server, and the supervision policy.
#[derive(Debug, Args)]
pub(crate) struct ServerArgs {
    /// Run the server as a child process: the command follows `--` at the end of the line.
    #[arg(long)]
    stdio: bool,
    /// An MCP host's config file as it is (Claude Desktop, Claude Code, Cursor, Cline,
    /// Windsurf, VS Code): `mcpServers` or `servers`.
    #[arg(long)]
    config: Option<PathBuf>,
    /// The server's name in `--config` (`proxy` takes it more than once, or none for all).
    #[arg(long = "server", value_name = "NAME")]
    servers: Vec<String>,
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
    /// The configuration these flags describe (not yet resolved): exactly one server.
    pub(crate) fn to_config(&self) -> Result<ServerConfig, String> {
        if self.config.is_some() && self.servers.len() != 1 {
            return Err("--config needs the server to use: --server NAME".into());
        }
        let mut configs = self.to_configs()?;
        Ok(configs.remove(0))
    }

    /// The configurations these flags describe (not yet resolved): one for `--url` and
    /// `--stdio`, the named ones (or all) of `--config`. The policy flags apply to each.
    pub(crate) fn to_configs(&self) -> Result<Vec<ServerConfig>, String> {
        self.base()?
            .into_iter()
            .map(|config| self.with_policy(config))
            .collect()
    }

    /// Whether the servers come from `--config` (then their names are the file's).
    pub(crate) fn uses_file(&self) -> bool {
        self.config.is_some()
    }

    /// Whether `--name` was given.
    pub(crate) fn named(&self) -> bool {
        self.name.is_some()
    }

    fn with_policy(&self, mut config: ServerConfig) -> Result<ServerConfig, String> {
        if let Some(name) = &self.name
            && (self.config.is_none() || self.servers.len() == 1)
        {
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

    fn base(&self) -> Result<Vec<ServerConfig>, String> {
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
            let mut loaded = load_servers_file(path).map_err(|e| e.to_string())?;
            // Other entries' problems do not stop this command, but the user should hear of
            // them; a wanted entry's own problem is its error below.
            let others = loaded
                .skipped
                .iter()
                .map(|s| !self.servers.contains(&s.name));
            for (warning, other) in loaded.warnings().zip(others) {
                if other {
                    eprintln!("mcp-resilient: warning: {warning}");
                }
            }
            if self.servers.is_empty() {
                return Ok(std::mem::take(&mut loaded.servers));
            }
            let names: Vec<String> = loaded.servers.iter().map(|s| s.name.clone()).collect();
            return self
                .servers
                .iter()
                .map(|wanted| {
                    if let Some(config) = loaded.take(wanted) {
                        return Ok(config);
                    }
                    if let Some(skipped) = loaded.skipped.iter().find(|s| &s.name == wanted) {
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
                    Err(format!(
                        "no server '{wanted}' in {} (it has: {})",
                        path.display(),
                        names.join(", ")
                    ))
                })
                .collect();
        }
        if let Some(url) = &self.url {
            let mut config = ServerConfig::remote(name, url);
            for header in &self.headers {
                let (key, value) = header
                    .split_once(':')
                    .ok_or_else(|| format!("--header '{header}': expected 'Name: value'"))?;
                config = config.header(key.trim(), value.trim());
            }
            return Ok(vec![config]);
        }
        let (command, args) = self
            .command
            .split_first()
            .ok_or("--stdio needs the command after `--`, e.g. --stdio -- my-server --flag")?;
        Ok(vec![
            ServerConfig::stdio(name, command).args(args.iter().cloned()),
        ])
    }
}

fn set<T>(slot: &mut T, value: Option<T>) {
    if let Some(value) = value {
        *slot = value;
    }
}
