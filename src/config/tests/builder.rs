use std::time::Duration;

use super::{assert_error, ms, ok, rejected};
use crate::config::{
    Heartbeat, Reconnect, RemoteKind, ServerConfig, StdioConfig, TransportConfig,
    validate_server_name,
};

#[test]
fn defaults_match_the_design() {
    let config = ok().resolve().expect("defaults are valid");
    assert_eq!(config.call_timeout, Duration::from_secs(60));
    assert_eq!(config.connect_timeout, Duration::from_secs(30));
    assert_eq!(config.close_timeout, Duration::from_secs(10));
    assert_eq!(config.limits.max_list_pages, 100);
    assert_eq!(config.limits, crate::config::Limits::default());
    let r = &config.reconnect;
    assert!(r.enabled);
    assert_eq!(
        (r.initial_delay, r.max_delay),
        (ms(500), Duration::from_secs(30))
    );
    assert_eq!((r.multiplier, r.jitter, r.max_attempts), (2.0, 0.3, 10));
    assert_eq!(r.stability_window, None);
    assert_eq!(r.effective_stability_window(), Duration::from_secs(30));
    assert_eq!(config.heartbeat, Heartbeat::every(Duration::from_secs(30)));
    assert_eq!(config.heartbeat.timeout, Duration::from_secs(10));
    assert_eq!(config.heartbeat.failures, 2);
    let TransportConfig::Stdio(stdio) = &config.transport else {
        panic!("stdio")
    };
    assert_eq!(stdio, &StdioConfig::new("mcp-fs"));
    assert!(stdio.env_allowlist.iter().any(|k| k == "PATH"));
    assert_eq!(stdio.env_allowlist.len(), 10);
    assert_eq!(
        (stdio.stdin_close_grace, stdio.term_grace),
        (ms(3000), ms(2000))
    );
}

#[test]
fn remote_builders_set_kind_and_remote_defaults() {
    for (config, kind) in [
        (
            ServerConfig::sse("w", "http://127.0.0.1:8003/sse"),
            RemoteKind::Sse,
        ),
        (
            ServerConfig::http("w", "https://example.com/mcp"),
            RemoteKind::Http,
        ),
        (
            ServerConfig::remote("w", String::from("http://h/mcp")),
            RemoteKind::Auto,
        ),
    ] {
        let config = config
            .header("Authorization", "Bearer x")
            .resolve()
            .expect("valid");
        let TransportConfig::Remote(remote) = config.transport else {
            panic!("remote")
        };
        assert_eq!(remote.kind, kind);
        assert_eq!(
            remote.headers,
            [("Authorization".to_owned(), "Bearer x".to_owned())]
        );
        assert_eq!(remote.endpoint_timeout, Duration::from_secs(10));
        assert!(remote.treat_400_as_expired);
        assert_eq!(
            (remote.sse_retry_min, remote.sse_retry_max),
            (ms(250), ms(30_000))
        );
        assert_eq!(remote.sse_max_retries, 3);
    }
}

#[test]
fn stdio_builders_accumulate() {
    let config = ok()
        .arg("a")
        .args(["b", "c"])
        .env("K", "V")
        .cwd("/tmp")
        .resolve()
        .expect("ok");
    let TransportConfig::Stdio(stdio) = config.transport else {
        panic!("stdio")
    };
    assert_eq!(stdio.args, ["a", "b", "c"]);
    assert_eq!(stdio.env.get("K").map(String::as_str), Some("V"));
    assert_eq!(stdio.cwd.as_deref(), Some(std::path::Path::new("/tmp")));
}

#[test]
fn remote_kind_parses_aliases() {
    for (s, kind) in [
        ("auto", RemoteKind::Auto),
        ("sse", RemoteKind::Sse),
        ("http", RemoteKind::Http),
        ("streamable-http", RemoteKind::Http),
        ("streamableHttp", RemoteKind::Http),
    ] {
        assert_eq!(s.parse::<RemoteKind>(), Ok(kind));
    }
    assert!("websocket".parse::<RemoteKind>().is_err());
    assert_eq!(RemoteKind::default(), RemoteKind::Auto);
}

#[test]
fn server_names_follow_the_pattern() {
    for good in ["a", "weather", "my-server_2", &"x".repeat(32)] {
        assert_eq!(validate_server_name(good), Ok(()), "{good}");
    }
    for bad in ["", "has space", "dot.ted", "ünï", &"x".repeat(33)] {
        assert!(validate_server_name(bad).is_err(), "{bad}");
    }
    assert_error(
        &rejected(ServerConfig::stdio("bad name", "x")),
        "name",
        "contains",
    );
}

#[test]
fn bad_urls_surface_in_resolve_not_in_the_builder() {
    let err = rejected(ServerConfig::sse("w", "not a url").header("A", "b"));
    assert_error(&err, "transport.url", "invalid url `not a url`");
    let err = rejected(ServerConfig::http("w", "ftp://example.com/"));
    assert_error(&err, "transport.url", "scheme must be http or https");
    assert_eq!(err.to_string(), format!("transport.url: {}", err.message));
}

#[test]
fn transport_mismatched_builders_are_reported() {
    assert_error(
        &rejected(ServerConfig::sse("w", "http://h/").arg("x")),
        "transport.args",
        "stdio",
    );
    assert_error(
        &rejected(ServerConfig::http("w", "http://h/").env("K", "V")),
        "transport.env",
        "stdio",
    );
    assert_error(
        &rejected(ok().header("A", "b")),
        "transport.headers",
        "remote",
    );
}

#[test]
fn heartbeat_every_scales_its_timeout() {
    let h = Heartbeat::every(ms(300));
    assert_eq!(
        (h.enabled, h.interval, h.timeout, h.failures),
        (true, ms(300), ms(100), 2)
    );
    assert!(ok().heartbeat(h).resolve().is_ok());
}

#[test]
fn zero_timeouts_and_pages_are_rejected() {
    assert_error(&rejected(ok().call_timeout(ms(0))), "call_timeout", "zero");
    assert_error(
        &rejected(ok().connect_timeout(ms(0))),
        "connect_timeout",
        "zero",
    );
    assert_error(
        &rejected(ok().close_timeout(ms(0))),
        "close_timeout",
        "zero",
    );
    assert_error(
        &rejected(ok().limits(crate::config::Limits::default().max_list_pages(0))),
        "limits.max_list_pages",
        "at least 1",
    );
}

#[test]
fn millisecond_settings_are_valid() {
    let reconnect = Reconnect {
        initial_delay: ms(5),
        max_delay: ms(50),
        ..Reconnect::default()
    };
    let config = ok()
        .reconnect(reconnect)
        .heartbeat(Heartbeat::every(ms(30)))
        .call_timeout(ms(200));
    assert!(config.resolve().is_ok());
}
