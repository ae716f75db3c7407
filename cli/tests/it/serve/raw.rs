//! Plain HTTP requests to the gateway, for what an SDK client hides: the exact statuses, the
//! headers, the 2026-07-28 requests without a session.
// Helpers of the gateway tests: not every test uses every one.
#![allow(dead_code)]

use reqwest::{Response, StatusCode};
use serde_json::{Value, json};

use crate::common::LIMIT;

/// A plain HTTP client of one gateway.
pub struct Raw {
    pub http: reqwest::Client,
    pub url: String,
}

/// The 2026-07-28 `_meta` every request of that revision carries.
pub fn meta_2026() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    })
}

/// A 2025-11-25 `initialize` body.
pub fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    }})
}

impl Raw {
    pub fn new(url: &str) -> Raw {
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("reqwest client");
        Raw {
            http,
            url: url.to_owned(),
        }
    }

    /// POSTs `body` with MCP's headers plus `extra`.
    pub async fn post(&self, body: &Value, extra: &[(&str, &str)]) -> Response {
        self.post_bytes(body.to_string().into_bytes(), extra).await
    }

    /// POSTs raw bytes as JSON with MCP's headers plus `extra`.
    pub async fn post_bytes(&self, body: Vec<u8>, extra: &[(&str, &str)]) -> Response {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        for (name, value) in extra {
            request = request.header(*name, *value);
        }
        tokio::time::timeout(LIMIT, request.send())
            .await
            .expect("answered in time")
            .expect("the gateway answers")
    }

    /// A 2026-07-28 request without a session (its routing headers set).
    pub async fn modern(&self, id: u64, method: &str, mut params: Value) -> Response {
        params["_meta"] = meta_2026();
        let mut headers = vec![
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", method),
        ];
        let name = params["name"].as_str().map(str::to_owned);
        if let Some(name) = &name {
            headers.push(("mcp-name", name));
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.post(&body, &headers).await
    }

    /// Initializes a 2025-11-25 session; its id.
    pub async fn session(&self) -> String {
        self.session_with(&[]).await
    }

    /// Initializes a 2025-11-25 session with `extra` headers on each request; its id.
    pub async fn session_with(&self, extra: &[(&str, &str)]) -> String {
        let response = self.post(&initialize(1), extra).await;
        assert_eq!(response.status(), StatusCode::OK, "initialize");
        let id = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("a session id")
            .to_owned();
        let _ = messages(response).await;
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let mut headers = self.in_session(&id);
        headers.extend_from_slice(extra);
        let sent = self.post(&done, &headers).await;
        assert_eq!(sent.status(), StatusCode::ACCEPTED);
        id
    }

    /// Opens session `id`'s standalone `GET` stream (answered in time, or the test fails).
    pub async fn standalone(&self, id: &str) -> Response {
        self.get_stream(id, None).await
    }

    /// Asks for session `id`'s stream after event `last_event_id` (a resumption).
    pub async fn resume(&self, id: &str, last_event_id: &str) -> Response {
        self.get_stream(id, Some(last_event_id)).await
    }

    async fn get_stream(&self, id: &str, last_event_id: Option<&str>) -> Response {
        let mut request = self
            .http
            .get(&self.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", "2025-11-25");
        if let Some(last) = last_event_id {
            request = request.header("last-event-id", last);
        }
        tokio::time::timeout(LIMIT, request.send())
            .await
            .expect("the stream is answered in time")
            .expect("the stream is answered")
    }

    /// Ends session `id` (`DELETE`, answered in time, or the test fails).
    pub async fn delete(&self, id: &str) -> Response {
        let request = self
            .http
            .delete(&self.url)
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", "2025-11-25");
        tokio::time::timeout(LIMIT, request.send())
            .await
            .expect("DELETE answered in time")
            .expect("DELETE answered")
    }

    /// The headers of a request in session `id`.
    pub fn in_session<'a>(&self, id: &'a str) -> Vec<(&'static str, &'a str)> {
        vec![
            ("mcp-session-id", id),
            ("mcp-protocol-version", "2025-11-25"),
        ]
    }
}

/// The JSON-RPC messages of a response: its JSON body, or its SSE events' data.
pub async fn messages(response: Response) -> Vec<Value> {
    let json = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    let text = tokio::time::timeout(LIMIT, response.text())
        .await
        .expect("the body ends in time")
        .expect("a body");
    if json {
        return vec![serde_json::from_str(&text).expect("a JSON body")];
    }
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .filter(|data| !data.is_empty())
        .map(|data| serde_json::from_str(data).expect("JSON in an SSE event"))
        .collect()
}

/// The message that answers request `id`.
pub async fn answer(response: Response, id: u64) -> Value {
    let all = messages(response).await;
    all.into_iter()
        .find(|m| m["id"] == json!(id))
        .unwrap_or_else(|| panic!("no answer to {id}"))
}
