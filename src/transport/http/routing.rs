//! `Mcp-Method` and `Mcp-Name` on every POST (SEP-2243), so that gateways and load balancers can
//! route without reading the body.
//!
//! rmcp adds them itself once a 2026-07-28 session is negotiated; before that — on `initialize`,
//! and on every request of a 2025-era session — nothing would. They are harmless to servers that
//! do not look at them and required by some that do, so they are added here whenever rmcp did
//! not. `Mcp-Param-*` headers depend on the tool's declared annotations, known only to rmcp's
//! 2026 session: they are left to it.

use std::collections::HashMap;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;

const MCP_METHOD: &str = "mcp-method";
const MCP_NAME: &str = "mcp-name";

/// Adds `Mcp-Method` (and, for methods that name something, `Mcp-Name`) when absent.
pub(super) fn add_standard_headers(
    message: &ClientJsonRpcMessage,
    headers: &mut HashMap<HeaderName, HeaderValue>,
) {
    let method_header = HeaderName::from_static(MCP_METHOD);
    if headers.contains_key(&method_header) {
        return;
    }
    let Ok(value) = serde_json::to_value(message) else {
        return;
    };
    let Some(method) = value.get("method").and_then(|m| m.as_str()) else {
        return;
    };
    if let Ok(method_value) = HeaderValue::from_str(method) {
        headers.insert(method_header, method_value);
    }
    let params = value.get("params");
    let name = match method {
        "tools/call" | "prompts/get" => params.and_then(|p| p.get("name")),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
            params.and_then(|p| p.get("uri"))
        }
        _ => None,
    };
    // A name that is not a plain header value would need rmcp's Base64 wrapping; leave it out.
    if let Some(name) = name.and_then(|n| n.as_str())
        && let Ok(name_value) = HeaderValue::from_str(name)
        && name.is_ascii()
        && !name.starts_with([' ', '\t'])
        && !name.ends_with([' ', '\t'])
    {
        headers.insert(HeaderName::from_static(MCP_NAME), name_value);
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{
        CallToolRequest, CallToolRequestParams, ClientRequest, NumberOrString, PingRequest,
    };

    use super::*;

    fn request(request: ClientRequest) -> ClientJsonRpcMessage {
        ClientJsonRpcMessage::request(request, NumberOrString::Number(1))
    }

    #[test]
    fn every_request_names_its_method_and_a_call_its_tool() {
        let mut headers = HashMap::new();
        let call = CallToolRequest::new(CallToolRequestParams::new("echo"));
        add_standard_headers(&request(ClientRequest::CallToolRequest(call)), &mut headers);
        assert_eq!(headers[&HeaderName::from_static(MCP_METHOD)], "tools/call");
        assert_eq!(headers[&HeaderName::from_static(MCP_NAME)], "echo");
        let mut headers = HashMap::new();
        add_standard_headers(
            &request(ClientRequest::PingRequest(PingRequest::default())),
            &mut headers,
        );
        assert_eq!(headers[&HeaderName::from_static(MCP_METHOD)], "ping");
        assert!(!headers.contains_key(&HeaderName::from_static(MCP_NAME)));
    }

    #[test]
    fn headers_rmcp_already_set_are_left_alone() {
        let mut headers = HashMap::new();
        headers.insert(
            HeaderName::from_static(MCP_METHOD),
            HeaderValue::from_static("set-by-rmcp"),
        );
        add_standard_headers(
            &request(ClientRequest::PingRequest(PingRequest::default())),
            &mut headers,
        );
        assert_eq!(headers[&HeaderName::from_static(MCP_METHOD)], "set-by-rmcp");
    }
}
