//! One server entry of an `mcpServers` / `servers` object, and its conversion to a
//! [`ServerConfig`].

use std::{collections::BTreeMap, path::PathBuf};

use serde::Deserialize;

use super::duration::JsonDuration;
use crate::config::{ConfigError, Heartbeat, Reconnect, RemoteKind, ServerConfig, TransportConfig};

/// A server entry as written in the file. Every key is optional here; which ones are required or
/// allowed depends on the transport, checked in [`Entry::into_config`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct Entry {
    command: Option<String>,
    args: Option<Vec<String>>,
    env: Option<BTreeMap<String, String>>,
    cwd: Option<PathBuf>,
    env_allowlist: Option<Vec<String>>,
    stdin_close_grace: Option<JsonDuration>,
    term_grace: Option<JsonDuration>,
    url: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    transport: Option<String>,
    headers: Option<BTreeMap<String, String>>,
    max_event_bytes: Option<usize>,
    endpoint_timeout: Option<JsonDuration>,
    #[serde(rename = "treat400AsExpired")]
    treat_400_as_expired: Option<bool>,
    sse_retry_min: Option<JsonDuration>,
    sse_retry_max: Option<JsonDuration>,
    sse_max_retries: Option<u32>,
    reconnect: Option<ReconnectJson>,
    heartbeat: Option<HeartbeatJson>,
    call_timeout: Option<JsonDuration>,
    connect_timeout: Option<JsonDuration>,
    close_timeout: Option<JsonDuration>,
    call_wait: Option<JsonDuration>,
    max_tool_pages: Option<u32>,
    protocol: Option<String>,
    /// `true`: the entry is skipped (Cline and others write this).
    #[serde(default)]
    pub(super) disabled: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ReconnectJson {
    enabled: Option<bool>,
    initial_delay: Option<JsonDuration>,
    max_delay: Option<JsonDuration>,
    multiplier: Option<f64>,
    jitter: Option<f64>,
    max_attempts: Option<u32>,
    stability_window: Option<JsonDuration>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct HeartbeatJson {
    enabled: Option<bool>,
    interval: Option<JsonDuration>,
    timeout: Option<JsonDuration>,
    failures: Option<u32>,
}

/// Overwrites `$target` with `$value` when the key was present.
macro_rules! set {
    ($target:expr, $value:expr) => {
        if let Some(value) = $value {
            $target = value.into();
        }
    };
}

impl Entry {
    /// Builds the (not yet resolved) config for server `name`. Error paths are JSON keys relative
    /// to the entry, empty for the entry itself.
    pub(super) fn into_config(self, name: &str) -> Result<ServerConfig, ConfigError> {
        let mut config = match (self.transport_kind()?, &self.command, &self.url) {
            (_, Some(_), Some(_)) => {
                return Err(ConfigError::new(
                    "",
                    "has both `command` and `url`; pick one",
                ));
            }
            (_, None, None) => {
                return Err(ConfigError::new(
                    "",
                    "needs a `command` (stdio) or a `url` (remote)",
                ));
            }
            (Some(None), None, Some(_)) => {
                return Err(ConfigError::new(
                    "url",
                    "a stdio server takes `command`, not `url`",
                ));
            }
            (Some(Some(_)), Some(_), None) => {
                return Err(ConfigError::new(
                    "command",
                    "a remote server takes `url`, not `command`",
                ));
            }
            (_, Some(command), None) => ServerConfig::stdio(name, command),
            (kind, None, Some(url)) => match kind.flatten().unwrap_or_default() {
                RemoteKind::Auto => ServerConfig::remote(name, url),
                RemoteKind::Sse => ServerConfig::sse(name, url),
                RemoteKind::Http => ServerConfig::http(name, url),
            },
        };
        match &mut config.transport {
            TransportConfig::Stdio(stdio) => {
                self.reject_remote_keys()?;
                set!(stdio.args, self.args);
                set!(stdio.env, self.env);
                stdio.cwd = self.cwd;
                set!(stdio.env_allowlist, self.env_allowlist);
                set!(stdio.stdin_close_grace, self.stdin_close_grace);
                set!(stdio.term_grace, self.term_grace);
            }
            TransportConfig::Remote(remote) => {
                self.reject_stdio_keys()?;
                remote.headers = self.headers.unwrap_or_default().into_iter().collect();
                set!(remote.max_event_bytes, self.max_event_bytes);
                set!(remote.endpoint_timeout, self.endpoint_timeout);
                set!(remote.treat_400_as_expired, self.treat_400_as_expired);
                set!(remote.sse_retry_min, self.sse_retry_min);
                set!(remote.sse_retry_max, self.sse_retry_max);
                set!(remote.sse_max_retries, self.sse_max_retries);
            }
        }
        if let Some(json) = self.reconnect {
            config.reconnect = json.into_policy();
        }
        if let Some(json) = self.heartbeat {
            config.heartbeat = json.into_policy();
        }
        set!(config.call_timeout, self.call_timeout);
        set!(config.connect_timeout, self.connect_timeout);
        set!(config.close_timeout, self.close_timeout);
        if let Some(wait) = self.call_wait {
            config.call_wait = Some(wait.into());
        }
        set!(config.max_tool_pages, self.max_tool_pages);
        if let Some(protocol) = &self.protocol {
            config.protocol = protocol
                .parse()
                .map_err(|message| ConfigError::new("protocol", message))?;
        }
        Ok(config)
    }

    /// The declared transport: `None` if undeclared, `Some(None)` for stdio, `Some(Some(kind))`
    /// for a remote kind. `type` and `transport` are synonyms and must agree when both are given.
    fn transport_kind(&self) -> Result<Option<Option<RemoteKind>>, ConfigError> {
        let parse = |key: &str, value: &str| match value {
            "stdio" => Ok(None),
            _ => value
                .parse::<RemoteKind>()
                .map(Some)
                .map_err(|message| ConfigError::new(key, message)),
        };
        let by_type = self.kind.as_deref().map(|v| parse("type", v)).transpose()?;
        let by_transport = self
            .transport
            .as_deref()
            .map(|v| parse("transport", v))
            .transpose()?;
        match (by_type, by_transport) {
            (Some(a), Some(b)) if a != b => Err(ConfigError::new(
                "transport",
                "disagrees with `type`; give one of them",
            )),
            (a, b) => Ok(a.or(b)),
        }
    }

    fn reject_remote_keys(&self) -> Result<(), ConfigError> {
        let present = [
            ("headers", self.headers.is_some()),
            ("maxEventBytes", self.max_event_bytes.is_some()),
            ("endpointTimeout", self.endpoint_timeout.is_some()),
            ("treat400AsExpired", self.treat_400_as_expired.is_some()),
            ("sseRetryMin", self.sse_retry_min.is_some()),
            ("sseRetryMax", self.sse_retry_max.is_some()),
            ("sseMaxRetries", self.sse_max_retries.is_some()),
        ];
        reject_present(&present, "applies only to remote (url) servers")
    }

    fn reject_stdio_keys(&self) -> Result<(), ConfigError> {
        let present = [
            ("args", self.args.is_some()),
            ("env", self.env.is_some()),
            ("cwd", self.cwd.is_some()),
            ("envAllowlist", self.env_allowlist.is_some()),
            ("stdinCloseGrace", self.stdin_close_grace.is_some()),
            ("termGrace", self.term_grace.is_some()),
        ];
        reject_present(&present, "applies only to stdio (command) servers")
    }
}

fn reject_present(keys: &[(&str, bool)], message: &str) -> Result<(), ConfigError> {
    match keys.iter().find(|(_, present)| *present) {
        Some((key, _)) => Err(ConfigError::new(*key, message)),
        None => Ok(()),
    }
}

impl ReconnectJson {
    fn into_policy(self) -> Reconnect {
        let mut policy = Reconnect::default();
        set!(policy.enabled, self.enabled);
        set!(policy.initial_delay, self.initial_delay);
        set!(policy.max_delay, self.max_delay);
        set!(policy.multiplier, self.multiplier);
        set!(policy.jitter, self.jitter);
        set!(policy.max_attempts, self.max_attempts);
        policy.stability_window = self.stability_window.map(Into::into);
        policy
    }
}

impl HeartbeatJson {
    fn into_policy(self) -> Heartbeat {
        // An interval alone scales its timeout with it, as `Heartbeat::every` does, so
        // `"interval": "5s"` does not trip over the 10 s default timeout.
        let mut policy = match self.interval {
            Some(interval) => Heartbeat::every(interval.into()),
            None => Heartbeat::default(),
        };
        set!(policy.enabled, self.enabled);
        set!(policy.timeout, self.timeout);
        set!(policy.failures, self.failures);
        policy
    }
}
