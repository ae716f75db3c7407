use super::{assert_error, json_rejected};

/// One stdio server `s` whose entry has `extra` appended, e.g. `"reconnect": {…}`.
fn stdio_with(extra: &str) -> String {
    format!(r#"{{"mcpServers": {{"s": {{"command": "x", {extra}}}}}}}"#)
}

#[test]
fn unknown_keys_report_their_json_path() {
    let err = json_rejected(&stdio_with(r#""reconnect": {"initalDelay": "1s"}"#));
    assert_error(
        &err,
        "mcpServers.s.reconnect.initalDelay",
        "unknown field `initalDelay`",
    );
    let err = json_rejected(&stdio_with(r#""heartbeat": {"every": "1s"}"#));
    assert_error(&err, "mcpServers.s.heartbeat.every", "unknown field");
    let err =
        json_rejected(r#"{"servers": {"v": {"command": "x", "autoApprove": [], "xyzzy": 1}}}"#);
    assert_error(&err, "servers.v.xyzzy", "unknown field `xyzzy`");
    assert!(!err.message.contains("did you mean"), "{err}");
}

#[test]
fn missing_sections_are_an_error_at_the_root() {
    let err = json_rejected(r#"{"globalShortcut": ""}"#);
    assert_eq!(err.to_string(), "no mcpServers or servers object");
    assert_eq!(err.path, "");
    assert_error(&json_rejected("[]"), "", "mcpServers or servers");
    assert_error(&json_rejected("{"), "", "EOF");
}

#[test]
fn a_name_seen_before_is_skipped_as_a_duplicate_and_the_first_stands() {
    let err = json_rejected(
        r#"{"mcpServers": {"a": {"command": "x"}}, "servers": {"a": {"command": "y"}}}"#,
    );
    assert_error(&err, "servers.a", "duplicate server name");
    let json = r#"{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}"#;
    let loaded = crate::config::load_servers(json).expect("document loads");
    assert_error(
        &loaded.skipped[0].error,
        "mcpServers.a",
        "duplicate server name",
    );
    assert_eq!(
        loaded.servers,
        [crate::config::ServerConfig::stdio("a", "x")]
    );
}

#[test]
fn invalid_names_are_reported_at_the_entry() {
    let err = json_rejected(r#"{"mcpServers": {"my server": {"command": "x"}}}"#);
    assert_error(&err, "mcpServers.my server", "contains ' '");
}

#[test]
fn transport_keys_must_agree() {
    let both = json_rejected(r#"{"mcpServers": {"s": {"command": "x", "url": "http://h/"}}}"#);
    assert_error(&both, "mcpServers.s", "both `command` and `url`");
    assert_error(
        &json_rejected(r#"{"mcpServers": {"s": {}}}"#),
        "mcpServers.s",
        "needs a `command`",
    );
    let stdio_url = json_rejected(r#"{"servers": {"s": {"type": "stdio", "url": "http://h/"}}}"#);
    assert_error(&stdio_url, "servers.s.url", "stdio");
    let sse_command = json_rejected(r#"{"servers": {"s": {"type": "sse", "command": "x"}}}"#);
    assert_error(&sse_command, "servers.s.command", "remote");
    let unknown = json_rejected(r#"{"servers": {"s": {"type": "ws", "url": "http://h/"}}}"#);
    assert_error(&unknown, "servers.s.type", "unknown transport `ws`");
    let clash = json_rejected(
        r#"{"servers": {"s": {"type": "sse", "transport": "http", "url": "http://h/"}}}"#,
    );
    assert_error(&clash, "servers.s.transport", "disagrees");
    assert_error(
        &json_rejected(&stdio_with(r#""headers": {}"#)),
        "mcpServers.s.headers",
        "remote",
    );
    let remote_args = json_rejected(r#"{"mcpServers": {"s": {"url": "http://h/", "args": []}}}"#);
    assert_error(&remote_args, "mcpServers.s.args", "stdio");
}

#[test]
fn resolve_errors_use_the_keys_the_user_wrote() {
    let cases = [
        (
            r#""reconnect": {"initialDelay": 0}"#,
            "mcpServers.s.reconnect.initialDelay",
            "zero",
        ),
        (
            r#""reconnect": {"maxDelay": "100ms"}"#,
            "mcpServers.s.reconnect.maxDelay",
            "must be at least initialDelay (500ms), got 100ms",
        ),
        (
            r#""reconnect": {"multiplier": 0.5}"#,
            "mcpServers.s.reconnect.multiplier",
            "at least 1.0",
        ),
        (
            r#""reconnect": {"jitter": 1}"#,
            "mcpServers.s.reconnect.jitter",
            "less than 1",
        ),
        (
            r#""reconnect": {"maxAttempts": 0}"#,
            "mcpServers.s.reconnect.maxAttempts",
            "at least 1",
        ),
        (
            r#""reconnect": {"stabilityWindow": "0s"}"#,
            "mcpServers.s.reconnect.stabilityWindow",
            "zero",
        ),
        (
            r#""heartbeat": {"interval": 0}"#,
            "mcpServers.s.heartbeat.interval",
            "zero",
        ),
        (
            r#""heartbeat": {"timeout": "30s"}"#,
            "mcpServers.s.heartbeat.timeout",
            "less than interval",
        ),
        (
            r#""heartbeat": {"failures": 0}"#,
            "mcpServers.s.heartbeat.failures",
            "at least 1",
        ),
        (r#""callTimeout": "0s""#, "mcpServers.s.callTimeout", "zero"),
        (
            r#""connectTimeout": 0"#,
            "mcpServers.s.connectTimeout",
            "zero",
        ),
        (
            r#""closeTimeout": "0ms""#,
            "mcpServers.s.closeTimeout",
            "zero",
        ),
        (
            r#""maxToolPages": 0"#,
            "mcpServers.s.maxToolPages",
            "at least 1",
        ),
        (r#""env": {"": "v"}"#, "mcpServers.s.env.", "variable name"),
    ];
    for (extra, path, needle) in cases {
        assert_error(&json_rejected(&stdio_with(extra)), path, needle);
    }
}

#[test]
fn remote_resolve_errors_use_the_keys_the_user_wrote() {
    let remote =
        |extra: &str| format!(r#"{{"mcpServers": {{"w": {{"url": "http://h/mcp"{extra}}}}}}}"#);
    let cases = [
        (
            r#", "maxEventBytes": 10"#,
            "mcpServers.w.maxEventBytes",
            "at least 1024",
        ),
        (
            r#", "headers": {"Bad Name": "x"}"#,
            "mcpServers.w.headers.Bad Name",
            "invalid header name",
        ),
        (
            r#", "headers": {"X_Key": "a\nb"}"#,
            "mcpServers.w.headers.X_Key",
            "CR, LF",
        ),
        (
            r#", "sseRetryMin": "1m""#,
            "mcpServers.w.sseRetryMax",
            "at least sseRetryMin (1m)",
        ),
        (
            r#", "endpointTimeout": 0"#,
            "mcpServers.w.endpointTimeout",
            "zero",
        ),
    ];
    for (extra, path, needle) in cases {
        assert_error(&json_rejected(&remote(extra)), path, needle);
    }
    let bad_url = json_rejected(r#"{"mcpServers": {"w": {"url": "localhost:8080"}}}"#);
    assert_error(&bad_url, "mcpServers.w.url", "scheme must be http or https");
    let no_url = json_rejected(r#"{"mcpServers": {"w": {"url": "/sse"}}}"#);
    assert_error(&no_url, "mcpServers.w.url", "invalid url `/sse`");
}

#[test]
fn bad_json_durations_report_their_path() {
    let cases = [
        (r#""callTimeout": "5""#, "missing unit"),
        (r#""callTimeout": -5"#, "negative"),
        (r#""callTimeout": 1.5"#, "fractional"),
        (r#""callTimeout": "soon""#, "expected a number"),
        (r#""callTimeout": true"#, "invalid type"),
    ];
    for (extra, needle) in cases {
        assert_error(
            &json_rejected(&stdio_with(extra)),
            "mcpServers.s.callTimeout",
            needle,
        );
    }
}

#[test]
fn the_heartbeat_scope_and_its_own_check_load_and_are_checked() {
    let json = stdio_with(r#""heartbeat": {"scope": "Session", "sessionCheckEvery": 5}"#);
    let loaded = crate::config::load_servers(&json).expect("loads");
    let heartbeat = &loaded.servers[0].heartbeat;
    assert_eq!(heartbeat.scope, crate::config::HeartbeatScope::Session);
    assert_eq!(heartbeat.session_check_every, 5);
    let err = json_rejected(&stdio_with(r#""heartbeat": {"scope": "host"}"#));
    assert_error(&err, "mcpServers.s.heartbeat.scope", "session or origin");
    let err = json_rejected(&stdio_with(r#""heartbeat": {"sessionCheckEvery": 0}"#));
    assert_error(
        &err,
        "mcpServers.s.heartbeat.sessionCheckEvery",
        "at least 1",
    );
}
