//! The transport half of an entry: which transport, and its keys.

use std::{collections::BTreeMap, path::PathBuf};

use serde_json::Value;

use super::{Entry, set};
use crate::config::{
    ConfigError, RemoteKind, ServerConfig, StdioConfig, TransportConfig, json::dotenv,
    json::expand::Vars,
};

/// A declared transport: `None` for stdio, `Some(kind)` for a remote kind.
type Declared = Option<RemoteKind>;

impl Entry {
    /// The server's transport with its keys applied, everything else at its default.
    pub(super) fn transport_config(
        &mut self,
        name: &str,
        vars: &Vars<'_>,
        renames: &mut Vec<(&'static str, &'static str)>,
    ) -> Result<ServerConfig, ConfigError> {
        let url = self.take_url()?;
        if let Some(("serverUrl", _)) = url {
            renames.push(("url", "serverUrl"));
        }
        let mut config = match (self.declared_transport()?, self.command.take(), url) {
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
            (Some(None), None, Some((key, _))) => {
                return Err(ConfigError::new(
                    key,
                    format!("a stdio server takes `command`, not `{key}`"),
                ));
            }
            (Some(Some(_)), Some(_), None) => {
                return Err(ConfigError::new(
                    "command",
                    "a remote server takes `url`, not `command`",
                ));
            }
            (_, Some(command), None) => ServerConfig::stdio(name, command),
            (kind, None, Some((_, url))) => match kind.flatten().unwrap_or_default() {
                RemoteKind::Auto => ServerConfig::remote(name, url),
                RemoteKind::Sse => ServerConfig::sse(name, url),
                RemoteKind::Http => ServerConfig::http(name, url),
            },
        };
        match &mut config.transport {
            TransportConfig::Stdio(stdio) => {
                self.reject_remote_keys()?;
                self.apply_stdio(stdio, vars)?;
            }
            TransportConfig::Remote(remote) => {
                self.reject_stdio_keys()?;
                remote.headers = self
                    .headers
                    .take()
                    .unwrap_or_default()
                    .into_iter()
                    .collect();
                set!(remote.endpoint_timeout, self.endpoint_timeout);
                set!(remote.treat_400_as_expired, self.treat_400_as_expired);
                set!(remote.sse_retry_min, self.sse_retry_min);
                set!(remote.sse_retry_max, self.sse_retry_max);
                set!(remote.sse_max_retries, self.sse_max_retries);
                if let Some(http2) = self.http2.take() {
                    remote.http2 = http2.parse().map_err(|e: crate::config::UnknownValue| {
                        ConfigError::new("http2", e.to_string())
                    })?;
                }
                if let Some(auth) = self.auth.take() {
                    remote.auth = auth.into_auth()?;
                }
            }
        }
        Ok(config)
    }

    /// `url` or Windsurf's `serverUrl`, with the key it was written under.
    fn take_url(&mut self) -> Result<Option<(&'static str, String)>, ConfigError> {
        match (self.url.take(), self.server_url.take()) {
            (Some(url), Some(server_url)) if url != server_url => Err(ConfigError::new(
                "serverUrl",
                "differs from `url`; give one of them",
            )),
            (Some(url), _) => Ok(Some(("url", url))),
            (None, Some(server_url)) => Ok(Some(("serverUrl", server_url))),
            (None, None) => Ok(None),
        }
    }

    /// The declared transport, `None` if undeclared. `type`, `transport` and Cline's
    /// `transportType` are synonyms and must agree when several are given.
    fn declared_transport(&self) -> Result<Option<Declared>, ConfigError> {
        let keys = [
            ("type", &self.kind),
            ("transport", &self.transport),
            ("transportType", &self.transport_type),
        ];
        let mut declared: Option<(&str, Declared)> = None;
        for (key, value) in keys {
            let Some(value) = value else { continue };
            let kind = match value.as_str() {
                "stdio" => None,
                other => Some(
                    other
                        .parse::<RemoteKind>()
                        .map_err(|e| ConfigError::new(key, e.to_string()))?,
                ),
            };
            match declared {
                Some((first, earlier)) if earlier != kind => {
                    return Err(ConfigError::new(
                        key,
                        format!("disagrees with `{first}`; give one of them"),
                    ));
                }
                Some(_) => {}
                None => declared = Some((key, kind)),
            }
        }
        Ok(declared.map(|(_, kind)| kind))
    }

    fn apply_stdio(&mut self, stdio: &mut StdioConfig, vars: &Vars<'_>) -> Result<(), ConfigError> {
        set!(stdio.args, self.args.take());
        set!(stdio.env_allowlist, self.env_allowlist.take());
        stdio.cwd = self.cwd.take().map(PathBuf::from);
        set!(stdio.stdin_close_grace, self.stdin_close_grace);
        set!(stdio.term_grace, self.term_grace);
        let mut env = match self.env_file.take() {
            Some(file) => {
                let path = vars.resolve_path(&file);
                let text = crate::config::json::files::read_small(&path).map_err(|err| {
                    ConfigError::new("envFile", format!("cannot read {}: {err}", path.display()))
                })?;
                dotenv::parse_env_file(&text)
            }
            None => BTreeMap::new(),
        };
        // `env` overrides the file; `null` drops a variable, from the file and from the host
        // variables passed through alike (VS Code's meaning).
        for (key, value) in self.env.take().unwrap_or_default() {
            match value {
                Value::String(value) => {
                    env.insert(key, value);
                }
                Value::Number(number) => {
                    env.insert(key, number.to_string());
                }
                Value::Null => {
                    env.remove(&key);
                    stdio.env_allowlist.retain(|allowed| *allowed != key);
                }
                _ => {
                    return Err(ConfigError::new(
                        format!("env.{key}"),
                        "expected a string, a number or null",
                    ));
                }
            }
        }
        stdio.env = env;
        Ok(())
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
            ("http2", self.http2.is_some()),
            ("auth", self.auth.is_some()),
        ];
        reject_present(&present, "applies only to remote (url) servers")
    }

    fn reject_stdio_keys(&self) -> Result<(), ConfigError> {
        let present = [
            ("args", self.args.is_some()),
            ("env", self.env.is_some()),
            ("envFile", self.env_file.is_some()),
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
