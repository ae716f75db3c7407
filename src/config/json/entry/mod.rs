//! One server entry of an `mcpServers` / `servers` object, and its conversion to a
//! [`ServerConfig`].

mod transport;

use std::collections::BTreeMap;

use serde::{Deserialize, de::IgnoredAny};

use super::{
    duration::{JsonDuration, JsonSeconds},
    expand::Vars,
    paths::to_json_error,
};
use crate::config::{ConfigError, Heartbeat, Reconnect, ServerConfig};

/// A server entry as written in the file, in any host's keys. Every key is optional here; which
/// ones are required or allowed depends on the transport, checked in [`Entry::load`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct Entry {
    command: Option<String>,
    url: Option<String>,
    /// Windsurf's name for `url`.
    server_url: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    transport: Option<String>,
    /// Cline's older name for `type`.
    transport_type: Option<String>,
    args: Option<Vec<String>>,
    /// Strings; VS Code also writes numbers, and `null` to drop an inherited variable.
    env: Option<BTreeMap<String, serde_json::Value>>,
    /// A dotenv file (VS Code, Cursor) read under `env`; relative to the config file's directory.
    env_file: Option<String>,
    cwd: Option<String>,
    env_allowlist: Option<Vec<String>>,
    stdin_close_grace: Option<JsonDuration>,
    term_grace: Option<JsonDuration>,
    headers: Option<BTreeMap<String, String>>,
    /// Older name of `limits.maxSseEventBytes` (remote servers only).
    max_event_bytes: Option<usize>,
    endpoint_timeout: Option<JsonDuration>,
    #[serde(rename = "treat400AsExpired")]
    treat_400_as_expired: Option<bool>,
    sse_retry_min: Option<JsonDuration>,
    sse_retry_max: Option<JsonDuration>,
    sse_max_retries: Option<u32>,
    /// `off`, `auto` or `prior-knowledge` (remote servers only).
    http2: Option<String>,
    reconnect: Option<ReconnectJson>,
    heartbeat: Option<HeartbeatJson>,
    call_timeout: Option<JsonDuration>,
    /// Cline's per-server timeout, in seconds: our `callTimeout`.
    timeout: Option<JsonSeconds>,
    connect_timeout: Option<JsonDuration>,
    close_timeout: Option<JsonDuration>,
    call_wait: Option<JsonDuration>,
    /// Older name of `limits.maxListPages`.
    max_tool_pages: Option<u32>,
    limits: Option<super::limits::LimitsJson>,
    protocol: Option<String>,
    /// Behind the gateway: `shared` or `per_host`.
    sessions: Option<String>,
    replay: Option<String>,
    /// Read by the loader before the entry is parsed: `true` means the entry is not loaded.
    #[serde(rename = "disabled")]
    _disabled: Option<bool>,
    /// Claude Code runs this command to make headers. Refused: ignoring it would connect without
    /// the credentials the user configured.
    headers_helper: Option<IgnoredAny>,
    // Host settings with no counterpart here, accepted and ignored (see `ignored_keys`).
    auto_approve: Option<IgnoredAny>,
    always_allow: Option<IgnoredAny>,
    disabled_tools: Option<IgnoredAny>,
    oauth: Option<IgnoredAny>,
    /// How requests are authorized (see `json::auth`).
    auth: Option<super::auth::AuthJson>,
    dev: Option<IgnoredAny>,
    gallery: Option<IgnoredAny>,
    version: Option<IgnoredAny>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct ReconnectJson {
    enabled: Option<bool>,
    initial_delay: Option<JsonDuration>,
    max_delay: Option<JsonDuration>,
    multiplier: Option<f64>,
    jitter: Option<f64>,
    max_attempts: Option<u32>,
    stability_window: Option<JsonDuration>,
    origin_attempts_per_second: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct HeartbeatJson {
    enabled: Option<bool>,
    interval: Option<JsonDuration>,
    timeout: Option<JsonDuration>,
    failures: Option<u32>,
    /// `session` or `origin` ([`HeartbeatScope`](crate::config::HeartbeatScope)).
    scope: Option<String>,
    session_check_every: Option<u32>,
}

/// Overwrites `$target` with `$value` when the key was present.
macro_rules! set {
    ($target:expr, $value:expr) => {
        if let Some(value) = $value {
            $target = value.into();
        }
    };
}
use set;

impl Entry {
    /// Expands variables, builds and resolves the config for server `name`. Error paths are JSON
    /// keys relative to the entry (the synonym the entry used), empty for the entry itself.
    pub(super) fn load(mut self, name: &str, vars: &Vars<'_>) -> Result<ServerConfig, ConfigError> {
        if self.headers_helper.is_some() {
            return Err(ConfigError::new(
                "headersHelper",
                "mcp-resilient does not run header commands; write the headers in `headers`",
            ));
        }
        let ignored = self.ignored_keys();
        if !ignored.is_empty() {
            tracing::debug!(keys = ?ignored, "ignoring host settings that have no counterpart here");
        }
        self.expand(vars)?;
        let mut renames = Vec::new();
        let config = self.into_config(name, vars, &mut renames)?;
        config.resolve().map_err(|err| to_json_error(err, &renames))
    }

    fn ignored_keys(&self) -> Vec<&'static str> {
        let present = [
            ("autoApprove", self.auto_approve.is_some()),
            ("alwaysAllow", self.always_allow.is_some()),
            ("disabledTools", self.disabled_tools.is_some()),
            ("oauth", self.oauth.is_some()),
            ("dev", self.dev.is_some()),
            ("gallery", self.gallery.is_some()),
            ("version", self.version.is_some()),
        ];
        present
            .iter()
            .filter(|(_, present)| *present)
            .map(|(key, _)| *key)
            .collect()
    }

    /// Expands `${…}` in the values hosts expand: `command`, `args`, `env`, `envFile`, `cwd`,
    /// `url`, `serverUrl`, `headers` and the client ids of `auth`.
    fn expand(&mut self, vars: &Vars<'_>) -> Result<(), ConfigError> {
        let expand = |path: String, value: &mut String| {
            *value = vars
                .expand(value)
                .map_err(|message| ConfigError::new(path, message))?;
            Ok::<_, ConfigError>(())
        };
        let single = [
            ("command", &mut self.command),
            ("envFile", &mut self.env_file),
            ("cwd", &mut self.cwd),
            ("url", &mut self.url),
            ("serverUrl", &mut self.server_url),
        ];
        for (key, value) in single {
            if let Some(value) = value {
                expand(key.to_owned(), value)?;
            }
        }
        for (i, arg) in self.args.iter_mut().flatten().enumerate() {
            expand(format!("args[{i}]"), arg)?;
        }
        for (key, value) in self.env.iter_mut().flatten() {
            if let serde_json::Value::String(value) = value {
                expand(format!("env.{key}"), value)?;
            }
        }
        for (key, value) in self.headers.iter_mut().flatten() {
            expand(format!("headers.{key}"), value)?;
        }
        for (key, value) in self.auth.iter_mut().flat_map(|a| a.strings()) {
            expand(key.to_owned(), value)?;
        }
        Ok(())
    }

    /// Builds the (not yet resolved) config; records in `renames` the synonyms this entry used,
    /// so resolve errors name them.
    fn into_config(
        mut self,
        name: &str,
        vars: &Vars<'_>,
        renames: &mut Vec<(&'static str, &'static str)>,
    ) -> Result<ServerConfig, ConfigError> {
        let mut config = self.transport_config(name, vars, renames)?;
        if let Some(json) = self.reconnect {
            config.reconnect = json.into_policy();
        }
        if let Some(json) = self.heartbeat {
            config.heartbeat = json.into_policy()?;
        }
        match (self.call_timeout, self.timeout) {
            (Some(_), Some(_)) => {
                return Err(ConfigError::new(
                    "timeout",
                    "says the same as `callTimeout`; give one of them",
                ));
            }
            (Some(call_timeout), None) => config.call_timeout = call_timeout.into(),
            (None, Some(seconds)) => {
                config.call_timeout = seconds.into();
                renames.push(("callTimeout", "timeout"));
            }
            (None, None) => {}
        }
        set!(config.connect_timeout, self.connect_timeout);
        set!(config.close_timeout, self.close_timeout);
        if let Some(wait) = self.call_wait {
            config.call_wait = Some(wait.into());
        }
        let limits = self.limits.take().unwrap_or_default();
        config.limits = limits.into_limits(self.max_tool_pages, self.max_event_bytes, renames)?;
        if let Some(protocol) = self.protocol.take() {
            config.protocol = protocol.parse().map_err(|e: crate::config::UnknownValue| {
                ConfigError::new("protocol", e.to_string())
            })?;
        }
        if let Some(sessions) = self.sessions.take() {
            config.sessions = sessions.parse().map_err(|e: crate::config::UnknownValue| {
                ConfigError::new("sessions", e.to_string())
            })?;
        }
        if let Some(replay) = self.replay.take() {
            config.replay = replay.parse().map_err(|e: crate::config::UnknownValue| {
                ConfigError::new("replay", e.to_string())
            })?;
        }
        Ok(config)
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
        set!(
            policy.origin_attempts_per_second,
            self.origin_attempts_per_second
        );
        policy
    }
}

impl HeartbeatJson {
    fn into_policy(self) -> Result<Heartbeat, ConfigError> {
        // An interval alone scales its timeout with it, as `Heartbeat::every` does, so
        // `"interval": "5s"` does not trip over the 10 s default timeout.
        let mut policy = match self.interval {
            Some(interval) => Heartbeat::every(interval.into()),
            None => Heartbeat::default(),
        };
        set!(policy.enabled, self.enabled);
        set!(policy.timeout, self.timeout);
        set!(policy.failures, self.failures);
        set!(policy.session_check_every, self.session_check_every);
        if let Some(scope) = self.scope {
            policy.scope = scope.parse().map_err(|e: crate::config::UnknownValue| {
                ConfigError::new("heartbeat.scope", e.to_string())
            })?;
        }
        Ok(policy)
    }
}
