//! The tools of one big `tools/list` page, written as JSON text directly (a page of several MiB
//! built as `serde_json::Value`s would cost the mock more than the client it tests).

use std::fmt::Write;

/// Properties in each tool's input schema: a real tool's shape, many small objects.
const PROPERTIES: usize = 10;

/// The tools of page `page`, comma-separated, about `bytes` of JSON in all (at least one tool).
/// Names are unique across pages: `p<page>_t<i>`.
pub(super) fn tools(page: u32, bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 2048);
    let mut i = 0;
    while i == 0 || out.len() < bytes {
        if i > 0 {
            out.push(',');
        }
        tool(&mut out, page, i);
        i += 1;
    }
    out
}

fn tool(out: &mut String, page: u32, i: usize) {
    let _ = write!(
        out,
        r#"{{"name":"p{page}_t{i}","description":"Tool {i} of page {page}: a tool whose description runs to a few sentences, as real ones do, saying what it does, what it needs and what it returns.","inputSchema":{{"type":"object","properties":{{"#
    );
    for p in 0..PROPERTIES {
        if p > 0 {
            out.push(',');
        }
        let _ = write!(
            out,
            r#""arg{p}":{{"type":"string","description":"argument {p}, a short line"}}"#
        );
    }
    out.push_str(r#"},"required":["arg0"]}}"#);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_valid_json_of_about_the_asked_size() {
        let text = format!("[{}]", tools(3, 20_000));
        let tools: serde_json::Value = serde_json::from_str(&text).expect("json");
        let tools = tools.as_array().expect("array");
        assert!(tools.len() > 10, "{}", tools.len());
        assert!((20_000..22_000).contains(&text.len()), "{}", text.len());
        assert_eq!(tools[0]["name"], "p3_t0");
        assert_eq!(
            tools[0]["inputSchema"]["properties"]
                .as_object()
                .map(|p| p.len()),
            Some(10)
        );
    }
}
