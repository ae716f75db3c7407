//! Consuming builders on [`ServerConfig`]. None of them panics; mistakes surface in `resolve`.
//! Over 300 lines: one setter per setting a server has, each with its default; one concept.

use std::{path::PathBuf, time::Duration};

use super::{
    ConfigError, Heartbeat, Http2, Limits, ProtocolChoice, Reconnect, RemoteConfig, RemoteKind,
    ServerConfig, StdioConfig, TransportConfig,
};

impl ServerConfig {
    /// A server named `name` using `transport`, with every policy at its default.
    pub fn new(name: impl Into<String>, transport: TransportConfig) -> Self {
        Self {
            name: name.into(),
            transport,
            reconnect: Reconnect::default(),
            heartbeat: Heartbeat::default(),
            call_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(30),
            close_timeout: Duration::from_secs(10),
            call_wait: None,
            limits: Limits::default(),
            protocol: ProtocolChoice::Auto,
            replay: super::Replay::Annotated,
            handlers: crate::host::HostHandlers::default(),
            sessions: super::Sessions::Shared,
            pending: None,
        }
    }

    /// Sets how the host answers what the server asks of it (elicitation, sampling, roots), in
    /// server requests and in `input_required` tool results alike.
    ///
    /// Default: none; the server is told the client can answer none of them.
    pub fn handlers(mut self, handlers: crate::host::HostHandlers) -> Self {
        self.handlers = handlers;
        self
    }

    /// Sets, behind the gateway, whether one upstream session serves every host or each host
    /// session gets its own. Nothing else reads it.
    ///
    /// Default: [`Sessions::Shared`](super::Sessions::Shared).
    pub fn sessions(mut self, sessions: super::Sessions) -> Self {
        self.sessions = sessions;
        self
    }

    /// Sets whether a call lost with its generation (sent, no answer, may have run) is sent once
    /// more to the next generation.
    ///
    /// Default: [`Replay::Annotated`]: only to tools annotated read-only or idempotent.
    ///
    /// [`Replay::Annotated`]: super::Replay::Annotated
    pub fn replay(mut self, replay: super::Replay) -> Self {
        self.replay = replay;
        self
    }

    /// Sets which revision of MCP to speak.
    ///
    /// Default: [`ProtocolChoice::Auto`].
    pub fn protocol(mut self, protocol: ProtocolChoice) -> Self {
        self.protocol = protocol;
        self
    }

    /// A server run as the child process `command`.
    pub fn stdio(name: impl Into<String>, command: impl Into<String>) -> Self {
        Self::new(name, TransportConfig::Stdio(StdioConfig::new(command)))
    }

    /// A legacy HTTP+SSE server whose SSE stream is at `url`.
    pub fn sse(name: impl Into<String>, url: impl AsRef<str>) -> Self {
        Self::remote_of(name, url.as_ref(), RemoteKind::Sse)
    }

    /// A Streamable HTTP server whose MCP endpoint is `url`.
    pub fn http(name: impl Into<String>, url: impl AsRef<str>) -> Self {
        Self::remote_of(name, url.as_ref(), RemoteKind::Http)
    }

    /// A remote server whose protocol is detected ([`RemoteKind::Auto`]).
    pub fn remote(name: impl Into<String>, url: impl AsRef<str>) -> Self {
        Self::remote_of(name, url.as_ref(), RemoteKind::Auto)
    }

    fn remote_of(name: impl Into<String>, url: &str, kind: RemoteKind) -> Self {
        match url::Url::parse(url) {
            Ok(parsed) => Self::new(
                name,
                TransportConfig::Remote(RemoteConfig::new(parsed, kind)),
            ),
            Err(err) => {
                // Keep a remote transport so `.header()` still applies; `resolve` reports the URL.
                let config = Self::new(
                    name,
                    TransportConfig::Remote(RemoteConfig::new(placeholder_url(), kind)),
                );
                let url = crate::text::redact(url);
                config.defer("transport.url", format!("invalid url `{url}`: {err}"))
            }
        }
    }

    /// Appends one argument (stdio servers only).
    ///
    /// Default: no arguments.
    pub fn arg(self, arg: impl Into<String>) -> Self {
        self.args([arg])
    }

    /// Appends arguments (stdio servers only).
    ///
    /// Default: no arguments.
    pub fn args(mut self, args: impl IntoIterator<Item = impl Into<String>>) -> Self {
        match &mut self.transport {
            TransportConfig::Stdio(stdio) => stdio.args.extend(args.into_iter().map(Into::into)),
            TransportConfig::Remote(_) => {
                return self.defer("transport.args", "arguments apply only to stdio servers");
            }
        }
        self
    }

    /// Sets one environment variable for the child (stdio servers only), on top of the
    /// allowlisted host environment ([`env_allowlist`](Self::env_allowlist)).
    ///
    /// Default: none.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        match &mut self.transport {
            TransportConfig::Stdio(stdio) => {
                stdio.env.insert(key.into(), value.into());
            }
            TransportConfig::Remote(_) => {
                return self.defer("transport.env", "environment applies only to stdio servers");
            }
        }
        self
    }

    /// Sets the child's working directory (stdio servers only).
    ///
    /// Default: none; the child inherits ours.
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        match &mut self.transport {
            TransportConfig::Stdio(stdio) => stdio.cwd = Some(cwd.into()),
            TransportConfig::Remote(_) => {
                return self.defer("transport.cwd", "cwd applies only to stdio servers");
            }
        }
        self
    }

    /// Adds a request header, e.g. `Authorization` (remote servers only). Headers are sent only
    /// to the server's own origin.
    ///
    /// Default: none.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        match &mut self.transport {
            TransportConfig::Remote(remote) => remote.headers.push((name.into(), value.into())),
            TransportConfig::Stdio(_) => {
                return self.defer("transport.headers", "headers apply only to remote servers");
            }
        }
        self
    }

    /// Sets how requests are authorized (remote servers only; see [`crate::auth`]).
    ///
    /// Default: [`Auth::None`](crate::auth::Auth::None).
    pub fn auth(mut self, auth: crate::auth::Auth) -> Self {
        match &mut self.transport {
            TransportConfig::Remote(remote) => remote.auth = auth,
            TransportConfig::Stdio(_) => {
                return self.defer("transport.auth", "auth applies only to remote servers");
            }
        }
        self
    }

    /// Sets the reconnect policy.
    ///
    /// Default: [`Reconnect::default()`].
    pub fn reconnect(mut self, reconnect: Reconnect) -> Self {
        self.reconnect = reconnect;
        self
    }

    /// Sets the heartbeat policy.
    ///
    /// Default: [`Heartbeat::default()`].
    pub fn heartbeat(mut self, heartbeat: Heartbeat) -> Self {
        self.heartbeat = heartbeat;
        self
    }

    /// Sets the timeout of one `tools/call`. Must be greater than zero.
    ///
    /// Default: 60 s; at most 24 h.
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Sets the timeout of one connection attempt: transport, `initialize` and the first
    /// `tools/list`. Must be greater than zero.
    ///
    /// Default: 30 s; at most 24 h.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets the bound on confirming that a generation closed (stdio: the child was reaped)
    /// before the next one may start. Must be greater than zero.
    ///
    /// Default: 10 s; at most 24 h.
    pub fn close_timeout(mut self, timeout: Duration) -> Self {
        self.close_timeout = timeout;
        self
    }

    /// Lets calls made during an outage wait up to `wait` for the server to be ready again
    /// before failing with `Unavailable`; `Duration::ZERO` makes them fail at once.
    ///
    /// Default: unset, which is 10 s ([`DEFAULT_CALL_WAIT`](super::DEFAULT_CALL_WAIT)); at
    /// most 24 h.
    pub fn call_wait(mut self, wait: Duration) -> Self {
        self.call_wait = Some(wait);
        self
    }

    /// Sets the bounds on what the server may send. A bound exceeded ends the generation with
    /// cause `limit_exceeded`.
    ///
    /// Default: [`Limits::default()`].
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Replaces the name the constructor gave (a server loaded from a file, run under another
    /// name). `[A-Za-z0-9_-]{1,32}`, checked by [`resolve`](Self::resolve).
    ///
    /// Default: the constructor's `name`.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Sets the host environment variables passed through to the child (stdio servers only);
    /// all others are cleared.
    ///
    /// Default: `HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER`, `LANG`, `LC_ALL`, `TMPDIR`,
    /// `RUST_LOG`.
    pub fn env_allowlist(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        match &mut self.transport {
            TransportConfig::Stdio(stdio) => {
                stdio.env_allowlist = names.into_iter().map(Into::into).collect();
            }
            TransportConfig::Remote(_) => {
                return self.defer(
                    "transport.env_allowlist",
                    "an environment allowlist applies only to stdio servers",
                );
            }
        }
        self
    }

    /// Sets how long, after closing the child's stdin, to wait for it to exit before `SIGTERM`
    /// (stdio servers only).
    ///
    /// Default: 3 s; at most 24 h.
    pub fn stdin_close_grace(mut self, grace: Duration) -> Self {
        match &mut self.transport {
            TransportConfig::Stdio(stdio) => stdio.stdin_close_grace = grace,
            TransportConfig::Remote(_) => {
                return self.defer(
                    "transport.stdin_close_grace",
                    "stdin_close_grace applies only to stdio servers",
                );
            }
        }
        self
    }

    /// Sets how long, after `SIGTERM`, to wait before `SIGKILL` (stdio servers only).
    ///
    /// Default: 2 s; at most 24 h.
    pub fn term_grace(mut self, grace: Duration) -> Self {
        match &mut self.transport {
            TransportConfig::Stdio(stdio) => stdio.term_grace = grace,
            TransportConfig::Remote(_) => {
                return self.defer(
                    "transport.term_grace",
                    "term_grace applies only to stdio servers",
                );
            }
        }
        self
    }

    /// Applies `set` to the remote transport, or records that `field` applies only to remote
    /// servers.
    fn remote_field(mut self, field: &str, set: impl FnOnce(&mut RemoteConfig)) -> Self {
        match &mut self.transport {
            TransportConfig::Remote(remote) => set(remote),
            TransportConfig::Stdio(_) => {
                return self.defer(
                    &format!("transport.{field}"),
                    format!("{field} applies only to remote servers"),
                );
            }
        }
        self
    }

    /// Sets which HTTP protocol a remote server speaks (remote servers only).
    ///
    /// Default: the constructor's: [`RemoteKind::Auto`] for [`remote`](Self::remote),
    /// [`RemoteKind::Sse`] for [`sse`](Self::sse), [`RemoteKind::Http`] for [`http`](Self::http).
    pub fn remote_kind(self, kind: RemoteKind) -> Self {
        self.remote_field("kind", |remote| remote.kind = kind)
    }

    /// Legacy SSE: sets how long to wait for the `endpoint` event, and for each POST to the
    /// endpoint to be accepted (remote servers only). Must be greater than zero.
    ///
    /// Default: 10 s; at most 24 h.
    pub fn endpoint_timeout(self, timeout: Duration) -> Self {
        self.remote_field("endpoint_timeout", |remote| {
            remote.endpoint_timeout = timeout;
        })
    }

    /// Sets whether an HTTP 400 answer on a live session means the session expired, as some
    /// servers say it (remote servers only).
    ///
    /// Default: `true`.
    pub fn treat_400_as_expired(self, expired: bool) -> Self {
        self.remote_field("treat_400_as_expired", |remote| {
            remote.treat_400_as_expired = expired;
        })
    }

    /// Streamable HTTP: sets whether requests go over HTTP/2 on the connections every session
    /// to the server's origin shares (remote servers only; see [`Http2`]).
    ///
    /// Default: [`Http2::Off`].
    pub fn http2(self, mode: Http2) -> Self {
        self.remote_field("http2", |remote| remote.http2 = mode)
    }

    /// Sets the floor and the ceiling applied to a server's SSE `retry:` hint (remote servers
    /// only). The ceiling must be at least the floor.
    ///
    /// Default: 250 ms and 30 s; each at most 24 h.
    pub fn sse_retry(self, min: Duration, max: Duration) -> Self {
        self.remote_field("sse_retry", |remote| {
            remote.sse_retry_min = min;
            remote.sse_retry_max = max;
        })
    }

    /// Streamable HTTP: sets how many times one SSE response stream may be resumed (remote
    /// servers only).
    ///
    /// Default: 3.
    pub fn sse_max_retries(self, retries: u32) -> Self {
        self.remote_field("sse_max_retries", |remote| remote.sse_max_retries = retries)
    }

    /// Records the first builder mistake for `resolve` to report.
    fn defer(mut self, path: &str, message: impl Into<String>) -> Self {
        self.pending
            .get_or_insert_with(|| ConfigError::new(path, message));
        self
    }
}

/// Stands in for a URL that did not parse; never used, because `resolve` rejects the config.
fn placeholder_url() -> url::Url {
    url::Url::parse("about:invalid").expect("a constant URL parses")
}
