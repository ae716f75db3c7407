//! Command-line arguments and their translation into a [`ServerConfig`].

use std::{path::PathBuf, time::Duration};

use clap::{Args, Parser, Subcommand};
use mcp_resilient::auth::{Auth, Grant, OAuthConfig};
use mcp_resilient::config::{
    MAX_DURATION, ProtocolChoice, RemoteKind, ServerConfig, TransportConfig, format_duration,
    load_servers_file, parse_duration,
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
        if let Some(auth) = self.auth()?
            && let TransportConfig::Remote(remote) = &mut config.transport
        {
            remote.auth = auth;
        }
        Ok(config)
    }

    /// The `--auth` flags as an [`Auth`], if any was given.
    fn auth(&self) -> Result<Option<Auth>, String> {
        let oauth_flags = self.client_id.is_some()
            || self.client_secret_env.is_some()
            || !self.scopes.is_empty()
            || self.callback_port.is_some()
            || self.client_credentials;
        let kind = match (&self.auth, oauth_flags, &self.token_env) {
            (Some(kind), _, _) => kind.as_str(),
            (None, true, _) => "oauth",
            (None, false, Some(_)) => "bearer",
            (None, false, None) => return Ok(None),
        };
        match kind {
            "none" => Ok(Some(Auth::None)),
            "bearer" => {
                let env = self.token_env.clone().ok_or(
                    "--auth bearer needs --token-env VAR (the variable holding the token)",
                )?;
                Ok(Some(Auth::bearer_env(env)))
            }
            "oauth" => {
                let grant = match self.client_credentials {
                    true => Grant::ClientCredentials,
                    false => Grant::AuthorizationCode,
                };
                let mut oauth = OAuthConfig::default()
                    .grant(grant)
                    .scopes(self.scopes.clone());
                oauth.client_id = self.client_id.clone();
                oauth.client_secret_env = self.client_secret_env.clone();
                oauth.callback_port = self.callback_port.unwrap_or(0);
                Ok(Some(Auth::OAuth(oauth)))
            }
            other => Err(format!("--auth {other}: expected none, oauth or bearer")),
        }
    }

    /// `login NAME`: the server NAME of `--config`, or `--url` under that name.
    pub(crate) fn named_as(&mut self, name: &str) {
        if self.config.is_some() {
            self.servers = vec![name.to_owned()];
        } else {
            self.name = Some(name.to_owned());
        }
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
                    super::safe::eprint("mcp-resilient: warning", warning);
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

/// A duration flag: [`parse_duration`], at most [`MAX_DURATION`] (24 h) like every duration of
/// a configuration. Refused here, clap names the flag and exits 2.
fn flag_duration(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d > MAX_DURATION {
        return Err(format!(
            "must be at most {}, got {}",
            format_duration(MAX_DURATION),
            format_duration(d)
        ));
    }
    Ok(d)
}

fn set<T>(slot: &mut T, value: Option<T>) {
    if let Some(value) = value {
        *slot = value;
    }
}
