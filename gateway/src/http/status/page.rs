//! `/status` rendered on the server from the snapshot (readable without JavaScript), with one
//! inline style and one inline script allowed by their hashes in a Content-Security-Policy that
//! allows nothing else (`default-src 'none'`): no external asset, no inline handler. The script
//! redraws the same sections from `/status/events`, with DOM calls that never parse text as
//! HTML. `/status.json` is the snapshot itself.

use std::{fmt::Write, sync::Arc, sync::OnceLock, time::Duration};

use axum::{
    extract::State,
    http::{HeaderValue, header},
    response::{IntoResponse, Response},
};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{Board, tables::escape, track::WINDOW};

const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");
/// The timeline's width in SVG units (one hour).
const WIDTH: f64 = 600.0;

/// The policy: nothing but the inline style and script of this page, and its own event feed.
fn policy() -> &'static HeaderValue {
    static POLICY: OnceLock<HeaderValue> = OnceLock::new();
    POLICY.get_or_init(|| {
        let policy = format!(
            "default-src 'none'; style-src '{}'; script-src '{}'; connect-src 'self'; \
             base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            hash(STYLE),
            hash(SCRIPT)
        );
        HeaderValue::from_str(&policy).unwrap_or(HeaderValue::from_static("default-src 'none'"))
    })
}

fn hash(text: &str) -> String {
    format!("sha256-{}", base64(&Sha256::digest(text.as_bytes())))
}

/// Standard base64 with padding (what CSP hashes are written in).
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            match i <= chunk.len() {
                true => out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char),
                false => out.push('='),
            }
        }
    }
    out
}

fn guarded(mut response: Response, html: bool) -> Response {
    let headers = response.headers_mut();
    if html {
        headers.insert(header::CONTENT_SECURITY_POLICY, policy().clone());
        headers.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        );
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// `/status.json`.
pub(super) async fn json(State(board): State<Arc<Board>>) -> Response {
    let body = board.snapshot().to_string();
    let response = ([(header::CONTENT_TYPE, "application/json")], body).into_response();
    guarded(response, false)
}

/// `/status`.
pub(super) async fn page(State(board): State<Arc<Board>>) -> Response {
    let facts = board.snapshot();
    let html = render(&facts);
    let response = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response();
    guarded(response, true)
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => escape(s),
        Value::Null => "–".to_owned(),
        other => escape(&other.to_string()),
    }
}

fn seconds(value: &Value, scale: f64) -> String {
    match value.as_f64() {
        Some(v) => format!("{:.1} s", v * scale),
        None => "–".to_owned(),
    }
}

/// The page, from the snapshot.
pub(super) fn render(facts: &Value) -> String {
    let mut html = String::with_capacity(8 * 1024);
    let _ = write!(
        html,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>mcp-resilient \
         gateway status</title><style>{STYLE}</style></head><body><h1>Gateway status \
         <small id=\"replica\">{} · front {}</small></h1><p id=\"live\">live updates need JavaScript; \
         reload to refresh</p><h2>Upstreams</h2><table id=\"upstreams\"><thead><tr><th>server\
         </th><th>state</th><th>generation</th><th>up for</th><th>last death</th><th>probe \
         round trip ms</th><th>attempt</th><th>next attempt in</th><th>host sessions</th></tr>\
         </thead><tbody>",
        text(&facts["replica"]),
        text(&facts["front"])
    );
    let now = facts["at_ms"].as_u64().unwrap_or(0);
    let empty = Vec::new();
    let upstreams = facts["upstreams"].as_array().unwrap_or(&empty);
    for u in upstreams {
        let death = match &u["last_death"] {
            Value::Null => "–".to_owned(),
            d => format!(
                "{} ({}), {} ago",
                text(&d["cause"]),
                text(&d["detail"]),
                ago(now, d["at_ms"].as_u64().unwrap_or(now))
            ),
        };
        let _ = write!(
            html,
            "<tr data-upstream=\"{}\"><td>{}</td><td class=\"state {}\">{}</td><td class=\"gen\">{}\
             </td><td>{}</td><td>{death}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            text(&u["name"]),
            text(&u["name"]),
            text(&u["state"]),
            text(&u["state"]),
            text(&u["generation"]),
            seconds(&u["up_for_s"], 1.0),
            text(&u["probe_rtt_ms"]),
            text(&u["attempt"]),
            seconds(&u["next_attempt_in_ms"], 1e-3),
            text(&u["host_sessions"]),
        );
    }
    html.push_str("</tbody></table><h2>Last hour</h2><div id=\"timeline\">");
    html.push_str(&timeline(upstreams, now));
    html.push_str("</div>");
    html.push_str(&super::tables::render(facts));
    let _ = write!(html, "<script>{SCRIPT}</script></body></html>");
    html
}

fn ago(now: u64, at: u64) -> String {
    format!(
        "{:.0} s",
        Duration::from_millis(now.saturating_sub(at)).as_secs_f64()
    )
}

/// One row per upstream: green while ready, red while down, over the last hour.
fn timeline(upstreams: &[Value], now: u64) -> String {
    let row = 22.0;
    let rows = row * upstreams.len().max(1) as f64;
    let height = rows + 14.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"760\" height=\"{height}\" \
         role=\"img\" aria-label=\"deaths and recoveries over the last hour\">"
    );
    let window = WINDOW.as_millis() as f64;
    let x = |at: u64| 150.0 + WIDTH * (1.0 - (now.saturating_sub(at) as f64 / window).min(1.0));
    for (i, u) in upstreams.iter().enumerate() {
        let y = i as f64 * row;
        let _ = write!(
            svg,
            "<text x=\"0\" y=\"{}\" font-size=\"12\" fill=\"#333\">{}</text>\
             <rect x=\"150\" y=\"{}\" width=\"{WIDTH}\" height=\"14\" fill=\"#ddd\"/>",
            y + 12.0,
            text(&u["name"]),
            y + 2.0
        );
        let empty = Vec::new();
        let marks = u["timeline"].as_array().unwrap_or(&empty);
        for (j, mark) in marks.iter().enumerate() {
            let from = x(mark["at_ms"].as_u64().unwrap_or(now));
            let to = marks
                .get(j + 1)
                .map_or(x(now), |m| x(m["at_ms"].as_u64().unwrap_or(now)));
            let colour = match mark["kind"].as_str() {
                Some("ready") => "#2a2",
                _ => "#d33",
            };
            // The stretch, and a tick at its start that stays visible however short it is.
            let _ = write!(
                svg,
                "<rect x=\"{from:.1}\" y=\"{}\" width=\"{:.1}\" height=\"14\" fill=\"{colour}\"/>\
                 <rect x=\"{:.1}\" y=\"{y}\" width=\"2\" height=\"18\" fill=\"{colour}\"/>",
                y + 2.0,
                (to - from).max(1.0),
                from - 1.0
            );
        }
    }
    let _ = write!(
        svg,
        "<text x=\"150\" y=\"{0}\" font-size=\"11\" fill=\"#666\">an hour ago</text>\
         <text x=\"750\" y=\"{0}\" font-size=\"11\" fill=\"#666\" text-anchor=\"end\">now</text></svg>",
        rows + 11.0
    );
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_the_standard_one() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn a_server_s_text_is_escaped_on_the_page() {
        let facts = serde_json::json!({
            "replica": "r",
            "at_ms": 1000,
            "upstreams": [{"name": "<script>x</script>", "state": "ready\"><b>", "timeline": [],
                "last_death": {"cause": "c", "detail": "<img src=x onerror=alert(1)>", "at_ms": 0}}],
            "tools": [{"tool": "<i>t</i>", "calls": 1}],
        });
        let html = render(&facts);
        assert!(!html.contains("<script>x"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("<i>t"), "{html}");
        assert!(!html.contains("\"><b>"), "{html}");
    }
}
