//! What a one-shot command connects to, as a person names it, and how it recognises a
//! connection that nothing accepts.
//!
//! # How a refusal is recognised, and how far that holds
//!
//! The status carries a [`Death`]: a [`Cause`] (structured) and a detail (text). A refused TCP
//! connection is an attempt that failed to connect, `connect_failed`, whose detail ends with the
//! operating system's error as std formats it: `Connection refused (os error 111)` (the
//! errno is 61 on macOS and the BSDs). The cause is read as such; the refusal itself only from
//! that text, matched exactly as std writes an OS error (`strerror` text, then ` (os error `).
//! The library keeps no structured trace of the I/O error kind.
//!
//! - A refusal not recognised (another platform's wording, such as Windows' "actively refused
//!   it", or a library that stops quoting the I/O error) is retried within the connect timeout,
//!   as every other transient failure: the command is slow to fail, never wrong.
//! - A failure taken for a refusal needs a `connect_failed` detail that quotes that text without
//!   a refused connection of ours: a gateway's 502 whose body quotes its own refused upstream.
//!   The command then fails at once, with advice that is still right (start the server, or
//!   wait for it), about an address that is not the one that refused.
//! - Rust programs do not call `setlocale`, so `strerror` speaks the C locale: the text does not
//!   change with the user's language.

use crate::text::redact_url;
use mcp_resilient::{
    ServerConfig,
    config::TransportConfig,
    state::{Cause, Death},
};

/// The server of a one-shot command, as its messages name it.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// The URL without credentials, or the stdio command.
    pub(crate) shown: String,
    /// `host:port` of a remote server: where a refused connection was tried.
    pub(crate) address: Option<String>,
}

impl Target {
    pub(crate) fn of(config: &ServerConfig) -> Target {
        match config.transport() {
            TransportConfig::Remote(remote) => Target {
                shown: redact_url(remote.url()).to_string(),
                address: remote.url().host_str().map(|host| {
                    match remote.url().port_or_known_default() {
                        Some(port) => format!("{host}:{port}"),
                        None => host.to_owned(),
                    }
                }),
            },
            TransportConfig::Stdio(stdio) => Target {
                shown: stdio.command().to_owned(),
                address: None,
            },
        }
    }
}

/// How std ends the text of an `ECONNREFUSED` on Linux, macOS and the BSDs (see the
/// [module docs](self)).
const REFUSED: &str = "Connection refused (os error ";

/// True when `death` is a connection that nothing accepted: an attempt that failed to connect
/// because the operating system refused it (see the [module docs](self) for how far this holds).
pub(crate) fn is_refusal(death: &Death) -> bool {
    death.cause == Cause::ConnectFailed && death.detail.contains(REFUSED)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn death(cause: Cause, detail: &str) -> Death {
        Death::new(cause, detail)
    }

    #[test]
    fn a_refused_connect_is_a_refusal_and_other_failures_are_not() {
        let refused = "server/discover failed: error sending request for url \
                       (http://127.0.0.1:1/mcp): Connection refused (os error 111)";
        assert!(is_refusal(&death(Cause::ConnectFailed, refused)));
        // The same words in another phase, or said by a person, are not an OS refusal.
        assert!(!is_refusal(&death(Cause::TransportError, refused)));
        assert!(!is_refusal(&death(
            Cause::ConnectFailed,
            "HTTP 502 Bad Gateway: upstream connection refused"
        )));
        assert!(!is_refusal(&death(
            Cause::ConnectFailed,
            "initialize timed out (connect timeout 30s)"
        )));
    }

    #[test]
    fn a_remote_target_is_named_without_credentials_and_with_its_port() {
        let config = ServerConfig::remote("s", "http://user:secret@127.0.0.1:8000/mcp?x=1");
        let target = Target::of(&config);
        assert!(!target.shown.contains("secret"), "{target:?}");
        assert_eq!(target.address.as_deref(), Some("127.0.0.1:8000"));
        let https = Target::of(&ServerConfig::remote("s", "https://example.com/mcp"));
        assert_eq!(https.address.as_deref(), Some("example.com:443"));
        let ipv6 = Target::of(&ServerConfig::remote("s", "http://[::1]:9/mcp"));
        assert_eq!(ipv6.address.as_deref(), Some("[::1]:9"));
        let stdio = Target::of(&ServerConfig::stdio("s", "my-server"));
        assert_eq!((stdio.shown.as_str(), stdio.address), ("my-server", None));
    }
}
