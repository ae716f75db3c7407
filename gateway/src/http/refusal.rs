//! A JSON-RPC error as an HTTP response: what the front answers itself, before or instead of
//! rmcp (the guard's refusals, a malformed request the early opening sees).

use axum::{
    http::{StatusCode, header},
    response::{IntoResponse, Response},
};
use serde_json::Value;

/// `status` with a JSON-RPC error body (id null: the request was not read).
pub(in crate::http) fn refuse(status: StatusCode, message: &str) -> Response {
    error(status, Value::Null, -32000, message)
}

/// `status` with a JSON-RPC error `code` answering request `id`.
pub(in crate::http) fn error(status: StatusCode, id: Value, code: i32, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    });
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}
