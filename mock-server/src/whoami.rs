//! What the `whoami` tool reports, for clients that need to know which server process answered.

use std::collections::BTreeMap;

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
    /// JSON-RPC requests received so far by method (`"ping"`, `"initialize"`,
    /// `"server/discover"`, `"tools/call"`, …), this call included; counted on arrival, also
    /// those a fault answered.
    ///
    /// # Default
    /// Empty, when the result has none (an older mock server).
    #[serde(default)]
    pub methods: BTreeMap<String, u64>,
}

impl Whoami {
    /// Reads a `whoami` result; `None` if it is not one.
    pub fn from_result(result: &CallToolResult) -> Option<Whoami> {
        serde_json::from_value(result.structured_content.clone()?).ok()
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::ContentBlock;
    use serde_json::json;

    use super::*;

    fn result(structured: serde_json::Value) -> CallToolResult {
        let mut result = CallToolResult::success(vec![ContentBlock::text("who")]);
        result.structured_content = Some(structured);
        result
    }

    #[test]
    fn reads_methods_and_defaults_them_to_empty_for_an_older_server() {
        let old = result(json!({"boot_id": "b", "pid": 7, "calls": 1}));
        let who = Whoami::from_result(&old).expect("a whoami result");
        assert!(who.methods.is_empty());
        let new = result(json!({"boot_id": "b", "pid": 7, "calls": 1, "methods": {"ping": 2}}));
        let who = Whoami::from_result(&new).expect("a whoami result");
        assert_eq!(who.methods.get("ping"), Some(&2));
    }
}
