//! Every duration a configuration sets is at most 24 h: at `u64::MAX` (seconds, or milliseconds
//! for the JSON keys that count milliseconds) each is a clean error at its own path. Before the
//! bound, `resolve()` accepted them and the first `Instant + Duration` panicked ("overflow when
//! adding duration to instant").

use std::time::Duration;

use super::{assert_error, json_rejected, ok, rejected};
use crate::config::{MAX_DURATION, ServerConfig, TransportConfig};

const HUGE: [Duration; 3] = [
    Duration::from_secs(u64::MAX),
    Duration::MAX,
    Duration::from_millis(u64::MAX),
];

fn remote(f: impl Fn(&mut crate::config::RemoteConfig)) -> ServerConfig {
    let mut config = ServerConfig::http("w", "http://h/mcp");
    if let TransportConfig::Remote(r) = &mut config.transport {
        f(r);
    }
    config
}

fn stdio(f: impl Fn(&mut crate::config::StdioConfig)) -> ServerConfig {
    let mut config = ok();
    if let TransportConfig::Stdio(s) = &mut config.transport {
        f(s);
    }
    config
}

#[test]
fn every_builder_duration_at_its_largest_is_an_error_at_its_path() {
    for huge in HUGE {
        let cases: Vec<(&str, ServerConfig)> = vec![
            ("call_timeout", ok().call_timeout(huge)),
            ("connect_timeout", ok().connect_timeout(huge)),
            ("close_timeout", ok().close_timeout(huge)),
            ("call_wait", ok().call_wait(huge)),
            (
                "transport.stdin_close_grace",
                stdio(|s| s.stdin_close_grace = huge),
            ),
            ("transport.term_grace", stdio(|s| s.term_grace = huge)),
            (
                "transport.endpoint_timeout",
                remote(|r| r.endpoint_timeout = huge),
            ),
            (
                "transport.sse_retry_min",
                remote(|r| r.sse_retry_min = huge),
            ),
            (
                "transport.sse_retry_max",
                remote(|r| r.sse_retry_max = huge),
            ),
        ];
        for (path, config) in cases {
            assert_error(&rejected(config), path, "at most 24h");
        }
        let mut config = ok();
        config.reconnect.initial_delay = huge;
        assert_error(&rejected(config), "reconnect.initial_delay", "at most 24h");
        let mut config = ok();
        config.reconnect.max_delay = huge;
        assert_error(&rejected(config), "reconnect.max_delay", "at most 24h");
        let mut config = ok();
        config.reconnect.stability_window = Some(huge);
        assert_error(
            &rejected(config),
            "reconnect.stability_window",
            "at most 24h",
        );
        let mut config = ok();
        config.heartbeat.interval = huge;
        assert_error(&rejected(config), "heartbeat.interval", "at most 24h");
        let mut config = ok();
        config.heartbeat.timeout = huge;
        assert_error(&rejected(config), "heartbeat.timeout", "at most 24h");
    }
}

#[test]
fn twenty_four_hours_is_allowed_and_a_nanosecond_more_is_not() {
    let config = ok()
        .call_timeout(MAX_DURATION)
        .connect_timeout(MAX_DURATION)
        .call_wait(MAX_DURATION);
    assert!(config.resolve().is_ok());
    let err = rejected(ok().call_timeout(MAX_DURATION + Duration::from_nanos(1)));
    assert_error(&err, "call_timeout", "must be at most 24h, got 24h1ns");
}

/// A stdio entry with `"<key>": <value>` (`key` may be `section.key`).
fn stdio_entry(key: &str, value: &str) -> String {
    let pair = match key.split_once('.') {
        Some((section, key)) => format!(r#""{section}": {{"{key}": {value}}}"#),
        None => format!(r#""{key}": {value}"#),
    };
    format!(r#"{{"mcpServers": {{"s": {{"command": "x", {pair}}}}}}}"#)
}

fn remote_entry(key: &str, value: &str) -> String {
    format!(
        r#"{{"mcpServers": {{"s": {{"url": "http://h/sse", "type": "sse", "{key}": {value}}}}}}}"#
    )
}

#[test]
fn every_json_duration_key_at_u64_max_is_an_error_at_its_key() {
    let stdio_keys = [
        "callTimeout",
        "connectTimeout",
        "closeTimeout",
        "callWait",
        "stdinCloseGrace",
        "termGrace",
        "reconnect.initialDelay",
        "reconnect.maxDelay",
        "reconnect.stabilityWindow",
        "heartbeat.interval",
        "heartbeat.timeout",
    ];
    let remote_keys = ["endpointTimeout", "sseRetryMin", "sseRetryMax"];
    // Milliseconds as a number, seconds as a string.
    for value in ["18446744073709551615", "\"18446744073709551615s\""] {
        for key in stdio_keys {
            let err = json_rejected(&stdio_entry(key, value));
            assert_error(&err, &format!("mcpServers.s.{key}"), "at most 24h");
        }
        for key in remote_keys {
            let err = json_rejected(&remote_entry(key, value));
            assert_error(&err, &format!("mcpServers.s.{key}"), "at most 24h");
        }
    }
}

#[test]
fn clines_timeout_in_seconds_at_u64_max_is_an_error_at_timeout() {
    for value in ["18446744073709551615", "1e300"] {
        let err = json_rejected(&stdio_entry("timeout", value));
        assert_eq!(err.path, "mcpServers.s.timeout", "{err}");
    }
    let err = json_rejected(&stdio_entry("timeout", "18446744073709551615"));
    assert_error(&err, "mcpServers.s.timeout", "at most 24h");
}
