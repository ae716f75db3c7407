//! One bad entry is skipped and reported; the others load. Unknown keys get a near guess.

use super::{assert_error, json_rejected};
use crate::config::{ServerConfig, load_servers};

#[test]
fn a_bad_entry_skips_only_itself() {
    let json = r#"{"mcpServers": {
      "a": {"command": "a"},
      "bad-type": {"command": "x", "args": "not a list"},
      "b": {"url": "http://127.0.0.1:1/mcp"},
      "bad-key": {"command": "x", "reconnect": {"initalDelay": "1s"}},
      "not-an-object": "npx server",
      "c": {"command": "c"}
    }}"#;
    let loaded = load_servers(json).expect("the document is fine");
    let names: Vec<_> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    let skipped: Vec<_> = loaded.skipped.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(skipped, ["bad-type", "bad-key", "not-an-object"]);
    assert_error(
        &loaded.skipped[0].error,
        "mcpServers.bad-type.args",
        "invalid type",
    );
    assert_error(
        &loaded.skipped[1].error,
        "mcpServers.bad-key.reconnect.initalDelay",
        "did you mean `initialDelay`?",
    );
    assert_error(
        &loaded.skipped[2].error,
        "mcpServers.not-an-object",
        "expected an object",
    );
}

#[test]
fn unknown_keys_get_a_suggestion_only_when_close() {
    let cases = [
        ("comand", Some("command")),
        ("Command", Some("command")),
        ("comamnd", Some("command")),
        ("arg", Some("args")),
        ("server_url", Some("serverUrl")),
        ("envfile", Some("envFile")),
        ("timout", Some("timeout")),
        ("environment", None),
        ("xyzzy", None),
        ("cmd", None),
    ];
    for (key, suggestion) in cases {
        let err = json_rejected(&format!(
            r#"{{"mcpServers": {{"s": {{"command": "x", "{key}": 1}}}}}}"#
        ));
        assert_error(
            &err,
            &format!("mcpServers.s.{key}"),
            &format!("unknown field `{key}`"),
        );
        match suggestion {
            Some(near) => assert!(
                err.message.ends_with(&format!("did you mean `{near}`?")),
                "{key}: {err}"
            ),
            None => assert!(!err.message.contains("did you mean"), "{key}: {err}"),
        }
    }
    let err = json_rejected(
        r#"{"mcpServers": {"s": {"command": "x", "heartbeat": {"intervall": "5s"}}}}"#,
    );
    assert_error(
        &err,
        "mcpServers.s.heartbeat.intervall",
        "did you mean `interval`?",
    );
}

#[test]
fn disabled_must_be_a_boolean_and_a_disabled_entry_is_not_checked() {
    let err = json_rejected(r#"{"mcpServers": {"s": {"command": "x", "disabled": "yes"}}}"#);
    assert_error(&err, "mcpServers.s.disabled", "expected true or false");
    let loaded = load_servers(
        r#"{"mcpServers": {"bad name": {"disabled": true, "whatever": 1}, "ok": {"command": "x"}}}"#,
    )
    .expect("document");
    assert_eq!(loaded.disabled, ["bad name"]);
    assert_eq!(loaded.servers, [ServerConfig::stdio("ok", "x")]);
    assert!(loaded.skipped.is_empty());
}

#[test]
fn host_synonyms_must_agree_with_our_keys() {
    let err = json_rejected(
        r#"{"mcpServers": {"s": {"command": "x", "timeout": 5, "callTimeout": "5s"}}}"#,
    );
    assert_error(&err, "mcpServers.s.timeout", "give one of them");
    let err = json_rejected(r#"{"mcpServers": {"s": {"serverUrl": "http://h/", "args": []}}}"#);
    assert_error(&err, "mcpServers.s.args", "stdio");
    let err = json_rejected(r#"{"mcpServers": {"s": {"command": "x", "timeout": "60s"}}}"#);
    assert_error(&err, "mcpServers.s.timeout", "a number of seconds");
    let err = json_rejected(r#"{"mcpServers": {"s": {"command": "x", "env": {"A": true}}}}"#);
    assert_error(&err, "mcpServers.s.env.A", "a string, a number or null");
    let err =
        json_rejected(r#"{"mcpServers": {"s": {"type": "stdio", "serverUrl": "http://h/"}}}"#);
    assert_error(
        &err,
        "mcpServers.s.serverUrl",
        "takes `command`, not `serverUrl`",
    );
}

#[test]
fn fractional_cline_timeouts_and_null_env_reach_the_config() {
    let loaded = load_servers(
        r#"{"mcpServers": {"s": {"command": "x", "timeout": 1.5, "env": {"PATH": null}}}}"#,
    )
    .expect("document");
    let config = &loaded.servers[0];
    assert_eq!(config.call_timeout, super::ms(1500));
    let stdio = super::stdio_of(config);
    assert!(
        !stdio.env_allowlist.iter().any(|k| k == "PATH"),
        "null drops PATH"
    );
}

#[test]
fn resolve_errors_of_list_items_use_brackets() {
    let err =
        json_rejected(r#"{"mcpServers": {"s": {"command": "x", "args": ["ok", "a\u0000b"]}}}"#);
    assert_error(&err, "mcpServers.s.args[1]", "NUL");
}
