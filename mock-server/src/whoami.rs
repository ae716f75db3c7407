//! What the `whoami` tool reports, for clients that need to know which server process answered.

use rmcp::model::CallToolResult;
use serde::Deserialize;

/// The structured content of a `whoami` result.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Whoami {
    /// Random per process (or `--boot-id`): a restarted server has a new one.
    pub boot_id: String,
    /// The server's process id.
    pub pid: u32,
    /// Tool calls this process served so far, this one included.
    pub calls: u64,
}

impl Whoami {
    /// Reads a `whoami` result; `None` if it is not one.
    pub fn from_result(result: &CallToolResult) -> Option<Whoami> {
        serde_json::from_value(result.structured_content.clone()?).ok()
    }
}
