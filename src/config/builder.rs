//! Consuming builders on [`ServerConfig`]. None of them panics; mistakes surface in `resolve`.

use std::{path::PathBuf, time::Duration};

use super::{
    ConfigError, Heartbeat, Limits, ProtocolChoice, Reconnect, RemoteConfig, RemoteKind,
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

    /// How the host answers what the server asks of it (elicitation, sampling, roots).
    pub fn handlers(mut self, handlers: crate::host::HostHandlers) -> Self {
        self.handlers = handlers;
        self
    }

    /// Behind the gateway: shared by every host, or one upstream session per host
    /// ([`Sessions::Shared`](super::Sessions::Shared) by default).
    pub fn sessions(mut self, sessions: super::Sessions) -> Self {
        self.sessions = sessions;
        self
    }

    /// Whether a call lost with its generation is sent again ([`Replay::Annotated`] by default:
    /// only to tools annotated read-only or idempotent).
    ///
    /// [`Replay::Annotated`]: super::Replay::Annotated
    pub fn replay(mut self, replay: super::Replay) -> Self {
        self.replay = replay;
        self
    }

    /// Which revision of MCP to speak ([`ProtocolChoice::Auto`] by default).
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
        Self::remote_kind(name, url.as_ref(), RemoteKind::Sse)
    }

    /// A Streamable HTTP server whose MCP endpoint is `url`.
    pub fn http(name: impl Into<String>, url: impl AsRef<str>) -> Self {
        Self::remote_kind(name, url.as_ref(), RemoteKind::Http)
    }

    /// A remote server whose protocol is detected ([`RemoteKind::Auto`]).
    pub fn remote(name: impl Into<String>, url: impl AsRef<str>) -> Self {
        Self::remote_kind(name, url.as_ref(), RemoteKind::Auto)
    }

    fn remote_kind(name: impl Into<String>, url: &str, kind: RemoteKind) -> Self {
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
    pub fn arg(self, arg: impl Into<String>) -> Self {
        self.args([arg])
    }

    /// Appends arguments (stdio servers only).
    pub fn args(mut self, args: impl IntoIterator<Item = impl Into<String>>) -> Self {
        match &mut self.transport {
            TransportConfig::Stdio(stdio) => stdio.args.extend(args.into_iter().map(Into::into)),
            TransportConfig::Remote(_) => {
                return self.defer("transport.args", "arguments apply only to stdio servers");
            }
        }
        self
    }

    /// Sets one environment variable for the child (stdio servers only).
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
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        match &mut self.transport {
            TransportConfig::Stdio(stdio) => stdio.cwd = Some(cwd.into()),
            TransportConfig::Remote(_) => {
                return self.defer("transport.cwd", "cwd applies only to stdio servers");
            }
        }
        self
    }

    /// Adds a request header, e.g. `Authorization` (remote servers only).
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
    pub fn reconnect(mut self, reconnect: Reconnect) -> Self {
        self.reconnect = reconnect;
        self
    }

    /// Sets the heartbeat policy.
    pub fn heartbeat(mut self, heartbeat: Heartbeat) -> Self {
        self.heartbeat = heartbeat;
        self
    }

    /// Sets the timeout of one `tools/call`.
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Sets the timeout of one connection attempt.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets the bound on confirming that a generation closed.
    pub fn close_timeout(mut self, timeout: Duration) -> Self {
        self.close_timeout = timeout;
        self
    }

    /// Lets calls made during an outage wait up to `wait` for the server to be ready again
    /// (default 10 s); `Duration::ZERO` makes them fail at once.
    pub fn call_wait(mut self, wait: Duration) -> Self {
        self.call_wait = Some(wait);
        self
    }

    /// Sets the bounds on what the server may send.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets the most `tools/list` pages fetched in one tool sync: the same as
    /// [`Limits::max_list_pages`], kept from before there were [`Limits`].
    pub fn max_tool_pages(mut self, pages: u32) -> Self {
        self.limits.max_list_pages = pages;
        self
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
