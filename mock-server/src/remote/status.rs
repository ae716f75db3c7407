//! HTTP status injection: the gate answers some MCP requests itself with a chosen status, as a
//! proxy, an overloaded server or an auth layer in front of the MCP server would.
//!
//! What rmcp 3.11's reqwest Streamable HTTP client sees
//! (`transport/common/reqwest/streamable_http_client.rs`), on POST and on the GET stream alike:
//! - 401 with `WWW-Authenticate`: `StreamableHttpError::AuthRequired` (the header's value);
//! - 403 with `WWW-Authenticate`: `StreamableHttpError::InsufficientScope` (scope parsed from it);
//! - 401/403 without it: on POST `UnexpectedServerResponse("HTTP 401 Unauthorized: <body>")`
//!   (never read as a JSON-RPC error); on GET a plain reqwest status error;
//! - 429 and every 5xx: `HttpStatusError { status, retry_after }` with `Retry-After` kept verbatim
//!   (bounded in size), since our body is plain text;
//! - any other 4xx on POST: `UnexpectedServerResponse("HTTP <status>: <body>")`, except 404 on a
//!   POST that carried a session id (`SessionExpired`) and a 4xx answering a session-less
//!   `server/discover` (turned into a JSON-RPC error: rmcp's legacy-server fallback); 405 on
//!   GET: `ServerDoesNotSupportSse`.
//!
//! # Invariants
//!
//! 1. Each setting has its own counters: setting a fault (or clearing it) resets them.
//! 2. With `count`, at most `count` answers are injected per setting.

use axum::http::header::{CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

/// An HTTP status the gate answers instead of the server. JSON field names are snake_case
/// (`retry_after`, `www_authenticate`); unknown fields are rejected.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusFault {
    /// The status to answer, 200–599 (e.g. 503, 429, 401, 403).
    pub status: u16,
    /// A `Retry-After` header value, e.g. `"2"` (seconds) or an HTTP date.
    ///
    /// # Default
    /// `None`: no header.
    #[serde(default)]
    pub retry_after: Option<String>,
    /// A `WWW-Authenticate` header value, e.g. `Bearer realm="mock"`.
    ///
    /// # Default
    /// `None`: no header.
    #[serde(default)]
    pub www_authenticate: Option<String>,
    /// Answer the N-th, 2N-th, … matching request; 0 is taken as 1.
    ///
    /// # Default
    /// 1: every matching request.
    #[serde(default = "one")]
    pub every: u32,
    /// JSON-RPC methods that match (e.g. `["tools/call", "ping"]`): only POSTs whose body holds
    /// a request with one of them. Empty: every GET and POST to an MCP route matches.
    ///
    /// # Default
    /// Empty.
    #[serde(default)]
    pub methods: Vec<String>,
    /// How many answers to inject at most.
    ///
    /// # Default
    /// `None`: unlimited.
    #[serde(default)]
    pub count: Option<u32>,
}

fn one() -> u32 {
    1
}

impl StatusFault {
    /// Every GET and POST to an MCP route answered with `status`, without headers.
    pub fn new(status: u16) -> Self {
        Self {
            status,
            retry_after: None,
            www_authenticate: None,
            every: 1,
            methods: Vec::new(),
            count: None,
        }
    }
}

/// A fault setting that cannot be used (bad status, or a header value with control characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidFault(pub(crate) String);

impl std::fmt::Display for InvalidFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid fault: {}", self.0)
    }
}

impl std::error::Error for InvalidFault {}

/// Checks a header value given by a client of the mock.
pub(crate) fn header_value(field: &str, value: &str) -> Result<HeaderValue, InvalidFault> {
    HeaderValue::from_str(value)
        .map_err(|_| InvalidFault(format!("{field}: not a valid header value: {value:?}")))
}

/// A validated [`StatusFault`] and its counters; owned by the injection state's lock.
pub(super) struct Armed {
    status: StatusCode,
    headers: HeaderMap,
    every: u64,
    methods: Vec<String>,
    cap: Option<u64>,
    /// Matching requests seen while under the cap.
    matched: u64,
    /// Answers injected so far.
    injected: u64,
}

impl Armed {
    pub(super) fn new(fault: StatusFault) -> Result<Self, InvalidFault> {
        let status = StatusCode::from_u16(fault.status)
            .ok()
            .filter(|s| (200..=599).contains(&s.as_u16()))
            .ok_or_else(|| InvalidFault(format!("status {} is not 200–599", fault.status)))?;
        let mut headers = HeaderMap::new();
        if let Some(value) = &fault.retry_after {
            headers.insert(RETRY_AFTER, header_value("retry_after", value)?);
        }
        if let Some(value) = &fault.www_authenticate {
            headers.insert(WWW_AUTHENTICATE, header_value("www_authenticate", value)?);
        }
        Ok(Self {
            status,
            headers,
            every: u64::from(fault.every.max(1)),
            methods: fault.methods,
            cap: fault.count.map(u64::from),
            matched: 0,
            injected: 0,
        })
    }

    /// Counts a request; returns the injected answer if this one gets it.
    pub(super) fn answer(&mut self, method: &Method, rpc_methods: &[String]) -> Option<Response> {
        let matches = match self.methods.is_empty() {
            true => method == Method::GET || method == Method::POST,
            false => method == Method::POST && rpc_methods.iter().any(|m| self.methods.contains(m)),
        };
        if !matches || self.cap.is_some_and(|cap| self.injected >= cap) {
            return None;
        }
        self.matched += 1;
        if !self.matched.is_multiple_of(self.every) {
            return None;
        }
        self.injected += 1;
        let body = match self.status {
            StatusCode::NO_CONTENT | StatusCode::NOT_MODIFIED => String::new(),
            status => format!("mock: injected {status}\n"),
        };
        let mut response = (self.status, [(CONTENT_TYPE, "text/plain")], body).into_response();
        response.headers_mut().extend(self.headers.clone());
        Some(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_every_third_match_up_to_the_cap() {
        let fault = StatusFault {
            every: 3,
            count: Some(2),
            methods: vec!["tools/call".into()],
            ..StatusFault::new(503)
        };
        let mut armed = Armed::new(fault).expect("valid");
        let call = ["tools/call".to_owned()];
        let hits: Vec<bool> = (0..12)
            .map(|_| armed.answer(&Method::POST, &call).is_some())
            .collect();
        let expected = [false, false, true, false, false, true];
        assert_eq!(hits[..6], expected);
        assert!(hits[6..].iter().all(|hit| !hit), "{hits:?}");
        assert!(armed.answer(&Method::GET, &[]).is_none());
        assert!(Armed::new(StatusFault::new(42)).is_err());
        let bad = StatusFault {
            retry_after: Some("1\n".into()),
            ..StatusFault::new(503)
        };
        assert!(Armed::new(bad).is_err());
    }
}
