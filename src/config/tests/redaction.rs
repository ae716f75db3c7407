//! A configuration printed with `{:?}` (a host logging what it loaded) shows no secret: header
//! and `env` values are left out, a URL loses its userinfo and query values, and so do the
//! messages that quote a URL.

use super::rejected;
use crate::config::ServerConfig;

#[test]
fn a_stdio_config_shows_env_names_not_values() {
    let config = ServerConfig::stdio("fs", "mcp-fs")
        .env("GITHUB_TOKEN", "ghp_SECRET123")
        .env("MODE", "fast");
    let debug = format!("{config:?}");
    assert!(
        !debug.contains("SECRET123") && !debug.contains("fast"),
        "{debug}"
    );
    assert!(
        debug.contains("GITHUB_TOKEN") && debug.contains("MODE"),
        "{debug}"
    );
    assert!(debug.contains("mcp-fs"), "{debug}");
}

#[test]
fn a_remote_config_shows_its_url_without_credentials() {
    let config = ServerConfig::http("w", "https://user:pass@h.example/mcp?api_key=SECRET123&x=1")
        .header("Authorization", "Bearer SECRET456");
    let debug = format!("{config:?}");
    for secret in ["SECRET123", "SECRET456", "pass", "user:"] {
        assert!(!debug.contains(secret), "{secret} in {debug}");
    }
    assert!(
        debug.contains("https://REDACTED@h.example/mcp?api_key=REDACTED&x=REDACTED"),
        "{debug}"
    );
}

#[test]
fn messages_that_quote_a_url_redact_it() {
    let err = rejected(ServerConfig::remote(
        "w",
        "ftp://user:pass@h/x?api_key=SECRET123",
    ));
    let text = err.to_string();
    assert!(
        !text.contains("SECRET123") && !text.contains("pass"),
        "{text}"
    );
    assert!(
        text.contains("ftp://REDACTED@h/x?api_key=REDACTED"),
        "{text}"
    );
    let err = rejected(ServerConfig::remote(
        "w",
        "http://user:pass@[bad/?api_key=SECRET123",
    ));
    let text = err.to_string();
    assert!(
        !text.contains("SECRET123") && !text.contains("pass"),
        "{text}"
    );
}
