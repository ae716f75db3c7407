//! Command-line arguments (clap's types); their translation into a
//! [`ServerConfig`](mcp_resilient::ServerConfig) is
//! `config`.

use std::{path::PathBuf, time::Duration};

use clap::{Args, Parser, Subcommand};

mod config;

use mcp_resilient::config::{MAX_DURATION, ProtocolChoice, RemoteKind};
use mcp_resilient::config::{format_duration, parse_duration};

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
        #[command(flatten)]
        wait: WaitArgs,
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
        #[command(flatten)]
        wait: WaitArgs,
    },
    /// Authorize a remote server with OAuth (a browser, PKCE, a loopback redirect on
    /// 127.0.0.1) and store its tokens for `tools`, `call`, `watch` and `proxy`.
    Login {
        /// The server's name: the token file's name, and the `--server` of `--config`.
        #[arg(value_name = "NAME")]
        server_name: String,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the authorization URL instead of opening a browser.
        #[arg(long)]
        no_browser: bool,
        /// Follow the authorization redirects without a browser (for servers that approve
        /// without a person, such as test servers).
        #[arg(long, hide = true)]
        headless: bool,
        /// How long to wait for the authorization to complete.
        #[arg(long, value_parser = flag_duration, default_value = "5m")]
        wait: Duration,
    },
    /// Forget the stored tokens of a server.
    Logout {
        /// The server's name.
        name: String,
    },
    /// What authorization is stored.
    Auth {
        #[command(subcommand)]
        command: AuthCommand,
    },
    /// Supervise a server until interrupted; print one line per event.
    Watch {
        #[command(flatten)]
        server: ServerArgs,
        /// JSON Lines instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        telemetry: crate::telemetry::TelemetryArgs,
    },
    /// Serve MCP on stdio for a host (Claude Desktop, Claude Code, Cursor, VS Code, …) with
    /// supervised upstreams behind it: one transparently, or several under public names.
    Proxy(ProxyArgs),
    /// Serve MCP over Streamable HTTP for many hosts at once, with supervised upstreams behind
    /// it (shared by every host, or one session per host).
    Serve(Box<crate::serve::ServeArgs>),
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

/// `auth …`.
#[derive(Debug, Subcommand)]
pub(crate) enum AuthCommand {
    /// List the stored tokens: server, URL, scopes, and when each expires.
    Status {
        /// One JSON document instead of a table.
        #[arg(long)]
        json: bool,
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
    #[arg(long, value_parser = flag_duration, default_value = "10s")]
    pub(crate) startup_wait: Duration,
    /// How long a call made during an outage waits for the next generation (for servers whose
    /// configuration sets no `callWait`).
    #[arg(long, value_parser = flag_duration, default_value = "10s")]
    pub(crate) call_wait: Duration,
    #[command(flatten)]
    pub(crate) telemetry: crate::telemetry::TelemetryArgs,
}

/// `tools` and `call`: whether to wait for a server that is not up yet.
#[derive(Debug, Args)]
pub(crate) struct WaitArgs {
    /// Wait up to this long for the server (e.g. 30s): a refused connection is retried instead
    /// of ending the command at once, and this replaces --connect-timeout as the longest wait
    /// in all.
    #[arg(long, value_name = "DURATION", value_parser = positive_duration)]
    pub(crate) wait: Option<Duration>,
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
    /// The server's name in logs and public tool names (default: `server`; `proxy` names a
    /// `--url` server after its host and a `--stdio` one after its command or package).
    #[arg(long)]
    name: Option<String>,
    /// How requests to `--url` are authorized: none, oauth (tokens from `mcp-resilient login`),
    /// or bearer (the token in the variable named by --token-env).
    #[arg(long, value_name = "none|oauth|bearer")]
    auth: Option<String>,
    /// With `--auth bearer`: the environment variable holding the token.
    #[arg(long, value_name = "VAR")]
    token_env: Option<String>,
    /// OAuth: a client id registered beforehand (default: dynamic registration).
    #[arg(long)]
    client_id: Option<String>,
    /// OAuth: the environment variable holding that client's secret.
    #[arg(long, value_name = "VAR")]
    client_secret_env: Option<String>,
    /// OAuth: a scope to ask for (repeatable; default: what the server suggests).
    #[arg(long = "scope", value_name = "SCOPE")]
    scopes: Vec<String>,
    /// OAuth: the port of the loopback redirect (default: any free port).
    #[arg(long)]
    callback_port: Option<u16>,
    /// OAuth: obtain tokens with client credentials (machine to machine) instead of a login;
    /// needs --client-id and --client-secret-env.
    #[arg(long)]
    client_credentials: bool,
    /// Heartbeat interval, e.g. 30s.
    #[arg(long, value_parser = flag_duration)]
    heartbeat_interval: Option<Duration>,
    /// Heartbeat probe timeout (must be below the interval).
    #[arg(long, value_parser = flag_duration)]
    heartbeat_timeout: Option<Duration>,
    /// Consecutive missed probes that mean death.
    #[arg(long)]
    heartbeat_failures: Option<u32>,
    /// First reconnect delay.
    #[arg(long, value_parser = flag_duration)]
    reconnect_initial: Option<Duration>,
    /// Largest reconnect delay (also the stability window).
    #[arg(long, value_parser = flag_duration)]
    reconnect_max: Option<Duration>,
    /// Consecutive failed attempts per outage before giving up.
    #[arg(long)]
    max_attempts: Option<u32>,
    /// Timeout of one tool call.
    #[arg(long, value_parser = flag_duration)]
    call_timeout: Option<Duration>,
    /// Timeout of one connection attempt; `tools` and `call` also give up on transient
    /// failures (a refused port, say) after this long in all.
    #[arg(long, value_parser = flag_duration)]
    connect_timeout: Option<Duration>,
    /// The child command and its arguments (with --stdio).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// A duration flag that must be more than zero.
fn positive_duration(s: &str) -> Result<Duration, String> {
    match flag_duration(s)? {
        Duration::ZERO => Err("must be more than 0".to_owned()),
        d => Ok(d),
    }
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
