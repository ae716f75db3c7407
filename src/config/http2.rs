//! [`Http2`]: whether a Streamable HTTP server is spoken to over HTTP/2.

use std::str::FromStr;

/// Whether a Streamable HTTP server's requests go over HTTP/2, on connections the process's
/// sessions to one origin share (each connection carries as many of them as the server's
/// `SETTINGS_MAX_CONCURRENT_STREAMS` allows; another opens when they are full). A `GOAWAY`
/// drains a connection without ending any session; a request the server refused unprocessed
/// is sent again. A server that does not speak HTTP/2 is remembered and spoken to in HTTP/1.1.
/// Requests through a configured HTTP proxy always take HTTP/1.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Http2 {
    /// HTTP/1.1 through the HTTP client (`Supervisor::http_client`), one connection per
    /// request in flight.
    #[default]
    Off,
    /// HTTP/2 where TLS's ALPN agrees on `h2` (`https` URLs; TLS trusts the platform's roots,
    /// not a client given to `Supervisor::http_client`); HTTP/1.1 otherwise.
    Auto,
    /// As `Auto`, and HTTP/2 without asking (h2c, prior knowledge) to `http` URLs.
    PriorKnowledge,
}

impl FromStr for Http2 {
    type Err = super::unknown::UnknownValue;

    /// `off`, `auto`, `prior-knowledge` (or `prior_knowledge`, `priorKnowledge`).
    /// Case-insensitive.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "off" => Ok(Self::Off),
            "auto" => Ok(Self::Auto),
            "prior-knowledge" | "prior_knowledge" | "priorknowledge" => Ok(Self::PriorKnowledge),
            _ => Err(super::unknown::UnknownValue::new(
                "http2",
                s,
                "off, auto or prior-knowledge",
            )),
        }
    }
}
