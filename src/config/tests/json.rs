use super::{json_rejected, ms};
use crate::config::{
    Heartbeat, Reconnect, RemoteKind, ServerConfig, TransportConfig, load_servers,
    load_servers_file,
};

fn load(json: &str) -> Vec<ServerConfig> {
    let loaded = load_servers(json).unwrap_or_else(|err| panic!("rejected: {err}"));
    assert!(loaded.skipped.is_empty(), "skipped: {:?}", loaded.skipped);
    loaded.servers
}

fn remote_kind(config: &ServerConfig) -> RemoteKind {
    match &config.transport {
        TransportConfig::Remote(remote) => remote.kind,
        TransportConfig::Stdio(_) => panic!("{} is stdio", config.name),
    }
}

#[test]
fn claude_desktop_shape_with_unrelated_top_level_keys() {
    let json = r#"{
      "globalShortcut": "Ctrl+Space",
      "preferences": {"theme": "dark"},
      "mcpServers": {
        "filesystem": {
          "command": "npx",
          "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"],
          "env": {"DEBUG": "1"}
        },
        "weather": {"url": "http://127.0.0.1:8003/sse", "type": "sse",
                    "headers": {"Authorization": "Bearer t"}},
        "github": {"url": "https://api.example.com/mcp", "transport": "streamable-http"},
        "detect": {"url": "https://example.com/mcp"},
        "cursor": {"url": "https://example.com/mcp", "type": "streamableHttp"}
      }
    }"#;
    let configs = load(json);
    let names: Vec<_> = configs.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["cursor", "detect", "filesystem", "github", "weather"]
    );
    let expected = ServerConfig::stdio("filesystem", "npx")
        .args([
            "-y",
            "@modelcontextprotocol/server-filesystem",
            "/Users/me/Desktop",
        ])
        .env("DEBUG", "1");
    assert_eq!(configs[2], expected);
    assert_eq!(remote_kind(&configs[0]), RemoteKind::Http);
    assert_eq!(remote_kind(&configs[1]), RemoteKind::Auto);
    assert_eq!(remote_kind(&configs[3]), RemoteKind::Http);
    let weather = ServerConfig::sse("weather", "http://127.0.0.1:8003/sse")
        .header("Authorization", "Bearer t");
    assert_eq!(configs[4], weather);
}

#[test]
fn vs_code_shape_with_inputs() {
    let json = r#"{
      "inputs": [{"type": "promptString", "id": "key", "description": "API key", "password": true}],
      "servers": {
        "fs": {"type": "stdio", "command": "mcp-fs", "args": ["/tmp"], "cwd": "/srv"},
        "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Key": "k"}},
        "legacy": {"type": "sse", "url": "http://localhost:3000/sse"}
      }
    }"#;
    let configs = load(json);
    assert_eq!(configs.len(), 3);
    let fs = ServerConfig::stdio("fs", "mcp-fs").arg("/tmp").cwd("/srv");
    assert_eq!(configs[0], fs);
    assert_eq!(remote_kind(&configs[1]), RemoteKind::Sse);
    assert_eq!(remote_kind(&configs[2]), RemoteKind::Http);
}

#[test]
fn both_sections_merge_sorted_by_name() {
    let json = r#"{"servers": {"b": {"command": "b"}}, "mcpServers": {"a": {"command": "a"}, "c": {"command": "c"}}}"#;
    let names: Vec<_> = load(json).into_iter().map(|c| c.name).collect();
    assert_eq!(names, ["a", "b", "c"]);
}

#[test]
fn entries_without_our_blocks_get_the_defaults() {
    let config = load(r#"{"mcpServers": {"s": {"command": "x"}}}"#).remove(0);
    assert_eq!(config, ServerConfig::stdio("s", "x"));
    assert_eq!(config.reconnect, Reconnect::default());
    assert_eq!(config.heartbeat, Heartbeat::default());
}

#[test]
fn our_blocks_accept_strings_and_integer_milliseconds() {
    let json = r#"{"mcpServers": {"s": {
      "command": "x",
      "reconnect": {"enabled": true, "initialDelay": 100, "maxDelay": "1.5s", "multiplier": 3,
                    "jitter": 0.1, "maxAttempts": 4, "stabilityWindow": "1m",
                    "originAttemptsPerSecond": 50},
      "heartbeat": {"interval": "5s", "failures": 3},
      "callTimeout": "2m", "connectTimeout": 2500, "closeTimeout": "1250ms", "maxToolPages": 7,
      "stdinCloseGrace": "0s", "termGrace": 10, "envAllowlist": ["PATH"]
    }}}"#;
    let config = load(json).remove(0);
    let r = &config.reconnect;
    assert_eq!(
        (r.initial_delay, r.max_delay, r.multiplier),
        (ms(100), ms(1500), 3.0)
    );
    assert_eq!(
        (r.jitter, r.max_attempts, r.stability_window),
        (0.1, 4, Some(ms(60_000)))
    );
    assert_eq!(r.origin_attempts_per_second, 50);
    let h = &config.heartbeat;
    assert_eq!(
        (h.interval, h.timeout, h.failures),
        (ms(5000), ms(5000) / 3, 3)
    );
    assert_eq!(
        (config.call_timeout, config.connect_timeout),
        (ms(120_000), ms(2500))
    );
    assert_eq!(
        (config.close_timeout, config.limits.max_list_pages),
        (ms(1250), 7)
    );
    let TransportConfig::Stdio(stdio) = &config.transport else {
        panic!("stdio")
    };
    assert_eq!((stdio.stdin_close_grace, stdio.term_grace), (ms(0), ms(10)));
    assert_eq!(stdio.env_allowlist, ["PATH"]);
}

#[test]
fn remote_knobs_are_read() {
    let json = r#"{"mcpServers": {"w": {"url": "http://h/mcp", "maxEventBytes": 2048,
      "treat400AsExpired": false, "endpointTimeout": "3s", "sseRetryMin": 10,
      "sseRetryMax": "1s", "sseMaxRetries": 0, "http2": "prior-knowledge"}}}"#;
    let config = load(json).remove(0);
    assert_eq!(config.limits.max_sse_event_bytes, 2048);
    let TransportConfig::Remote(remote) = config.transport else {
        panic!("remote")
    };
    assert!(!remote.treat_400_as_expired);
    assert_eq!(
        (remote.endpoint_timeout, remote.sse_retry_min),
        (ms(3000), ms(10))
    );
    assert_eq!(
        (remote.sse_retry_max, remote.sse_max_retries),
        (ms(1000), 0)
    );
    assert_eq!(remote.http2, crate::config::Http2::PriorKnowledge);
}

#[test]
fn disabled_entries_are_skipped() {
    let json = r#"{"mcpServers": {"on": {"command": "x"}, "off": {"command": "y", "disabled": true},
                   "kept": {"command": "z", "disabled": false}}}"#;
    let loaded = load_servers(json).expect("loads");
    let names: Vec<_> = loaded.servers.into_iter().map(|c| c.name).collect();
    assert_eq!(names, ["kept", "on"]);
    assert_eq!(loaded.disabled, ["off"]);
}

#[test]
fn disabled_policies_in_json_skip_their_bounds() {
    let json = r#"{"mcpServers": {"s": {"command": "x",
      "reconnect": {"enabled": false, "maxAttempts": 0}, "heartbeat": {"enabled": false, "failures": 0}}}}"#;
    let config = load(json).remove(0);
    assert!(!config.reconnect.enabled && !config.heartbeat.enabled);
}

#[test]
fn an_empty_servers_object_loads_nothing() {
    assert!(load(r#"{"mcpServers": {}}"#).is_empty());
}

#[test]
fn files_load_and_read_errors_carry_the_file_path() {
    let dir = std::env::temp_dir().join(format!("mcp-resilient-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("servers.json");
    std::fs::write(&file, r#"{"mcpServers": {"s": {"command": "x"}}}"#).expect("write");
    assert_eq!(load_servers_file(&file).map(|l| l.servers.len()), Ok(1));
    let missing = dir.join("missing.json");
    let err = load_servers_file(&missing).expect_err("missing file");
    assert_eq!(err.path, missing.display().to_string());
    assert!(err.message.starts_with("cannot read file"), "{err}");
    std::fs::remove_dir_all(&dir).expect("cleanup");
}

#[test]
fn trailing_garbage_is_rejected() {
    let err = json_rejected(r#"{"mcpServers": {}} x"#);
    assert_eq!(err.path, "");
    assert!(err.message.contains("trailing"), "{err}");
}

#[test]
fn protocol_is_read_per_server_and_defaults_to_auto() {
    use crate::config::ProtocolChoice;
    let configs = load(
        r#"{"mcpServers": {
          "a": {"url": "http://127.0.0.1:1/mcp"},
          "b": {"url": "http://127.0.0.1:1/mcp", "protocol": "2025-11-25"},
          "c": {"command": "srv", "protocol": "2026-07-28"},
          "d": {"command": "srv", "protocol": "auto"}
        }}"#,
    );
    let protocols: Vec<_> = configs.iter().map(|c| c.protocol).collect();
    assert_eq!(
        protocols,
        [
            ProtocolChoice::Auto,
            ProtocolChoice::V2025_11_25,
            ProtocolChoice::V2026_07_28,
            ProtocolChoice::Auto
        ]
    );
}

#[test]
fn an_unknown_protocol_and_2026_over_legacy_sse_are_refused_at_load() {
    let err = json_rejected(r#"{"mcpServers": {"a": {"command": "srv", "protocol": "2024"}}}"#);
    assert_eq!(err.path, "mcpServers.a.protocol", "{err}");
    assert!(
        err.message
            .contains("expected auto, 2025-11-25 or 2026-07-28"),
        "{err}"
    );
    let err = json_rejected(
        r#"{"mcpServers": {"a": {"url": "http://127.0.0.1:1/sse", "type": "sse", "protocol": "2026-07-28"}}}"#,
    );
    assert_eq!(err.path, "mcpServers.a.protocol", "{err}");
    assert!(
        err.message.contains("legacy SSE speaks only 2024-11-05"),
        "{err}"
    );
}

#[test]
fn sessions_are_read_per_server_default_to_shared_and_refuse_other_words() {
    use crate::config::Sessions;
    let configs = load(
        r#"{"mcpServers": {
          "a": {"command": "srv"},
          "b": {"command": "srv", "sessions": "per_host"},
          "c": {"command": "srv", "sessions": "shared"}
        }}"#,
    );
    let sessions: Vec<_> = configs.iter().map(|c| c.sessions).collect();
    assert_eq!(
        sessions,
        [Sessions::Shared, Sessions::PerHost, Sessions::Shared]
    );
    let err = json_rejected(r#"{"mcpServers": {"a": {"command": "srv", "sessions": "each"}}}"#);
    assert_eq!(err.path, "mcpServers.a.sessions", "{err}");
}
