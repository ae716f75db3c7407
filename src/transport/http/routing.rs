//! `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` on every `POST` (SEP-2243), so that gateways and
//! load balancers can route without reading the body.
//!
//! `Mcp-Method` and `Mcp-Name` go on every message that names a method, in both eras: harmless
//! to servers that do not look at them, required by some that do. A name that cannot travel as a
//! plain header value is wrapped as `=?base64?…?=` on 2026-07-28 generations (where SEP-2243
//! defines the wrapping) and left out before. `Mcp-Param-*` headers mirror a `tools/call`'s
//! arguments that the tool's schema annotates with `x-mcp-header` ([`ToolHeaders`], 2026-07-28
//! only). Computed from the typed message: no JSON tree is built for a request.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, ConstString, JsonRpcMessage,
};

use super::params::{self, ToolHeaders};

const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");

/// Adds the SEP-2243 headers of `message` (see the module docs); `modern` on a 2026-07-28
/// request.
pub(super) fn add_standard_headers(
    message: &ClientJsonRpcMessage,
    modern: bool,
    tools: &ToolHeaders,
    headers: &mut HeaderMap,
) {
    let method = match message {
        JsonRpcMessage::Request(request) => request.request.method(),
        JsonRpcMessage::Notification(notification) => {
            match notification_method(&notification.notification) {
                Some(method) => method,
                None => return,
            }
        }
        _ => return,
    };
    if let Ok(value) = HeaderValue::from_str(method) {
        headers.insert(MCP_METHOD, value);
    }
    let JsonRpcMessage::Request(request) = message else {
        return;
    };
    if let Some(name) = name_of(&request.request)
        && let Some(value) = params::header_value(name, modern)
    {
        headers.insert(MCP_NAME, value);
    }
    if modern && let ClientRequest::CallToolRequest(call) = &request.request {
        tools.add_param_headers(&call.params.name, call.params.arguments.as_ref(), headers);
    }
}

/// What a request names for `Mcp-Name`: the tool, the prompt, the resource or the task.
fn name_of(request: &ClientRequest) -> Option<&str> {
    Some(match request {
        ClientRequest::CallToolRequest(r) => &r.params.name,
        ClientRequest::GetPromptRequest(r) => &r.params.name,
        ClientRequest::ReadResourceRequest(r) => &r.params.uri,
        #[allow(deprecated)]
        ClientRequest::SubscribeRequest(r) => &r.params.uri,
        #[allow(deprecated)]
        ClientRequest::UnsubscribeRequest(r) => &r.params.uri,
        ClientRequest::GetTaskRequest(r) => &r.params.task_id,
        ClientRequest::UpdateTaskRequest(r) => &r.params.task_id,
        ClientRequest::CancelTaskRequest(r) => &r.params.task_id,
        _ => return None,
    })
}

fn notification_method(notification: &ClientNotification) -> Option<&str> {
    Some(match notification {
        ClientNotification::CancelledNotification(n) => n.method.as_str(),
        ClientNotification::ProgressNotification(n) => n.method.as_str(),
        ClientNotification::InitializedNotification(n) => n.method.as_str(),
        ClientNotification::RootsListChangedNotification(n) => n.method.as_str(),
        ClientNotification::CustomNotification(n) => &n.method,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolRequest, CallToolRequestParams, NumberOrString, PingRequest};

    use super::*;

    fn request(request: ClientRequest) -> ClientJsonRpcMessage {
        ClientJsonRpcMessage::request(request, NumberOrString::Number(1))
    }

    fn headers(message: &ClientJsonRpcMessage, modern: bool) -> HeaderMap {
        let mut headers = HeaderMap::new();
        add_standard_headers(message, modern, &ToolHeaders::default(), &mut headers);
        headers
    }

    #[test]
    fn every_request_names_its_method_and_a_call_its_tool() {
        let call = CallToolRequest::new(CallToolRequestParams::new("echo"));
        let headers = headers(&request(ClientRequest::CallToolRequest(call)), false);
        assert_eq!(headers[MCP_METHOD], "tools/call");
        assert_eq!(headers[MCP_NAME], "echo");
        let ping = request(ClientRequest::PingRequest(PingRequest::default()));
        let headers = super::tests::headers(&ping, false);
        assert_eq!(headers[MCP_METHOD], "ping");
        assert!(!headers.contains_key(MCP_NAME));
    }

    #[test]
    fn a_name_that_is_no_plain_header_value_is_wrapped_in_2026_and_left_out_before() {
        let call = |name: &'static str| {
            let call = CallToolRequest::new(CallToolRequestParams::new(name));
            request(ClientRequest::CallToolRequest(call))
        };
        assert!(!headers(&call(" padded"), false).contains_key(MCP_NAME));
        assert_eq!(
            headers(&call(" padded"), true)[MCP_NAME],
            "=?base64?IHBhZGRlZA==?="
        );
        assert_eq!(headers(&call("plain"), true)[MCP_NAME], "plain");
    }
}
