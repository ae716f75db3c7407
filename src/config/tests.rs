//! Unit tests of the configuration module, one file per concern.

mod bounds;
mod builder;
mod duration;
mod json;
mod json_errors;

use std::time::Duration;

use super::{ConfigError, ServerConfig, load_servers};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A valid stdio server to vary.
fn ok() -> ServerConfig {
    ServerConfig::stdio("fs", "mcp-fs")
}

/// Resolves `config` and returns the error, failing the test if it was accepted.
fn rejected(config: ServerConfig) -> ConfigError {
    match config.resolve() {
        Ok(config) => panic!("accepted: {config:?}"),
        Err(err) => err,
    }
}

/// Loads `json` and returns the error, failing the test if it was accepted.
fn json_rejected(json: &str) -> ConfigError {
    match load_servers(json) {
        Ok(configs) => panic!("accepted: {configs:?}"),
        Err(err) => err,
    }
}

/// Asserts `err` is at `path` and its message contains `needle`.
#[track_caller]
fn assert_error(err: &ConfigError, path: &str, needle: &str) {
    assert_eq!(err.path, path, "wrong path in `{err}`");
    assert!(
        err.message.contains(needle),
        "`{err}` does not mention `{needle}`"
    );
}
