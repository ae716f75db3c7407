//! The status page's tables below the upstreams: host sessions (by revision, by caller), the
//! last minute's tool calls, the answers that may have run, the fleet. Every value is escaped.

use std::fmt::Write;

use serde_json::Value;

fn cell(value: &Value) -> String {
    match value {
        Value::String(s) => escape(s),
        Value::Null => "–".to_owned(),
        Value::Number(n) if n.is_f64() => format!("{:.2}", n.as_f64().unwrap_or(0.0)),
        other => escape(&other.to_string()),
    }
}

/// `<table id="{id}">` of a JSON object's keys and values.
fn pairs(id: &str, head: (&str, &str), object: &Value) -> String {
    let mut html = format!(
        "<table id=\"{id}\"><thead><tr><th>{}</th><th>{}</th></tr></thead><tbody>",
        head.0, head.1
    );
    if let Some(object) = object.as_object() {
        for (key, value) in object {
            let _ = write!(
                html,
                "<tr><td>{}</td><td>{}</td></tr>",
                escape(key),
                cell(value)
            );
        }
    }
    html.push_str("</tbody></table>");
    html
}

/// The tables, from the snapshot.
pub(super) fn render(facts: &Value) -> String {
    let sessions = &facts["sessions"];
    let mut html = format!(
        "<h2>Host sessions: <span id=\"sessions-total\">{}</span> (listen streams: \
         <span id=\"listen-streams\">{}</span>)</h2>",
        cell(&sessions["total"]),
        cell(&sessions["listen_streams"])
    );
    html.push_str(&pairs(
        "by-revision",
        ("revision", "sessions"),
        &sessions["by_revision"],
    ));
    html.push_str(&pairs(
        "by-token",
        ("caller", "sessions"),
        &sessions["by_token"],
    ));
    html.push_str(
        "<h2>Tool calls, last minute</h2><table id=\"tools\"><thead><tr><th>tool</th>\
         <th>calls</th><th>calls/s</th><th>p50 ms</th><th>p95 ms</th><th>error rate</th></tr>\
         </thead><tbody>",
    );
    let empty = Vec::new();
    for tool in facts["tools"].as_array().unwrap_or(&empty) {
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            cell(&tool["tool"]),
            cell(&tool["calls"]),
            cell(&tool["calls_per_s"]),
            cell(&tool["p50_ms"]),
            cell(&tool["p95_ms"]),
            cell(&tool["error_rate"]),
        );
    }
    html.push_str("</tbody></table><h2>Answers</h2>");
    html.push_str(&pairs("answers", ("answer", "count"), &facts["answers"]));
    html.push_str("<h2>Reloads</h2>");
    let reloads = &facts["reloads"];
    let last = match &reloads["last"] {
        Value::Null => Value::Null,
        last => Value::String(last.to_string()),
    };
    let summary = serde_json::json!({
        "applied": reloads["applied"], "refused": reloads["refused"], "last": last,
    });
    html.push_str(&pairs("reloads", ("reloads", ""), &summary));
    html.push_str("<h2>Fleet</h2>");
    html.push_str(&pairs("fleet", ("fact", "value"), &facts["fleet"]));
    html
}

/// `text` safe between tags and inside quoted attributes.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
