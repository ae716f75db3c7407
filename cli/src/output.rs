//! Text and JSON Lines renderings of events and tools.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::text::redact;
use mcp_resilient::{ConnectionState, Status, registry::RegisteredTool, state::Event};
use serde_json::{Value, json};

/// An error and its causes on one line, `error: cause: cause`, the way our errors are meant to
/// be read: their `Display` does not repeat their source. A cause whose text the line already
/// holds is left out (some errors of other crates print their source and return it too).
pub(crate) fn with_causes(error: &dyn std::error::Error) -> String {
    let mut line = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        let text = next.to_string();
        if !line.contains(&text) {
            line = format!("{line}: {text}");
        }
        cause = next.source();
    }
    line
}

/// A tool as JSON: its public name, server, the protocol version its server speaks, and the
/// definition the server listed.
pub(crate) fn tool_json(tool: &RegisteredTool, protocol: Option<&str>) -> Value {
    json!({
        "public_name": &*tool.public_name,
        "server": &*tool.server,
        "name": &*tool.raw_name,
        "protocol": protocol,
        "definition": serde_json::to_value(&*tool.definition).unwrap_or(Value::Null),
    })
}

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default()
}

/// One event as the `watch --json` line.
pub(crate) fn event_json(event: &Event) -> Value {
    let ts = now_ms();
    match event {
        Event::State { server, status } => {
            let state = &status.state;
            let mut line = json!({
                "ts": ts as u64, "server": &**server, "event": "state",
                "state": state.as_str(), "generation": status.generation, "seq": status.seq,
            });
            let fields = match state {
                ConnectionState::Reconnecting {
                    reason,
                    death,
                    attempt,
                    delay,
                } => json!({
                    "reason": reason.as_str(), "cause": death.cause.as_str(), "detail": death.detail,
                    "attempt": attempt, "delay_ms": delay.as_millis() as u64,
                }),
                ConnectionState::Failed {
                    reason,
                    death,
                    manual_recovery,
                    retry_in,
                } => json!({
                    "reason": reason.as_str(), "cause": death.cause.as_str(), "detail": death.detail,
                    "manual_recovery": manual_recovery,
                    "retry_in_ms": retry_in.map(|d| d.as_millis() as u64),
                }),
                ConnectionState::Connecting { attempt } => json!({ "attempt": attempt }),
                ConnectionState::Ready { protocol, .. } => json!({ "protocol": protocol }),
                _ => json!({}),
            };
            merge(&mut line, fields);
            line
        }
        Event::Tools(change) => json!({
            "ts": ts as u64, "server": &*change.server, "event": "tools", "generation": change.generation,
            "tools": change.tools, "added": change.added, "removed": change.removed, "changed": change.changed,
        }),
        Event::ProbeMissed {
            server,
            generation,
            misses,
        } => json!({
            "ts": ts as u64, "server": &**server, "event": "probe_missed",
            "generation": generation, "misses": misses,
        }),
        Event::Stable { server, generation } => json!({
            "ts": ts as u64, "server": &**server, "event": "stable", "generation": generation,
        }),
        _ => json!({ "ts": ts as u64, "event": "unknown" }),
    }
}

fn merge(into: &mut Value, from: Value) {
    if let (Value::Object(into), Value::Object(from)) = (into, from) {
        into.extend(from);
    }
}

/// One event as a human line.
pub(crate) fn event_text(event: &Event) -> String {
    match event {
        Event::State { server, status } => match &status.state {
            ConnectionState::Reconnecting {
                reason,
                death,
                attempt,
                delay,
            } => format!(
                "{server}: {} ({}{}: {}); attempt {attempt} in {}",
                match reason {
                    mcp_resilient::state::Reason::ConnectionFailed => "connection failed; retrying",
                    mcp_resilient::state::Reason::ConnectionLost => "connection lost; reconnecting",
                },
                of_generation(status),
                death.cause,
                death.detail,
                human(*delay)
            ),
            ConnectionState::Failed {
                death,
                manual_recovery,
                retry_in,
                ..
            } => format!(
                "{server}: failed ({}{}: {}); {}",
                of_generation(status),
                death.cause,
                death.detail,
                match (manual_recovery, retry_in) {
                    (true, _) => "reconnect disabled, restart to recover".to_owned(),
                    (false, Some(wait)) => format!("trying again in {}", human(*wait)),
                    (false, None) => "giving up".to_owned(),
                }
            ),
            ConnectionState::Ready {
                generation,
                protocol,
            } => {
                format!("{server}: ready (generation {generation}, protocol {protocol})")
            }
            ConnectionState::Connecting { attempt } => match status.generation {
                Some(generation) => {
                    format!("{server}: connecting (generation {generation}, attempt {attempt})")
                }
                None => format!("{server}: connecting (attempt {attempt})"),
            },
            other => match status.generation {
                Some(generation) => format!("{server}: {other} (generation {generation})"),
                None => format!("{server}: {other}"),
            },
        },
        Event::Tools(change) => format!(
            "{}: tools of generation {}: {} (+{} -{} ~{})",
            change.server,
            change.generation,
            change.tools.join(", "),
            change.added.len(),
            change.removed.len(),
            change.changed.len()
        ),
        Event::ProbeMissed {
            server,
            generation,
            misses,
        } => {
            format!("{server}: probe missed (generation {generation}, {misses} in a row)")
        }
        Event::Stable { server, generation } => {
            format!("{server}: generation {generation} stable; outage budget refilled")
        }
        _ => "unknown event".to_owned(),
    }
}

/// "generation N, " when the status names one, for a line about it.
fn of_generation(status: &Status) -> String {
    status
        .generation
        .map(|generation| format!("generation {generation}, "))
        .unwrap_or_default()
}

/// A duration as people write it: `0 ms`, `93 ms`, `1.5 s`, `30 s`.
pub(crate) use crate::text::human_duration as human;

/// Prints a status `watch` read rather than received (the one at start, the last one at the
/// end) as the event that announced it.
pub(crate) fn print_status(server: &str, status: &Status, json: bool) {
    let event = Event::State {
        server: server.into(),
        status: status.clone(),
    };
    print_event(&event, json);
}

/// Prints `event` as a JSON line or a human line. Both are redacted (a cause's detail may quote a
/// URL; the library redacts its own, this is the last line of defence), the human line is also
/// escaped: a detail can carry a server's text (an error message, a child's stderr).
pub(crate) fn print_event(event: &Event, json: bool) {
    if json {
        // A URL inside a JSON string ends at its closing quote or a backslash, so redacting the
        // serialized line keeps it valid JSON.
        println!("{}", redact(&super::safe::json(&event_json(event))));
    } else {
        println!("{}", super::safe::line(&redact(&event_text(event))));
    }
}
