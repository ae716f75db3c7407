//! What the `whoami` tool reports, for clients that need to know which server process answered.

use std::collections::BTreeMap;

use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::shared::Shared;

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
    /// The value of `mock://counter` (bumped by the `bump` tool and
    /// [`Faults::bump_counter`](crate::Faults::bump_counter)).
    ///
    /// # Default
    /// 0, when the result has none (an older mock server).
    #[serde(default)]
    pub counter: u64,
    /// Live resource subscriptions: one per (initialize-era session, URI) of
    /// `resources/subscribe`, plus one per URI accepted by each running 2026-07-28
    /// `subscriptions/listen`. A client that re-subscribed after a restart shows here.
    ///
    /// # Default
    /// 0, when the result has none (an older mock server).
    #[serde(default)]
    pub resource_subscriptions: usize,
    /// The level the last `logging/setLevel` set (`"debug"` … `"emergency"`), if any.
    ///
    /// # Default
    /// `None`, when none was set or the result has none (an older mock server).
    #[serde(default)]
    pub log_level: Option<String>,
    /// Calls of `sleep`, `block` and `progress` that ended because their request was
    /// cancelled (`notifications/cancelled`, a 2026-07-28 client closing the response stream,
    /// or the session ending).
    ///
    /// # Default
    /// 0, when the result has none (an older mock server).
    #[serde(default)]
    pub cancelled: u64,
    /// The W3C `traceparent` the latest `tools/call` carried in its `_meta`: this `whoami`
    /// call's own, unless another call arrived in between.
    ///
    /// # Default
    /// `None`, when it carried none or the result has none (an older mock server).
    #[serde(default)]
    pub traceparent: Option<String>,
}

impl Whoami {
    /// Reads a `whoami` result; `None` if it is not one.
    pub fn from_result(result: &CallToolResult) -> Option<Whoami> {
        serde_json::from_value(result.structured_content.clone()?).ok()
    }
}

/// The structured content of a `whoami` result, read from `shared` now.
pub(crate) fn report(shared: &Shared) -> Value {
    let mut report = json!({
        "boot_id": shared.boot_id,
        "pid": shared.pid,
        "calls": shared.calls(),
        "methods": shared.methods(),
        "counter": shared.counter(),
        "resource_subscriptions": shared.resource_subscriptions(),
        "log_level": shared.log_level.name(),
        "cancelled": shared.cancelled(),
    });
    // Only when the call carried one: the report is otherwise what it always was.
    if let (Some(traceparent), Some(report)) = (shared.traceparent(), report.as_object_mut()) {
        report.insert("traceparent".to_owned(), Value::String(traceparent));
    }
    report
}

#[cfg(test)]
mod tests {
    use rmcp::model::ContentBlock;

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
        assert_eq!(
            (who.counter, who.resource_subscriptions, who.cancelled),
            (0, 0, 0)
        );
        assert_eq!(who.log_level, None);
        let new = result(json!({"boot_id": "b", "pid": 7, "calls": 1, "methods": {"ping": 2}}));
        let who = Whoami::from_result(&new).expect("a whoami result");
        assert_eq!(who.methods.get("ping"), Some(&2));
    }
}
