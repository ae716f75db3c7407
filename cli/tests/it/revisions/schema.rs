//! The official JSON Schema of each revision (fixtures in `schema/`, their source and licence in
//! `schema/README.md`), and what a message sent to a host must be valid as.
//!
//! A message is checked twice: as the JSON-RPC envelope it is (a result, an error, a
//! notification, a request) and as the one definition its content must meet: a result as the
//! result of the method it answers (`tools/call` → `CallToolResult`), a notification or a
//! request by its method. A method the host's revision does not have is itself a failure: a
//! 2026-07-28 host can be sent no request at all, and no notification its schema lacks.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, OnceLock, PoisonError},
};

use jsonschema::Validator;
use serde_json::{Value, json};

/// A revision a host speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Revision {
    V2025,
    V2026,
}

impl Revision {
    pub fn as_str(self) -> &'static str {
        match self {
            Revision::V2025 => "2025-11-25",
            Revision::V2026 => "2026-07-28",
        }
    }

    fn document(self) -> &'static Value {
        static V2025: OnceLock<Value> = OnceLock::new();
        static V2026: OnceLock<Value> = OnceLock::new();
        let (cell, text) = match self {
            Revision::V2025 => (&V2025, include_str!("schema/2025-11-25.json")),
            Revision::V2026 => (&V2026, include_str!("schema/2026-07-28.json")),
        };
        cell.get_or_init(|| serde_json::from_str(text).expect("the schema fixture is JSON"))
    }

    /// The definitions a result answering `method` may be valid as (one is enough).
    fn results(self, method: &str) -> &'static [&'static str] {
        match (self, method) {
            (Revision::V2025, "initialize") => &["InitializeResult"],
            (Revision::V2026, "server/discover") => &["DiscoverResult"],
            (Revision::V2026, "subscriptions/listen") => &["SubscriptionsListenResult"],
            (
                Revision::V2025,
                "ping" | "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe",
            ) => &["EmptyResult"],
            (_, "tools/list") => &["ListToolsResult"],
            (_, "prompts/list") => &["ListPromptsResult"],
            (_, "resources/list") => &["ListResourcesResult"],
            (_, "resources/templates/list") => &["ListResourceTemplatesResult"],
            (_, "completion/complete") => &["CompleteResult"],
            (Revision::V2025, "tools/call") => &["CallToolResult", "CreateTaskResult"],
            (Revision::V2025, "prompts/get") => &["GetPromptResult"],
            (Revision::V2025, "resources/read") => &["ReadResourceResult"],
            (Revision::V2026, "tools/call") => &["CallToolResult", "InputRequiredResult"],
            (Revision::V2026, "prompts/get") => &["GetPromptResult", "InputRequiredResult"],
            (Revision::V2026, "resources/read") => &["ReadResourceResult", "InputRequiredResult"],
            _ => &[],
        }
    }

    /// The definition of a server message with `method` in `union` (`ServerNotification`,
    /// `ServerRequest`), read off the schema: each member's `method` constant.
    fn member(self, union: &str, method: &str) -> Option<String> {
        let defs = &self.document()["$defs"];
        defs.get(union)?["anyOf"]
            .as_array()?
            .iter()
            .filter_map(|member| member["$ref"].as_str()?.strip_prefix("#/$defs/"))
            .find(|name| defs[*name]["properties"]["method"]["const"] == json!(method))
            .map(str::to_owned)
    }
}

/// One definition of one revision, compiled once for the whole test binary.
fn validator(revision: Revision, definition: &str) -> Arc<Validator> {
    type Compiled = Mutex<HashMap<(Revision, String), Arc<Validator>>>;
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    let compiled = COMPILED.get_or_init(Default::default);
    let key = (revision, definition.to_owned());
    if let Some(found) = compiled
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
    {
        return found.clone();
    }
    let mut document = revision.document().clone();
    assert!(
        document["$defs"].get(definition).is_some(),
        "{} has no definition {definition}",
        revision.as_str()
    );
    document["$ref"] = json!(format!("#/$defs/{definition}"));
    let built = Arc::new(jsonschema::validator_for(&document).expect("the schema compiles"));
    compiled
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key, built.clone());
    built
}

/// Why `instance` is not a `definition` of `revision`: each error with its instance path and
/// the schema path that refused it; `None` when it is valid.
fn refusal(revision: Revision, definition: &str, instance: &Value) -> Option<String> {
    let validator = validator(revision, definition);
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|error| {
            format!(
                "{error} (at '{}', schema path '{}')",
                error.instance_path(),
                error.schema_path()
            )
        })
        .collect();
    (!errors.is_empty()).then(|| errors.join("; "))
}

/// Checks one message a host of `revision` received; `answers` is the method of the request
/// it answers, when it is an answer. The error names the message, the definitions tried and
/// every schema path that refused it.
pub fn check(revision: Revision, message: &Value, answers: Option<&str>) -> Result<(), String> {
    let fail = |what: String| {
        Err(format!(
            "a message to a {} host is not valid: {what}\nmessage: {message}",
            revision.as_str()
        ))
    };
    let (envelope, content): (&str, Vec<String>) = if message.get("result").is_some() {
        let Some(method) = answers else {
            return fail("a result that answers no request of the host's".into());
        };
        let results = revision.results(method);
        if results.is_empty() {
            return fail(format!("'{method}' is no request of this revision"));
        }
        (
            "JSONRPCResultResponse",
            results.iter().map(|r| (*r).to_owned()).collect(),
        )
    } else if message.get("error").is_some() {
        ("JSONRPCErrorResponse", Vec::new())
    } else if let Some(method) = message["method"].as_str() {
        let request = message.get("id").is_some();
        let (envelope, union) = match request {
            true => ("JSONRPCRequest", "ServerRequest"),
            false => ("JSONRPCNotification", "ServerNotification"),
        };
        match revision.member(union, method) {
            Some(definition) => (envelope, vec![definition]),
            None => return fail(format!("'{method}' is no {union} of this revision")),
        }
    } else {
        return fail("neither an answer nor a request nor a notification".into());
    };
    if let Some(why) = refusal(revision, envelope, message) {
        return fail(format!("as {envelope}: {why}"));
    }
    if content.is_empty() {
        return Ok(());
    }
    let body = message.get("result").unwrap_or(message);
    let mut refused = Vec::new();
    for definition in &content {
        match refusal(revision, definition, body) {
            None => return Ok(()),
            Some(why) => refused.push(format!("as {definition}: {why}")),
        }
    }
    fail(refused.join("\n"))
}

#[test]
fn a_2026_result_without_result_type_is_refused_and_with_it_accepted() {
    let bare = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}});
    let error = check(Revision::V2026, &bare, Some("tools/call")).expect_err("refused");
    assert!(error.contains("resultType"), "{error}");
    check(Revision::V2025, &bare, Some("tools/call")).expect("valid in 2025-11-25");
    let marked =
        json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "content": []}});
    check(Revision::V2026, &marked, Some("tools/call")).expect("valid in 2026-07-28");
}

#[test]
fn a_request_to_a_2026_host_is_refused_whatever_it_asks() {
    let elicit = json!({"jsonrpc": "2.0", "id": 9, "method": "elicitation/create",
        "params": {"message": "?", "requestedSchema": {"type": "object", "properties": {}}}});
    check(Revision::V2025, &elicit, None).expect("a 2025-11-25 server request");
    let error = check(Revision::V2026, &elicit, None).expect_err("refused");
    assert!(error.contains("no ServerRequest"), "{error}");
}
