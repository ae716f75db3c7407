//! [`ToolHandle`]: a host's long-lived reference to one tool.

use std::sync::Arc;

use rmcp::model::{CallToolResult, JsonObject};

use super::{RegisteredTool, ToolRegistry};
use crate::{CallError, call::CallOptions};

/// A reference to one tool that survives reconnects.
///
/// It holds the tool's identity (server + raw name), not a connection: each call resolves the
/// server's current generation. Cloning is cheap.
#[derive(Debug, Clone)]
pub struct ToolHandle {
    registry: ToolRegistry,
    public_name: Arc<str>,
    server: Arc<str>,
    raw_name: Arc<str>,
}

impl ToolHandle {
    pub(crate) fn new(registry: ToolRegistry, tool: &RegisteredTool) -> Self {
        ToolHandle {
            registry,
            public_name: tool.public_name.clone(),
            server: tool.server.clone(),
            raw_name: tool.raw_name.clone(),
        }
    }

    /// The host-facing name.
    pub fn public_name(&self) -> &str {
        &self.public_name
    }

    /// The server that provides the tool.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The tool's name on its server.
    pub fn raw_name(&self) -> &str {
        &self.raw_name
    }

    /// The tool's current definition, if it is registered right now.
    pub fn definition(&self) -> Option<Arc<rmcp::model::Tool>> {
        self.registry
            .snapshot()
            .get(&self.public_name)
            .map(|t| t.definition.clone())
    }

    /// Calls the tool on the server's current generation, with the server's call timeout.
    /// While the server reconnects, the call waits for it (the server's `call_wait`, 10 s by
    /// default), so a blip costs the caller a short wait, not a failure.
    ///
    /// `arguments` must be a JSON object or `null`. A result with `is_error == Some(true)` is
    /// the tool's own failure and comes back as `Ok`.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the call; the server is then sent
    /// `notifications/cancelled`. Nothing else is affected.
    pub async fn call(&self, arguments: serde_json::Value) -> Result<CallToolResult, CallError> {
        self.call_with(arguments, CallOptions::default()).await
    }

    /// Like [`call`](Self::call), with per-call options: a timeout of its own, a progress
    /// callback.
    ///
    /// # Cancel safety
    ///
    /// As [`call`](Self::call): dropping the future abandons the call, and the server is sent
    /// `notifications/cancelled` for it.
    pub async fn call_with(
        &self,
        arguments: serde_json::Value,
        options: CallOptions,
    ) -> Result<CallToolResult, CallError> {
        let arguments = to_object(arguments)?;
        if self.registry.snapshot().get(&self.public_name).is_none() {
            return Err(CallError::ToolNotFound {
                name: self.public_name.to_string(),
            });
        }
        let Some(link) = self.registry.route(&self.server) else {
            return Err(CallError::ToolNotFound {
                name: self.public_name.to_string(),
            });
        };
        link.call_tool(&self.raw_name, arguments, options).await
    }
}

pub(crate) fn to_object(arguments: serde_json::Value) -> Result<Option<JsonObject>, CallError> {
    match arguments {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::Object(map) => Ok(Some(map)),
        other => Err(CallError::Protocol {
            detail: format!("tool arguments must be a JSON object, got {other}"),
        }),
    }
}
