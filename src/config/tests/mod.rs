//! Unit tests of the configuration module, one file per concern.

#[cfg(feature = "config-files")]
mod auth;
mod bounds;
mod builder;
mod duration;
#[cfg(feature = "config-files")]
mod expand;
#[cfg(feature = "config-files")]
mod files;
#[cfg(feature = "config-files")]
mod hosts_claude;
#[cfg(feature = "config-files")]
mod hosts_editors;
#[cfg(feature = "config-files")]
mod hosts_extensions;
#[cfg(feature = "config-files")]
mod huge_durations;
#[cfg(feature = "config-files")]
mod json;
#[cfg(feature = "config-files")]
mod json_errors;
#[cfg(feature = "config-files")]
mod jsonc_dotenv;
#[cfg(feature = "config-files")]
mod limits;
mod redaction;
#[cfg(feature = "config-files")]
mod skipping;

use std::time::Duration;

#[cfg(feature = "config-files")]
use super::load_servers;
use super::{ConfigError, ServerConfig};

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

#[cfg(feature = "config-files")]
/// Loads `json` and returns the error: the document's, or that of its one skipped entry. Fails
/// the test if everything loaded.
fn json_rejected(json: &str) -> ConfigError {
    match load_servers(json) {
        Err(err) => err,
        Ok(loaded) => match <[_; 1]>::try_from(loaded.skipped) {
            Ok([skipped]) => skipped.error,
            Err(skipped) => panic!(
                "not one skipped entry: {skipped:?}, loaded {:?}",
                loaded.servers
            ),
        },
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

#[cfg(feature = "config-files")]
/// A directory under `tests/fixtures/hosts`.
fn fixture_dir(relative: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosts")
        .join(relative)
}

#[cfg(feature = "config-files")]
/// Loads a host file as if it lived in `fixture_dir(dir)`, with `env` as the whole environment.
fn load_host(json: &str, dir: &str, env: &[(&str, &str)]) -> super::LoadedServers {
    let env: std::collections::BTreeMap<String, String> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let lookup = |name: &str| env.get(name).cloned();
    super::load_servers_with(json, Some(&fixture_dir(dir)), &lookup)
        .unwrap_or_else(|err| panic!("document rejected: {err}"))
}

/// The loaded server `name`.
#[track_caller]
#[cfg(feature = "config-files")]
fn loaded<'a>(servers: &'a super::LoadedServers, name: &str) -> &'a ServerConfig {
    servers
        .servers
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("{name} not loaded: {servers:#?}"))
}

/// The error of skipped entry `name`.
#[track_caller]
#[cfg(feature = "config-files")]
fn skipped<'a>(servers: &'a super::LoadedServers, name: &str) -> &'a ConfigError {
    &servers
        .skipped
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("{name} not skipped: {servers:#?}"))
        .error
}

#[cfg_attr(not(feature = "config-files"), allow(dead_code))]
#[track_caller]
fn stdio_of(config: &ServerConfig) -> &super::StdioConfig {
    match &config.transport {
        super::TransportConfig::Stdio(stdio) => stdio,
        super::TransportConfig::Remote(_) => panic!("{} is remote", config.name),
    }
}

#[cfg_attr(not(feature = "config-files"), allow(dead_code))]
#[track_caller]
fn remote_of(config: &ServerConfig) -> &super::RemoteConfig {
    match &config.transport {
        super::TransportConfig::Remote(remote) => remote,
        super::TransportConfig::Stdio(_) => panic!("{} is stdio", config.name),
    }
}

#[cfg(feature = "config-files")]
/// The names of the loaded servers, sorted.
fn names(servers: &super::LoadedServers) -> Vec<&str> {
    servers.servers.iter().map(|s| s.name.as_str()).collect()
}
