//! Hostile kind `discover`: a server of 2025-11-25 or earlier that refuses `server/discover` in
//! one of the ways such servers do, and otherwise serves as usual (`initialize`, tools, calls).
//!
//! | shape ([`DiscoverRefusal`]) | `--discover-refusal` | stdio | Streamable HTTP |
//! |---|---|---|---|
//! | the result `{}` | `empty-result` | yes | HTTP 200, JSON |
//! | a result that is not a discover result | `other-result` | yes | HTTP 200, JSON |
//! | a JSON-RPC error (-32601, -32600, -32602, …) | `error:-32601` | yes | HTTP 200, JSON |
//! | `-32022` naming initialize-era versions only | `legacy-versions` | yes | HTTP 400, JSON |
//! | an HTTP status, with or without a JSON-RPC error body | `status:404`, `status:404+body` | — | yes |
//! | a 2xx with an empty body (untyped, JSON, an event stream) | `empty:202`, `empty:200+json`, `empty:200+sse` | — | yes |
//!
//! # Invariants
//!
//! 1. Only a `server/discover` request is answered here. It has been counted by method first
//!    (`methods` in `whoami` and `/_mock/state`), and it never reaches rmcp, so the session of a
//!    later `initialize` is the one a 2025-11-25 server would have.
//! 2. Every other request is served as without the fault. Legacy SSE routes are left alone.

use std::fmt;
use std::str::FromStr;
use std::sync::{Mutex, PoisonError};

use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use rmcp::model::{
    CustomResult, ErrorCode, ErrorData, ProtocolVersion, RequestId, ServerJsonRpcMessage,
    ServerResult,
};
use serde_json::{Value, json};

/// How a server that does not speak 2026-07-28 answers `server/discover` (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiscoverRefusal {
    /// The result `{}`: what many simple servers answer to any method they do not know.
    EmptyResult,
    /// A result object that is not a discover result (`{"ok": true}`).
    OtherResult,
    /// A JSON-RPC error with this code.
    Error(i32),
    /// `-32022` whose `data.supported` lists only versions that have `initialize`.
    LegacyVersions,
    /// Streamable HTTP only: this HTTP status, with a JSON-RPC error (`-32601`) as its body
    /// when `json_rpc_body`, else a line of text.
    Status {
        /// The HTTP status, e.g. 400, 404 or 405.
        status: u16,
        /// Whether the body is a JSON-RPC error.
        json_rpc_body: bool,
    },
    /// Streamable HTTP only: this 2xx status with an empty body of the content type `kind`.
    EmptyBody {
        /// The HTTP status, e.g. 200 or 202.
        status: u16,
        /// What the empty body claims to be.
        kind: EmptyKind,
    },
}

/// The content type of an empty body ([`DiscoverRefusal::EmptyBody`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmptyKind {
    /// No `Content-Type` (spelled `empty:N`).
    Untyped,
    /// `application/json` (`empty:N+json`).
    Json,
    /// `text/event-stream`: a stream that ends before its first event (`empty:N+sse`).
    EventStream,
}

impl EmptyKind {
    fn suffix(self) -> &'static str {
        match self {
            Self::Untyped => "",
            Self::Json => "+json",
            Self::EventStream => "+sse",
        }
    }
}

impl DiscoverRefusal {
    /// Whether the shape exists only on Streamable HTTP (stdio has no status or body).
    pub fn http_only(self) -> bool {
        matches!(self, Self::Status { .. } | Self::EmptyBody { .. })
    }

    /// The JSON-RPC answer to the `server/discover` request `id`, when the shape has one.
    fn message(self, id: RequestId) -> Option<ServerJsonRpcMessage> {
        let error = |error| Some(ServerJsonRpcMessage::error(error, Some(id.clone())));
        match self {
            Self::EmptyResult => Some(ServerJsonRpcMessage::response(ServerResult::empty(()), id)),
            Self::OtherResult => {
                let result = CustomResult::new(json!({"ok": true, "server": "mock"}));
                let result = ServerResult::CustomResult(result);
                Some(ServerJsonRpcMessage::response(result, id))
            }
            Self::Error(code) => error(ErrorData::new(ErrorCode(code), message(code), None)),
            Self::LegacyVersions => error(legacy_versions()),
            Self::Status { .. } | Self::EmptyBody { .. } => None,
        }
    }

    /// The stdio answer to the `server/discover` request `id`; `None` for the HTTP-only shapes.
    pub(crate) fn stdio_answer(self, id: RequestId) -> Option<ServerJsonRpcMessage> {
        self.message(id)
    }

    /// The Streamable HTTP answer to the `server/discover` request whose id is `id` (verbatim).
    pub(crate) fn http_answer(self, id: Value) -> Response {
        let json = [(CONTENT_TYPE, "application/json")];
        let parsed = serde_json::from_value::<RequestId>(id.clone()).ok();
        match self {
            Self::Status {
                status,
                json_rpc_body,
            } => {
                let status = status_code(status);
                if json_rpc_body {
                    let error = ErrorData::method_not_found::<rmcp::model::DiscoverRequestMethod>();
                    let body = json!({"jsonrpc": "2.0", "id": id, "error": error});
                    (status, json, body.to_string()).into_response()
                } else {
                    let text = [(CONTENT_TYPE, "text/plain")];
                    (status, text, format!("mock: refused with {status}\n")).into_response()
                }
            }
            Self::EmptyBody { status, kind } => {
                let mut response = status_code(status).into_response();
                let headers = response.headers_mut();
                let kind = match kind {
                    EmptyKind::Untyped => None,
                    EmptyKind::Json => Some("application/json"),
                    EmptyKind::EventStream => Some("text/event-stream"),
                };
                match kind {
                    Some(kind) => headers.insert(CONTENT_TYPE, HeaderValue::from_static(kind)),
                    None => headers.remove(CONTENT_TYPE),
                };
                response
            }
            // rmcp's Streamable HTTP server sends `-32022` with 400 (see `super::super::remote`).
            Self::LegacyVersions => {
                let body = json!({"jsonrpc": "2.0", "id": id, "error": legacy_versions()});
                (StatusCode::BAD_REQUEST, json, body.to_string()).into_response()
            }
            shape => match parsed.and_then(|id| shape.message(id)) {
                Some(message) => match serde_json::to_string(&message) {
                    Ok(body) => (StatusCode::OK, json, body).into_response(),
                    Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
                },
                // An id that is not a JSON-RPC id: the request itself was bad.
                None => StatusCode::BAD_REQUEST.into_response(),
            },
        }
    }
}

/// The standard message of a JSON-RPC error code.
fn message(code: i32) -> &'static str {
    match ErrorCode(code) {
        ErrorCode::METHOD_NOT_FOUND => "Method not found",
        ErrorCode::INVALID_REQUEST => "Invalid Request",
        ErrorCode::INVALID_PARAMS => "Invalid params",
        _ => "mock: refused",
    }
}

/// A `-32022` that names only initialize-era versions (rmcp's own error, as its server builds it).
fn legacy_versions() -> ErrorData {
    let supported = [ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2025_06_18];
    ErrorData::unsupported_protocol_version(ProtocolVersion::V_2026_07_28, &supported)
}

fn status_code(status: u16) -> StatusCode {
    StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST)
}

impl FromStr for DiscoverRefusal {
    type Err = String;

    /// The spellings of the module docs' table.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("unknown discover refusal {s:?}");
        let number = |n: &str| n.parse::<i64>().map_err(|_| bad());
        let status = |n: &str, range: std::ops::RangeInclusive<i64>| match number(n)? {
            code if range.contains(&code) => u16::try_from(code).map_err(|_| bad()),
            _ => Err(bad()),
        };
        let (head, tail) = s.split_once(':').unwrap_or((s, ""));
        let (value, plus) = tail.split_once('+').unwrap_or((tail, ""));
        Ok(match (head, plus) {
            ("empty-result", "") if tail.is_empty() => Self::EmptyResult,
            ("other-result", "") if tail.is_empty() => Self::OtherResult,
            ("legacy-versions", "") if tail.is_empty() => Self::LegacyVersions,
            ("error", "") => Self::Error(i32::try_from(number(value)?).map_err(|_| bad())?),
            ("status", "" | "body") => Self::Status {
                status: status(value, 300..=599)?,
                json_rpc_body: plus == "body",
            },
            ("empty", "" | "json" | "sse") => Self::EmptyBody {
                status: status(value, 200..=299)?,
                kind: match plus {
                    "json" => EmptyKind::Json,
                    "sse" => EmptyKind::EventStream,
                    _ => EmptyKind::Untyped,
                },
            },
            _ => return Err(bad()),
        })
    }
}

impl fmt::Display for DiscoverRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::EmptyResult => f.write_str("empty-result"),
            Self::OtherResult => f.write_str("other-result"),
            Self::LegacyVersions => f.write_str("legacy-versions"),
            Self::Error(code) => write!(f, "error:{code}"),
            Self::Status {
                status,
                json_rpc_body,
            } => write!(
                f,
                "status:{status}{}",
                if json_rpc_body { "+body" } else { "" }
            ),
            Self::EmptyBody { status, kind } => write!(f, "empty:{status}{}", kind.suffix()),
        }
    }
}

/// The server's discover refusal; set by `Faults::set_discover_refusal` and `--discover-refusal`.
#[derive(Debug, Default)]
pub(crate) struct Switch(Mutex<Option<DiscoverRefusal>>);

impl Switch {
    pub(crate) fn get(&self) -> Option<DiscoverRefusal> {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn set(&self, shape: Option<DiscoverRefusal>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = shape;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_parses_back_to_its_shape() {
        let shapes = [
            DiscoverRefusal::EmptyResult,
            DiscoverRefusal::OtherResult,
            DiscoverRefusal::LegacyVersions,
            DiscoverRefusal::Error(-32601),
            DiscoverRefusal::Status {
                status: 404,
                json_rpc_body: true,
            },
            DiscoverRefusal::Status {
                status: 405,
                json_rpc_body: false,
            },
            DiscoverRefusal::EmptyBody {
                status: 202,
                kind: EmptyKind::Untyped,
            },
            DiscoverRefusal::EmptyBody {
                status: 200,
                kind: EmptyKind::Json,
            },
            DiscoverRefusal::EmptyBody {
                status: 200,
                kind: EmptyKind::EventStream,
            },
        ];
        for shape in shapes {
            assert_eq!(shape.to_string().parse::<DiscoverRefusal>(), Ok(shape));
        }
        for bad in [
            "",
            "empty",
            "empty:404",
            "status:200",
            "status:404+json",
            "error:x",
            "error:-1+body",
            "empty-result:1",
            "nope",
        ] {
            assert!(bad.parse::<DiscoverRefusal>().is_err(), "{bad:?}");
        }
    }
}
