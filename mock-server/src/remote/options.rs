//! How to start an in-process [`MockServer`](crate::MockServer): [`MockOptions`] and the
//! transports it may speak ([`MockTransport`]).

use std::time::Duration;

use super::oauth::OAuthOptions;

/// Which MCP transports a remote mock server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MockTransport {
    /// Legacy HTTP+SSE (2024-11-05): `GET /sse` + `POST /message?sessionId=…`.
    Sse,
    /// Streamable HTTP at `/mcp`.
    Http,
    /// Both route sets on one port.
    Both,
}

/// How to start an in-process [`MockServer`](crate::MockServer).
#[derive(Debug, Clone)]
pub struct MockOptions {
    /// # Default
    /// [`MockTransport::Both`].
    pub transport: MockTransport,
    /// Port on 127.0.0.1; 0 picks a free one.
    ///
    /// # Default
    /// 0.
    pub port: u16,
    /// Identity reported by `whoami` and `/_mock/state`.
    ///
    /// # Default
    /// `None`: 8 random hex digits.
    pub boot_id: Option<String>,
    /// Number of extra echo-like tools `extra_0` … `extra_{N-1}`.
    ///
    /// # Default
    /// 0.
    pub extra_tools: usize,
    /// The SSE `retry:` hint of Streamable HTTP streams.
    ///
    /// # Default
    /// 100 ms.
    pub sse_retry: Duration,
    /// Where the legacy SSE stream is opened (`GET`); its messages go to `/message`.
    ///
    /// # Default
    /// `"/sse"`.
    pub sse_path: String,
    /// Where Streamable HTTP is served. Giving both transports' paths the same value across a
    /// restart models a server redeployed from legacy SSE to Streamable HTTP at one URL.
    ///
    /// # Default
    /// `"/mcp"`.
    pub mcp_path: String,
    /// Serve Streamable HTTP without sessions (rmcp's `legacy_session_mode: false`); can be
    /// switched later with [`Faults::set_stateless`](crate::Faults::set_stateless).
    ///
    /// 2026-07-28 requests are always served without a session, so this only changes what
    /// initialize-era clients get: `initialize` is answered without an `Mcp-Session-Id`, every
    /// request is served on its own by a fresh handler (the version comes from its
    /// `MCP-Protocol-Version` header, the client's capabilities are unknown, so `confirm`
    /// answers a tool error and no `list_changed` reaches it), and `GET`/`DELETE /mcp` answer
    /// 405 (there is no standalone stream). Legacy SSE keeps its sessions.
    ///
    /// # Default
    /// `false`.
    pub stateless: bool,
    /// OAuth mode: every MCP route (both transports) needs `Authorization: Bearer <token>`,
    /// and the server is its own OAuth 2.1 authorization server on the same port (see the crate
    /// docs, "OAuth mode").
    ///
    /// # Default
    /// `None`: no authorization.
    pub oauth: Option<OAuthOptions>,
    /// How often every open stream carries an SSE keep-alive comment (bytes, never a message):
    /// legacy SSE streams and Streamable HTTP's.
    ///
    /// # Default
    /// `None`: every 15 s on legacy SSE streams, never on Streamable HTTP's.
    pub sse_keep_alive: Option<Duration>,
    /// Serve HTTP/1.1 alone: a client's HTTP/2 preface (h2c) is not understood.
    ///
    /// # Default
    /// `false`: every connection is served HTTP/1.1 or HTTP/2 by prior knowledge (h2c), as its
    /// first bytes say.
    pub http1_only: bool,
    /// The HTTP/2 `SETTINGS_MAX_CONCURRENT_STREAMS` the server announces on each connection.
    ///
    /// # Default
    /// `None`: hyper's, 200.
    pub h2_max_streams: Option<u32>,
    /// Serve https with this certificate: ALPN offers `h2` and `http/1.1` (`http/1.1` alone
    /// with [`http1_only`](Self::http1_only)); the URLs the server gives are `https`.
    ///
    /// # Default
    /// `None`: plain TCP (HTTP/1.1 or h2c).
    pub tls: Option<super::tls::MockTls>,
}

impl Default for MockOptions {
    fn default() -> Self {
        Self {
            transport: MockTransport::Both,
            port: 0,
            boot_id: None,
            extra_tools: 0,
            sse_retry: Duration::from_millis(100),
            sse_path: "/sse".to_owned(),
            mcp_path: "/mcp".to_owned(),
            stateless: false,
            oauth: None,
            sse_keep_alive: None,
            http1_only: false,
            h2_max_streams: None,
            tls: None,
        }
    }
}
