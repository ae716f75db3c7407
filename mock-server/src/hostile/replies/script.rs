//! The answers of a hostile-replies server: what to send for each message received (see
//! [`super`] for what each kind changes).

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use super::options::{ReplyKind, ReplyOptions};
use super::pages;

/// The most pages `endless-pages` serves before its list ends after all.
const ENDLESS_CAP: u32 = 1_000_000;

/// How many `tools/list` answers `list-changed-flood` floods before (the first ones): the
/// attempt's own listing and the re-listing the first flood asks for; the third is quiet, so a
/// client that coalesces the changes settles.
const FLOODED_LISTS: u64 = 2;

/// The notification `list-changed-flood` repeats.
const LIST_CHANGED: &str = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;

/// The tools every kind but the page kinds lists: both echo their `text` argument (`broken`
/// answers only with [`MALFORMED`] under `malformed-json`).
const ECHO: &str = r#"{"name":"echo","description":"Echoes text.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}"#;
const BROKEN: &str = r#"{"name":"broken","description":"Echoes text, or breaks.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}"#;

/// The text that is not JSON: a response cut off in the middle of a string.
pub(crate) const MALFORMED: &str =
    r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"cut o"#;

/// The answers of one server: what to send for each message received.
#[derive(Debug)]
pub(crate) struct Script {
    options: ReplyOptions,
    /// Numbers the stray responses, so none repeats.
    strays: AtomicU64,
    /// `tools/list` requests answered so far.
    lists: AtomicU64,
    /// `notifications/tools/list_changed` sent so far.
    list_changed: AtomicU64,
}

impl Script {
    pub(crate) fn new(options: ReplyOptions) -> Self {
        Self {
            options,
            strays: AtomicU64::new(0),
            lists: AtomicU64::new(0),
            list_changed: AtomicU64::new(0),
        }
    }

    /// The texts to send (in order) for one received `message`: none for a notification or a
    /// response, else the answer as the kind shapes it.
    pub(crate) fn answer(&self, message: &Value) -> Vec<String> {
        let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) else {
            return Vec::new();
        };
        let params = &message["params"];
        let answer = match method {
            "initialize" => reply(id, &initialize(params).to_string()),
            "ping" => reply(id, "{}"),
            "tools/list" => reply(id, &self.page(params["cursor"].as_str())),
            "tools/call" if self.options.kind == ReplyKind::ListChangedFlood => {
                reply(id, &self.counts().to_string())
            }
            "tools/call" => reply(id, &call(params).to_string()),
            _ => {
                let error =
                    json!({"code": -32601, "message": format!("method not found: {method}")});
                json!({"jsonrpc": "2.0", "id": id, "error": error}).to_string()
            }
        };
        match self.options.kind {
            ReplyKind::StrayResponse => vec![self.stray(), answer],
            ReplyKind::DuplicateResponse => vec![answer.clone(), answer],
            ReplyKind::MalformedJson if method == "tools/call" => match params["name"].as_str() {
                Some("broken") => vec![MALFORMED.to_owned()],
                _ => vec![MALFORMED.to_owned(), answer],
            },
            ReplyKind::ListChangedFlood if method == "tools/list" => self.flood(answer),
            _ => vec![answer],
        }
    }

    /// `answer` (to a `tools/list`), after a flood of `list_changed` if it is one of the first
    /// [`FLOODED_LISTS`].
    fn flood(&self, answer: String) -> Vec<String> {
        if self.lists.fetch_add(1, Ordering::Relaxed) >= FLOODED_LISTS {
            return vec![answer];
        }
        let count = self.options.list_changed;
        self.list_changed
            .fetch_add(u64::from(count), Ordering::Relaxed);
        let mut texts = vec![LIST_CHANGED.to_owned(); count as usize];
        texts.push(answer);
        texts
    }

    /// `list-changed-flood`'s answer to every call: what it has done so far, as structured
    /// content (`{"lists": …, "listChanged": …}`).
    fn counts(&self) -> Value {
        let counts = json!({
            "lists": self.lists.load(Ordering::Relaxed),
            "listChanged": self.list_changed.load(Ordering::Relaxed),
        });
        json!({
            "content": [{"type": "text", "text": counts.to_string()}],
            "structuredContent": counts,
            "isError": false,
        })
    }

    /// The `tools/list` result after `cursor` (the first page without one), as JSON text.
    fn page(&self, cursor: Option<&str>) -> String {
        let index: u32 = cursor.and_then(|c| c.parse().ok()).unwrap_or(0);
        let (bytes, last) = match self.options.kind {
            ReplyKind::HugePages => (self.options.page_bytes, self.options.pages.max(1)),
            ReplyKind::EndlessPages => (1, ENDLESS_CAP),
            _ => return format!(r#"{{"tools":[{ECHO},{BROKEN}]}}"#),
        };
        let next = match index + 1 < last {
            true => format!(r#","nextCursor":"{}""#, index + 1),
            false => String::new(),
        };
        format!(r#"{{"tools":[{}]{next}}}"#, pages::tools(index, bytes))
    }

    /// A response to an id this server was never sent: a string one, then a number one, in turn.
    fn stray(&self) -> String {
        let n = self.strays.fetch_add(1, Ordering::Relaxed);
        let id = match n % 2 {
            0 => json!(format!("never-sent-{n}")),
            _ => json!(900_000_000 + n),
        };
        reply(&id, r#"{"content":[{"type":"text","text":"stray"}]}"#)
    }
}

/// A response to `id` whose result is the JSON text `result`.
fn reply(id: &Value, result: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
}

fn initialize(params: &Value) -> Value {
    const KNOWN: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
    let asked = params["protocolVersion"].as_str().unwrap_or_default();
    let version = KNOWN
        .into_iter()
        .find(|v| *v == asked)
        .unwrap_or("2025-11-25");
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "mcp-mock-server-hostile", "version": env!("CARGO_PKG_VERSION")},
    })
}

fn call(params: &Value) -> Value {
    let text = params["arguments"]["text"].as_str().unwrap_or("ok");
    json!({"content": [{"type": "text", "text": text}], "isError": false})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(kind: ReplyKind) -> Script {
        Script::new(ReplyOptions {
            page_bytes: 64 * 1024,
            pages: 3,
            ..ReplyOptions::new(kind)
        })
    }

    fn list(cursor: Option<&str>) -> Value {
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": cursor}})
    }

    #[test]
    fn huge_pages_are_about_the_asked_size_and_end_after_the_last() {
        let script = script(ReplyKind::HugePages);
        let first = script.answer(&list(None));
        assert_eq!(first.len(), 1);
        let len = first[0].len();
        assert!((60 * 1024..70 * 1024).contains(&len), "{len}");
        let page: Value = serde_json::from_str(&first[0]).expect("json");
        assert_eq!(page["result"]["nextCursor"], "1");
        let last: Value = serde_json::from_str(&script.answer(&list(Some("2")))[0]).expect("json");
        assert!(last["result"].get("nextCursor").is_none());
        let names = |page: &Value| {
            page["result"]["tools"][0]["name"]
                .as_str()
                .map(str::to_owned)
        };
        assert_ne!(names(&page), names(&last), "names differ across pages");
    }

    #[test]
    fn each_kind_shapes_its_answers() {
        let call = |name: &str| {
            json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                   "params": {"name": name, "arguments": {"text": "hi"}}})
        };
        let stray = script(ReplyKind::StrayResponse).answer(&call("echo"));
        assert_eq!(stray.len(), 2);
        assert!(stray[0].contains("never-sent-0"), "{stray:?}");
        let twice = script(ReplyKind::DuplicateResponse).answer(&call("echo"));
        assert_eq!((twice.len(), &twice[0]), (2, &twice[1]));
        let bad = script(ReplyKind::MalformedJson);
        let answers = bad.answer(&call("echo"));
        assert!(serde_json::from_str::<Value>(&answers[0]).is_err());
        assert!(answers[1].contains(r#""text":"hi""#), "{answers:?}");
        assert_eq!(bad.answer(&call("broken")), vec![MALFORMED.to_owned()]);
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert!(bad.answer(&note).is_empty());
        let discover = json!({"jsonrpc": "2.0", "id": 0, "method": "server/discover"});
        assert!(bad.answer(&discover)[0].contains("-32601"));
    }

    #[test]
    fn a_list_changed_flood_comes_before_the_first_two_lists_only_and_is_counted() {
        let flood = Script::new(ReplyOptions {
            list_changed: 5,
            ..ReplyOptions::new(ReplyKind::ListChangedFlood)
        });
        for flooded in [true, true, false] {
            let texts = flood.answer(&list(None));
            let notes = texts.iter().filter(|t| t.contains("list_changed")).count();
            assert_eq!(notes, if flooded { 5 } else { 0 }, "{texts:?}");
            assert!(texts.last().is_some_and(|t| t.contains(r#""tools""#)));
        }
        let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                          "params": {"name": "echo", "arguments": {}}});
        let answer: Value = serde_json::from_str(&flood.answer(&call)[0]).expect("json");
        let counts = &answer["result"]["structuredContent"];
        assert_eq!(
            (&counts["lists"], &counts["listChanged"]),
            (&json!(3), &json!(10))
        );
    }
}
