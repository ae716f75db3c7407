//! The `limits` block: its keys, sizes as strings, the older keys it replaces, and its bounds.

use super::{assert_error, json_rejected, ok, rejected};
use crate::config::{Limits, ServerConfig, load_servers};

fn stdio_with(extra: &str) -> String {
    format!(r#"{{"mcpServers": {{"s": {{"command": "x", {extra}}}}}}}"#)
}

fn loaded(json: &str) -> ServerConfig {
    let mut loaded = load_servers(json).expect("document loads");
    assert!(loaded.skipped.is_empty(), "{:?}", loaded.skipped);
    loaded.servers.remove(0)
}

#[test]
fn every_limit_is_read_with_sizes_as_numbers_or_strings() {
    let config = loaded(&stdio_with(
        r#""limits": {"maxListBytes": "32MiB", "maxListItems": 50, "maxListPages": 3,
            "maxMessageBytes": 65536, "maxSseEventBytes": "1 MiB", "maxSseLineBytes": "512KiB",
            "maxBufferedNotifications": 10, "maxBufferedNotificationBytes": "2MiB"}"#,
    ));
    let expected = Limits {
        max_list_bytes: 32 << 20,
        max_list_items: 50,
        max_list_pages: 3,
        max_message_bytes: 65536,
        max_sse_event_bytes: 1 << 20,
        max_sse_line_bytes: 512 << 10,
        max_buffered_notifications: 10,
        max_buffered_notification_bytes: 2 << 20,
    };
    assert_eq!(config.limits, expected);
    let partial = loaded(&stdio_with(r#""limits": {"maxListItems": 7}"#));
    assert_eq!(
        partial.limits,
        Limits {
            max_list_items: 7,
            ..Limits::default()
        }
    );
}

#[test]
fn the_older_keys_still_work_but_not_beside_their_field() {
    let config = loaded(&stdio_with(r#""maxToolPages": 9"#));
    assert_eq!(config.limits.max_list_pages, 9);
    let remote = loaded(r#"{"mcpServers": {"w": {"url": "http://h/mcp", "maxEventBytes": 4096}}}"#);
    assert_eq!(remote.limits.max_sse_event_bytes, 4096);
    let both = stdio_with(r#""maxToolPages": 9, "limits": {"maxListPages": 9}"#);
    assert_error(
        &json_rejected(&both),
        "mcpServers.s.maxToolPages",
        "give one",
    );
    let both = r#"{"mcpServers": {"w": {"url": "http://h/mcp", "maxEventBytes": 4096,
        "limits": {"maxSseEventBytes": 4096}}}}"#;
    assert_error(
        &json_rejected(both),
        "mcpServers.w.maxEventBytes",
        "give one",
    );
}

#[test]
fn bad_limits_are_refused_with_the_path_of_the_key() {
    let cases = [
        (
            r#""limits": {"maxListBytes": 10}"#,
            "mcpServers.s.limits.maxListBytes",
            "at least 1024",
        ),
        (
            r#""limits": {"maxListPages": 0}"#,
            "mcpServers.s.limits.maxListPages",
            "at least 1",
        ),
        (
            r#""limits": {"maxListBytes": "8MB"}"#,
            "mcpServers.s.limits.maxListBytes",
            "unknown unit `MB`",
        ),
        (
            r#""limits": {"maxListBytes": -1}"#,
            "mcpServers.s.limits.maxListBytes",
            "negative size",
        ),
        (
            r#""limits": {"maxListByte": 1}"#,
            "mcpServers.s.limits.maxListByte",
            "did you mean `maxListBytes`?",
        ),
    ];
    for (extra, path, needle) in cases {
        assert_error(&json_rejected(&stdio_with(extra)), path, needle);
    }
    let limits = |f: fn(&mut Limits)| {
        let mut limits = Limits::default();
        f(&mut limits);
        rejected(ok().limits(limits))
    };
    assert_error(
        &limits(|l| l.max_sse_event_bytes = 1023),
        "limits.max_sse_event_bytes",
        "1024",
    );
    assert_error(
        &limits(|l| l.max_buffered_notifications = 0),
        "limits.max_buffered_notifications",
        "at least 1",
    );
}
