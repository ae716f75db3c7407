//! The transports a server is reached by: a child process ([`StdioConfig`]) or HTTP
//! ([`RemoteConfig`], speaking the protocol [`RemoteKind`] names).

use std::{collections::BTreeMap, fmt, path::PathBuf, str::FromStr, time::Duration};

/// A server run as a child process.
///
/// Its `Debug` output shows the names of `env` only: values (an API key) are secrets.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct StdioConfig {
    /// Program to run, looked up in `PATH` when it has no slash. Must not be empty.
    ///
    /// Default: none (required).
    pub(crate) command: String,
    /// Arguments.
    ///
    /// # Default
    /// empty
    pub(crate) args: Vec<String>,
    /// Variables set for the child, on top of the allowlisted host environment.
    ///
    /// # Default
    /// empty
    pub(crate) env: BTreeMap<String, String>,
    /// Working directory of the child; `None` inherits ours.
    ///
    /// # Default
    /// `None`
    pub(crate) cwd: Option<PathBuf>,
    /// Host environment variables passed through to the child; all others are cleared.
    ///
    /// # Default
    /// `HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER`, `LANG`, `LC_ALL`, `TMPDIR`, `RUST_LOG`
    pub(crate) env_allowlist: Vec<String>,
    /// After closing the child's stdin, how long to wait for it to exit before `SIGTERM`.
    ///
    /// # Default
    /// 3 s; at most 24 h
    pub(crate) stdin_close_grace: Duration,
    /// After `SIGTERM`, how long to wait before `SIGKILL`.
    ///
    /// # Default
    /// 2 s; at most 24 h
    pub(crate) term_grace: Duration,
}

impl fmt::Debug for StdioConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let env: Vec<String> = self
            .env
            .keys()
            .map(|name| format!("{name}=<redacted>"))
            .collect();
        f.debug_struct("StdioConfig")
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env", &env)
            .field("cwd", &self.cwd)
            .field("env_allowlist", &self.env_allowlist)
            .field("stdin_close_grace", &self.stdin_close_grace)
            .field("term_grace", &self.term_grace)
            .finish()
    }
}

impl StdioConfig {
    /// The host variables passed through by default.
    pub(in crate::config) const DEFAULT_ENV_ALLOWLIST: [&'static str; 10] = [
        "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR", "RUST_LOG",
    ];

    /// Runs `command` with no arguments and every other field at its default.
    pub(crate) fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            env_allowlist: Self::DEFAULT_ENV_ALLOWLIST.map(str::to_owned).to_vec(),
            stdin_close_grace: Duration::from_secs(3),
            term_grace: Duration::from_secs(2),
        }
    }

    /// The program to run, looked up in `PATH` when it has no slash.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Its arguments ([`ServerConfig::arg`](super::ServerConfig::arg)). Default: none.
    pub fn args(&self) -> &[String] {
        &self.args
    }

    /// The names of the variables set for the child ([`ServerConfig::env`]), sorted; their
    /// values are secrets and stay inside. Default: none.
    ///
    /// [`ServerConfig::env`]: super::ServerConfig::env
    pub fn env_names(&self) -> impl Iterator<Item = &str> {
        self.env.keys().map(String::as_str)
    }

    /// The child's working directory ([`ServerConfig::cwd`](super::ServerConfig::cwd));
    /// `None`, the default, inherits ours.
    pub fn cwd(&self) -> Option<&std::path::Path> {
        self.cwd.as_deref()
    }
}

/// Which HTTP protocol a remote server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RemoteKind {
    /// Try Streamable HTTP, fall back to legacy SSE on 400/404/405, remember what worked.
    #[default]
    Auto,
    /// Legacy HTTP+SSE (spec 2024-11-05): `GET` a stream, `POST` to its `endpoint`.
    Sse,
    /// Streamable HTTP (spec 2025-03-26 and later).
    Http,
}

impl FromStr for RemoteKind {
    type Err = super::unknown::UnknownValue;

    /// `auto`, `sse`, `http`; `streamable-http`, `streamable_http` and `streamableHttp` also mean
    /// [`RemoteKind::Http`]. Case-insensitive.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "sse" => Ok(Self::Sse),
            "http" | "streamable-http" | "streamable_http" | "streamablehttp" => Ok(Self::Http),
            _ => Err(super::unknown::UnknownValue::new(
                "transport",
                s,
                "auto, sse, http or streamable-http",
            )),
        }
    }
}

impl fmt::Display for RemoteKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::Sse => "sse",
            Self::Http => "http",
        })
    }
}

/// A server reached over HTTP.
///
/// Its `Debug` output shows header names only: values (an `Authorization`, an API key) are
/// secrets. The URL is shown without its userinfo, query values and fragment.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct RemoteConfig {
    /// The SSE URL (legacy) or the MCP endpoint (Streamable HTTP). `http` or `https` only.
    ///
    /// Default: none (required).
    pub(crate) url: url::Url,
    /// Which protocol to speak.
    ///
    /// # Default
    /// [`RemoteKind::Auto`]
    pub(crate) kind: RemoteKind,
    /// Extra request headers (e.g. `Authorization`), sent only to the server's own origin.
    ///
    /// # Default
    /// empty
    pub(crate) headers: Vec<(String, String)>,
    /// Legacy SSE: how long to wait for the `endpoint` event, and for each POST to the endpoint
    /// to be accepted (a server answers it with 202 at once; the reply comes on the stream).
    /// Must be greater than zero.
    ///
    /// # Default
    /// 10 s; at most 24 h
    pub(crate) endpoint_timeout: Duration,
    /// Whether an HTTP 400 answer on a live session means the session expired (some servers say
    /// "no valid session" with 400 instead of 404).
    ///
    /// # Default
    /// `true`
    pub(crate) treat_400_as_expired: bool,
    /// Floor applied to a server's SSE `retry:` hint.
    ///
    /// # Default
    /// 250 ms; at most 24 h
    pub(crate) sse_retry_min: Duration,
    /// Ceiling applied to a server's SSE `retry:` hint. Must be at least `sse_retry_min`.
    ///
    /// # Default
    /// 30 s; at most 24 h
    pub(crate) sse_retry_max: Duration,
    /// Streamable HTTP: how many times one SSE response stream may be resumed.
    ///
    /// # Default
    /// 3
    pub(crate) sse_max_retries: u32,
    /// How requests are authorized (a bearer token from the environment, or OAuth).
    ///
    /// # Default
    /// [`Auth::None`](crate::auth::Auth::None)
    pub(crate) auth: crate::auth::Auth,
    /// Streamable HTTP: whether requests go over the origin's shared HTTP/2 connections.
    ///
    /// # Default
    /// [`Http2::Off`](super::Http2::Off)
    pub(crate) http2: super::Http2,
}

impl fmt::Debug for RemoteConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<String> = self
            .headers
            .iter()
            .map(|(name, _)| format!("{name}: <redacted>"))
            .collect();
        f.debug_struct("RemoteConfig")
            .field("url", &crate::text::redact_url(&self.url).as_str())
            .field("kind", &self.kind)
            .field("headers", &headers)
            .field("endpoint_timeout", &self.endpoint_timeout)
            .field("treat_400_as_expired", &self.treat_400_as_expired)
            .field("sse_retry_min", &self.sse_retry_min)
            .field("sse_retry_max", &self.sse_retry_max)
            .field("sse_max_retries", &self.sse_max_retries)
            .field("auth", &self.auth)
            .field("http2", &self.http2)
            .finish()
    }
}

impl RemoteConfig {
    /// Connects to `url` with `kind` and every other field at its default.
    pub(crate) fn new(url: url::Url, kind: RemoteKind) -> Self {
        Self {
            url,
            kind,
            headers: Vec::new(),
            endpoint_timeout: Duration::from_secs(10),
            treat_400_as_expired: true,
            sse_retry_min: Duration::from_millis(250),
            sse_retry_max: Duration::from_secs(30),
            sse_max_retries: 3,
            auth: crate::auth::Auth::None,
            http2: super::Http2::Off,
        }
    }

    /// The SSE URL (legacy) or the MCP endpoint (Streamable HTTP). It may hold credentials (a
    /// query value, a userinfo): show it redacted, as this type's `Debug` does.
    pub fn url(&self) -> &url::Url {
        &self.url
    }

    /// Which protocol it speaks ([`ServerConfig::remote_kind`](super::ServerConfig::remote_kind)).
    /// Default: [`RemoteKind::Auto`].
    pub fn kind(&self) -> RemoteKind {
        self.kind
    }

    /// How its requests are authorized ([`ServerConfig::auth`](super::ServerConfig::auth)).
    /// Default: [`Auth::None`](crate::auth::Auth::None).
    pub fn auth(&self) -> &crate::auth::Auth {
        &self.auth
    }
}
