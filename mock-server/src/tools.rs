//! The tool catalogue: which tools exist right now, in which order, with which schema.
//!
//! # Invariants
//!
//! 1. `list()` is deterministic: built-ins in [`BUILTINS`] order, then dynamic tools sorted by name.
//! 2. A name is listed at most once: adding a built-in's name re-enables the built-in.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};

/// Tools every mock server starts with, in listing order.
pub const BUILTINS: [&str; 16] = [
    "echo",
    "add",
    "sleep",
    "peek",
    "whoami",
    "fail",
    "crash",
    "hang",
    "set_tools",
    "block",
    "wedge",
    "confirm",
    "end_listens",
    "bump",
    "log",
    "progress",
];

/// The current tool set. Changed only by `set_tools` (tool or admin route), under the shared lock.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolSet {
    /// Built-ins that `set_tools` removed.
    removed_builtins: HashSet<String>,
    /// Tools added at start (`--extra-tools`) or by `set_tools`; they behave like `echo`.
    dynamic: BTreeSet<String>,
}

impl ToolSet {
    pub(crate) fn with_extra(extra: usize) -> Self {
        Self {
            removed_builtins: HashSet::new(),
            dynamic: (0..extra).map(|i| format!("extra_{i}")).collect(),
        }
    }

    /// Applies one `set_tools` change; returns the number of tools afterwards.
    pub(crate) fn apply(&mut self, add: &[String], remove: &[String]) -> usize {
        for name in remove {
            if BUILTINS.contains(&name.as_str()) {
                self.removed_builtins.insert(name.clone());
            } else {
                self.dynamic.remove(name);
            }
        }
        for name in add {
            if BUILTINS.contains(&name.as_str()) {
                self.removed_builtins.remove(name);
            } else {
                self.dynamic.insert(name.clone());
            }
        }
        self.len()
    }

    pub(crate) fn len(&self) -> usize {
        BUILTINS.len() - self.removed_builtins.len() + self.dynamic.len()
    }

    /// The kind of tool `name` is, if it is currently listed.
    pub(crate) fn lookup(&self, name: &str) -> Option<ToolKind> {
        if BUILTINS.contains(&name) && !self.removed_builtins.contains(name) {
            return Some(ToolKind::Builtin);
        }
        self.dynamic.contains(name).then_some(ToolKind::Dynamic)
    }

    /// Every listed tool, in listing order.
    pub(crate) fn list(&self) -> Vec<Tool> {
        let builtins = BUILTINS
            .iter()
            .filter(|name| !self.removed_builtins.contains(**name))
            .map(|name| builtin_tool(name));
        let dynamic = self.dynamic.iter().map(|name| {
            Tool::new(
                name.clone(),
                "echoes `text` back (dynamic tool)",
                schema(json!({"text": {"type": "string"}}), &["text"]),
            )
        });
        builtins.chain(dynamic).collect()
    }
}

/// Whether a listed tool is a built-in (dispatched by name) or a dynamic echo-like one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolKind {
    Builtin,
    Dynamic,
}

fn builtin_tool(name: &str) -> Tool {
    let (description, properties, required) = builtin_shape(name);
    let tool = Tool::new(name.to_owned(), description, schema(properties, required));
    match name {
        "peek" => tool.annotate(rmcp::model::ToolAnnotations::new().read_only(true)),
        _ => tool,
    }
}

/// A built-in's description, input properties and required properties.
fn builtin_shape(name: &str) -> (&'static str, Value, &'static [&'static str]) {
    match name {
        "echo" => (
            "returns `text` unchanged",
            json!({"text": {"type": "string"}}),
            &["text"],
        ),
        "add" => (
            "returns a + b",
            json!({"a": {"type": "number"}, "b": {"type": "number"}}),
            &["a", "b"],
        ),
        "sleep" => (
            "sleeps `ms` milliseconds (cancellable; a cancellation is counted in whoami)",
            json!({"ms": {"type": "integer", "minimum": 0}}),
            &["ms"],
        ),
        "peek" => (
            "waits `ms` milliseconds (cancellable), returns the boot id; readOnlyHint",
            json!({"ms": {"type": "integer", "minimum": 0}}),
            &["ms"],
        ),
        "whoami" => (
            "boot id, pid, calls served, requests received by method, the counter, live resource \
             subscriptions, the last log level set and cancelled calls",
            json!({}),
            &[],
        ),
        "fail" => (
            "returns a tool-level error",
            json!({"message": {"type": "string"}}),
            &[],
        ),
        "crash" => (
            "replies, then the server process exits with `code`",
            json!({"code": {"type": "integer"}}),
            &[],
        ),
        "hang" => ("the server stops answering anything", json!({}), &[]),
        "block" => (
            "the server sends nothing for `ms` milliseconds (held, not dropped), then everything \
             held, then this reply; with a progress token, one progress notification first",
            json!({"ms": {"type": "integer", "minimum": 0}}),
            &["ms"],
        ),
        "wedge" => (
            "replies, then the server stops reading stdin but stays alive (stdio only)",
            json!({}),
            &[],
        ),
        "confirm" => (
            "asks the client to confirm `question` (2026-07-28: input_required; earlier: \
             elicitation/create, taken back once mock://counter is bumped if `withdraw`)",
            json!({"question": {"type": "string"}, "withdraw": {"type": "boolean"}}),
            &["question"],
        ),
        "end_listens" => (
            "ends every subscriptions/listen stream, with its final result or (graceful: false) \
             without it",
            json!({"graceful": {"type": "boolean"}}),
            &["graceful"],
        ),
        "bump" => (
            "adds one to mock://counter and sends notifications/resources/updated to its \
             subscribers; replies with the new value",
            json!({}),
            &[],
        ),
        "log" => (
            "sends notifications/message with `message` at `level` (2025: if at least the level \
             logging/setLevel set; 2026-07-28: if at least the request's _meta logLevel), then \
             replies what it did",
            json!({
                "level": {"type": "string", "enum": [
                    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
                ]},
                "message": {"type": "string"}
            }),
            &["level", "message"],
        ),
        "progress" => (
            "`steps` times: waits `ms` milliseconds, then sends notifications/progress for the \
             request's progress token; then replies (cancellable)",
            json!({
                "steps": {"type": "integer", "minimum": 0},
                "ms": {"type": "integer", "minimum": 0}
            }),
            &["steps", "ms"],
        ),
        _ => (
            "changes the tool list and sends tools/list_changed",
            json!({
                "add": {"type": "array", "items": {"type": "string"}},
                "remove": {"type": "array", "items": {"type": "string"}},
                "notify": {"type": "boolean", "default": true}
            }),
            &[],
        ),
    }
}

fn schema(properties: Value, required: &[&str]) -> Arc<JsonObject> {
    let mut object = JsonObject::new();
    object.insert("type".into(), json!("object"));
    object.insert("properties".into(), properties);
    if !required.is_empty() {
        object.insert("required".into(), json!(required));
    }
    Arc::new(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(set: &ToolSet) -> Vec<String> {
        set.list()
            .into_iter()
            .map(|t| t.name.into_owned())
            .collect()
    }

    #[test]
    fn lists_builtins_in_order_then_dynamic_sorted() {
        let mut set = ToolSet::with_extra(2);
        set.apply(&["zeta".into(), "alpha".into()], &["add".into()]);
        assert_eq!(
            names(&set),
            [
                "echo",
                "sleep",
                "peek",
                "whoami",
                "fail",
                "crash",
                "hang",
                "set_tools",
                "block",
                "wedge",
                "confirm",
                "end_listens",
                "bump",
                "log",
                "progress",
                "alpha",
                "extra_0",
                "extra_1",
                "zeta"
            ]
        );
        assert_eq!(set.len(), 19);
        assert_eq!(set.lookup("add"), None);
        set.apply(&["add".into()], &["zeta".into()]);
        assert_eq!(set.lookup("add"), Some(ToolKind::Builtin));
        assert_eq!(set.lookup("zeta"), None);
    }
}
