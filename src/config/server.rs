//! The configuration of one server: its name, its transport (the kinds are in `transport`),
//! the protocol revision it speaks and its policies.

use std::{fmt, str::FromStr, time::Duration};

use super::{ConfigError, Heartbeat, Limits, Reconnect, RemoteConfig, StdioConfig, UnknownValue};

/// One configured MCP server: its name, its transport and the policies its supervisor follows.
///
/// Build it with [`ServerConfig::stdio`], [`ServerConfig::sse`], [`ServerConfig::http`] or
/// [`ServerConfig::remote`] and the setters, or load it from JSON with
/// `load_servers` (feature `config-files`); then call [`ServerConfig::resolve`] to validate it.
/// Builders never panic: a mistake such as an unparsable URL is kept and reported by `resolve`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerConfig {
    /// Server name, `[A-Za-z0-9_-]{1,32}`, unique in a registry; part of every public tool name.
    ///
    /// Default: none (required).
    pub(crate) name: String,
    /// What to connect to.
    ///
    /// Default: none (required).
    pub(crate) transport: TransportConfig,
    /// Reconnect policy.
    ///
    /// # Default
    /// [`Reconnect::default()`]
    pub(crate) reconnect: Reconnect,
    /// Heartbeat policy.
    ///
    /// # Default
    /// [`Heartbeat::default()`]
    pub(crate) heartbeat: Heartbeat,
    /// Timeout of one `tools/call`. Must be greater than zero.
    ///
    /// # Default
    /// 60 s; at most 24 h
    pub(crate) call_timeout: Duration,
    /// Timeout of one connection attempt: transport, `initialize` and the first `tools/list`.
    /// Must be greater than zero.
    ///
    /// # Default
    /// 30 s; at most 24 h
    pub(crate) connect_timeout: Duration,
    /// Bound on confirming that a generation closed (stdio: the child was reaped) before the next
    /// one may start. Must be greater than zero.
    ///
    /// # Default
    /// 10 s; at most 24 h
    pub(crate) close_timeout: Duration,
    /// How long a call made while the server is connecting or reconnecting waits for it to be
    /// ready again before failing with `Unavailable`: a blip (a restart, a dropped session)
    /// costs the caller a short wait, not a failure. `Some(Duration::ZERO)`: fail at once.
    /// `None`: the default (the proxy gives such servers its own `--call-wait`).
    ///
    /// # Default
    /// `None`, which is 10 s ([`DEFAULT_CALL_WAIT`]); at most 24 h
    pub(in crate::config) call_wait: Option<Duration>,
    /// Bounds on what the server may send: list sizes, message and SSE event sizes, buffered
    /// notifications. A bound exceeded ends the generation with cause `limit_exceeded`.
    ///
    /// # Default
    /// [`Limits::default()`]
    pub(crate) limits: Limits,
    /// Which revision of MCP to speak.
    ///
    /// # Default
    /// [`ProtocolChoice::Auto`]
    pub(crate) protocol: ProtocolChoice,
    /// Whether a tool call lost with its generation (sent, no answer, may have run) is sent
    /// once more to the next generation.
    ///
    /// # Default
    /// [`Replay::Annotated`]: only for tools the server annotated `readOnlyHint` or
    /// `idempotentHint`, for which running twice is the same as running once
    pub(crate) replay: Replay,
    /// How the host answers what the server asks of it (elicitation, sampling, roots), in
    /// server requests and in `input_required` tool results alike.
    ///
    /// # Default
    /// none: the server is told the client can answer none of them
    pub(crate) handlers: crate::host::HostHandlers,
    /// Behind the gateway (`mcp-resilient serve`): one upstream session for every host, or one
    /// per host session. Nothing else reads it.
    ///
    /// # Default
    /// [`Sessions::Shared`]
    pub(in crate::config) sessions: Sessions,
    /// The first builder mistake, reported by `resolve` (builders cannot return errors).
    pub(super) pending: Option<ConfigError>,
}

/// The transport of a server.
#[derive(Debug, Clone, PartialEq)]
pub enum TransportConfig {
    /// A child process speaking MCP on stdin/stdout.
    Stdio(StdioConfig),
    /// An HTTP server: legacy HTTP+SSE, Streamable HTTP, or detected.
    Remote(RemoteConfig),
}

/// Which revision of the MCP protocol a supervisor speaks.
///
/// The two eras differ in everything a supervisor watches: 2025-11-25 and earlier open a session
/// with `initialize` and are probed with `ping`; 2026-07-28 servers are stateless, answer
/// `server/discover` (which is then the probe) and send notifications on a
/// `subscriptions/listen` stream, whose end is the end of the generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProtocolChoice {
    /// Ask with `server/discover` first and fall back to `initialize` when the server does not
    /// know it; remember the era that worked, and detect again when it is refused (`-32022`).
    #[default]
    Auto,
    /// Only 2025-11-25 (and what it negotiates down to): `initialize`, sessions, `ping`.
    V2025_11_25,
    /// Only 2026-07-28: `server/discover`, no session, no `ping`.
    V2026_07_28,
}

impl FromStr for ProtocolChoice {
    type Err = UnknownValue;

    /// `auto`, `2025-11-25` or `2026-07-28`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "auto" => Ok(Self::Auto),
            "2025-11-25" => Ok(Self::V2025_11_25),
            "2026-07-28" => Ok(Self::V2026_07_28),
            other => Err(UnknownValue::new(
                "protocol",
                other,
                "auto, 2025-11-25 or 2026-07-28",
            )),
        }
    }
}

impl fmt::Display for ProtocolChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        })
    }
}

/// How long a call waits for a reconnecting server when the configuration does not say
/// ([`ServerConfig::call_wait`]).
pub const DEFAULT_CALL_WAIT: Duration = Duration::from_secs(10);

impl ServerConfig {
    /// The `call_wait` in effect: the configured one, or [`DEFAULT_CALL_WAIT`].
    pub(crate) fn effective_call_wait(&self) -> Duration {
        self.call_wait.unwrap_or(DEFAULT_CALL_WAIT)
    }

    /// The server's name, `[A-Za-z0-9_-]{1,32}` once resolved: unique in a registry, part of
    /// every public tool name. Set by the constructor ([`with_name`](Self::with_name) replaces it).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What it connects to. Set by the constructor, and by the transport's setters
    /// ([`arg`](Self::arg), [`header`](Self::header), …).
    pub fn transport(&self) -> &TransportConfig {
        &self.transport
    }

    /// The timeout of one connection attempt ([`connect_timeout`](Self::connect_timeout)).
    /// Default: 30 s.
    pub fn get_connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// The reconnect policy ([`reconnect`](Self::reconnect)). Default: [`Reconnect::default()`].
    pub fn get_reconnect(&self) -> &Reconnect {
        &self.reconnect
    }

    /// The heartbeat policy ([`heartbeat`](Self::heartbeat)). Default: [`Heartbeat::default()`].
    pub fn get_heartbeat(&self) -> &Heartbeat {
        &self.heartbeat
    }

    /// The bounds on what the server may send ([`limits`](Self::limits)). Default:
    /// [`Limits::default()`].
    pub fn get_limits(&self) -> &Limits {
        &self.limits
    }

    /// How long a call made during an outage waits for the server ([`call_wait`](Self::call_wait));
    /// `None`, the default, means [`DEFAULT_CALL_WAIT`] (10 s) to the library, and lets the
    /// gateway give such servers its own wait.
    pub fn get_call_wait(&self) -> Option<Duration> {
        self.call_wait
    }

    /// Behind the gateway: one upstream session for every host, or one per host session
    /// ([`sessions`](Self::sessions)). Default: [`Sessions::Shared`].
    pub fn get_sessions(&self) -> Sessions {
        self.sessions
    }
}

/// How the gateway (`mcp-resilient serve`) connects one server for its hosts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Sessions {
    /// One supervised upstream for every host session: right for tool servers that keep no
    /// state per client.
    #[default]
    Shared,
    /// One upstream session per host session, started with its `initialize` and closed with it:
    /// for servers that keep state per client (a browser, a shell).
    PerHost,
}

impl FromStr for Sessions {
    type Err = UnknownValue;

    /// `shared` or `per_host` (also `perHost`, `per-host`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "shared" => Ok(Sessions::Shared),
            "per_host" | "perHost" | "per-host" => Ok(Sessions::PerHost),
            other => Err(UnknownValue::new("sessions", other, "shared or per_host")),
        }
    }
}

/// Whether a tool call lost with its generation is sent again ([`ServerConfig::replay`]).
///
/// A call lost in flight may have run: sending it again may run it twice. That is harmless
/// only for a tool that changes nothing (`readOnlyHint: true`) or whose second run changes
/// nothing more (`idempotentHint: true`), as the server annotated it in the generation that
/// was sent the call. A call that provably did not run is sent again whatever this says.
///
/// The same rule decides whether a 2026-07-28 call whose answer's stream was cut (the server
/// then takes the call as cancelled, but may have run it) is issued again, once, as a new
/// request on the same generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Replay {
    /// Replayed once on the next generation, within the call's deadline, when the tool is
    /// annotated `readOnlyHint` or `idempotentHint`; otherwise the call fails with
    /// `ConnectionLost { may_have_run: true }`.
    #[default]
    Annotated,
    /// Never replayed: a call lost in flight fails with `ConnectionLost { may_have_run: true }`.
    Never,
}

impl FromStr for Replay {
    type Err = UnknownValue;

    /// `annotated` or `never`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "annotated" => Ok(Replay::Annotated),
            "never" => Ok(Replay::Never),
            other => Err(UnknownValue::new("replay", other, "annotated or never")),
        }
    }
}
