//! The flags of [`ServerArgs`] turned into [`ServerConfig`]s: the transport, the policies, and
//! a `--config` file's servers.

use std::time::Duration;

use mcp_resilient::{
    ServerConfig,
    auth::{Auth, Grant, OAuthConfig},
    config::{Heartbeat, Reconnect, TransportConfig, load_servers_file},
};

use super::server::ServerArgs;

/// The longest pause between two attempts of a command that waits for its server (`--wait`):
/// a person who starts it should not wait the default `max_delay` (30 s) more.
const WAIT_MAX_DELAY: Duration = Duration::from_secs(2);

impl ServerArgs {
    /// The configuration these flags describe (not yet resolved): exactly one server.
    pub(crate) fn to_config(&self) -> Result<ServerConfig, String> {
        if self.config.is_some() && self.servers.len() != 1 {
            return Err("--config needs the server to use: --server NAME".into());
        }
        let mut configs = self.to_configs()?;
        Ok(configs.remove(0))
    }

    /// The configuration of `tools` or `call`, which wait up to `wait` for the server when it is
    /// given (`--wait`): the wait then bounds the retries, not the outage budget (unless
    /// `--max-attempts` is given), and a server that comes up is noticed within
    /// [`WAIT_MAX_DELAY`] (unless `--reconnect-max` is given).
    pub(crate) fn to_waiting_config(&self, wait: Option<Duration>) -> Result<ServerConfig, String> {
        let mut config = self.to_config()?;
        if wait.is_some() {
            let mut rc = config.get_reconnect().clone();
            if self.max_attempts.is_none() {
                rc = rc.max_attempts(u32::MAX);
            }
            if self.reconnect_max.is_none() {
                let max = rc
                    .get_max_delay()
                    .min(WAIT_MAX_DELAY.max(rc.get_initial_delay()));
                rc = rc.max_delay(max);
            }
            config = config.reconnect(rc);
        }
        Ok(config)
    }

    /// The configurations these flags describe (not yet resolved): one for `--url` and
    /// `--stdio`, the named ones (or all) of `--config`. The policy flags apply to each.
    pub(crate) fn to_configs(&self) -> Result<Vec<ServerConfig>, String> {
        self.base()?
            .into_iter()
            .map(|config| self.with_policy(config))
            .collect()
    }

    /// Whether the servers come from `--config` (then their names are the file's).
    pub(crate) fn uses_file(&self) -> bool {
        self.config.is_some()
    }

    /// Whether `--name` was given.
    pub(crate) fn named(&self) -> bool {
        self.name.is_some()
    }

    fn with_policy(&self, mut config: ServerConfig) -> Result<ServerConfig, String> {
        if let Some(name) = &self.name
            && (self.config.is_none() || self.servers.len() == 1)
        {
            config = config.with_name(name.clone());
        }
        let remote = matches!(config.transport(), TransportConfig::Remote(_));
        if remote && self.url.is_some() {
            config = config.remote_kind(self.transport);
        }
        let mut hb = config.get_heartbeat().clone();
        if let Some(interval) = self.heartbeat_interval {
            hb = hb.interval(interval);
            if self.heartbeat_timeout.is_none() && hb.get_timeout() >= interval {
                hb = hb.timeout(interval / 3);
            }
        }
        hb = set(hb, self.heartbeat_timeout, Heartbeat::timeout);
        hb = set(hb, self.heartbeat_failures, Heartbeat::failures);
        let mut rc = config.get_reconnect().clone();
        rc = set(rc, self.reconnect_initial, Reconnect::initial_delay);
        rc = set(rc, self.reconnect_max, Reconnect::max_delay);
        rc = set(rc, self.max_attempts, Reconnect::max_attempts);
        config = config.heartbeat(hb).reconnect(rc);
        config = set(config, self.call_timeout, ServerConfig::call_timeout);
        config = set(config, self.connect_timeout, ServerConfig::connect_timeout);
        config = set(config, self.protocol, ServerConfig::protocol);
        if let Some(auth) = self.auth()?
            && remote
        {
            config = config.auth(auth);
        }
        Ok(config)
    }

    /// The `--auth` flags as an [`Auth`], if any was given.
    fn auth(&self) -> Result<Option<Auth>, String> {
        let oauth_flags = self.client_id.is_some()
            || self.client_secret_env.is_some()
            || !self.scopes.is_empty()
            || self.callback_port.is_some()
            || self.client_credentials;
        let kind = match (&self.auth, oauth_flags, &self.token_env) {
            (Some(kind), _, _) => kind.as_str(),
            (None, true, _) => "oauth",
            (None, false, Some(_)) => "bearer",
            (None, false, None) => return Ok(None),
        };
        match kind {
            "none" => Ok(Some(Auth::None)),
            "bearer" => {
                let env = self.token_env.clone().ok_or(
                    "--auth bearer needs --token-env VAR (the variable holding the token)",
                )?;
                Ok(Some(Auth::bearer_env(env)))
            }
            "oauth" => {
                let grant = match self.client_credentials {
                    true => Grant::ClientCredentials,
                    false => Grant::AuthorizationCode,
                };
                let mut oauth = OAuthConfig::default()
                    .grant(grant)
                    .scopes(self.scopes.clone())
                    .callback_port(self.callback_port.unwrap_or(0));
                if let Some(id) = &self.client_id {
                    oauth = oauth.client_id(id);
                }
                if let Some(env) = &self.client_secret_env {
                    oauth = oauth.client_secret_env(env);
                }
                Ok(Some(Auth::OAuth(oauth)))
            }
            other => Err(format!("--auth {other}: expected none, oauth or bearer")),
        }
    }

    /// `login NAME`: the server NAME of `--config`, or `--url` under that name.
    pub(crate) fn named_as(&mut self, name: &str) {
        if self.config.is_some() {
            self.servers = vec![name.to_owned()];
        } else {
            self.name = Some(name.to_owned());
        }
    }

    fn base(&self) -> Result<Vec<ServerConfig>, String> {
        let name = self.name.clone().unwrap_or_else(|| "server".to_owned());
        let chosen = [
            self.stdio || !self.command.is_empty(),
            self.config.is_some(),
            self.url.is_some(),
        ];
        match chosen.iter().filter(|c| **c).count() {
            0 => {
                return Err(
                    "name a server: --stdio -- COMMAND…, --config FILE --server NAME, or --url URL"
                        .into(),
                );
            }
            1 => {}
            _ => return Err("--stdio, --config and --url exclude each other".into()),
        }
        if let Some(path) = &self.config {
            let mut loaded = load_servers_file(path).map_err(|e| e.to_string())?;
            // Other entries' problems do not stop this command, but the user should hear of
            // them; a wanted entry's own problem is its error below.
            let others = loaded
                .skipped()
                .iter()
                .map(|s| !self.servers.iter().any(|n| n == s.name()));
            for (warning, other) in loaded.warnings().zip(others) {
                if other {
                    crate::safe::eprint("mcp-resilient: warning", warning);
                }
            }
            if self.servers.is_empty() {
                return Ok(loaded.into_servers());
            }
            let names: Vec<String> = loaded
                .servers()
                .iter()
                .map(|s| s.name().to_owned())
                .collect();
            return self
                .servers
                .iter()
                .map(|wanted| {
                    if let Some(config) = loaded.take(wanted) {
                        return Ok(config);
                    }
                    if let Some(skipped) = loaded.skipped().iter().find(|s| s.name() == wanted) {
                        return Err(format!(
                            "server '{wanted}' in {}: {}",
                            path.display(),
                            skipped.error()
                        ));
                    }
                    if loaded.disabled().iter().any(|name| name == wanted) {
                        return Err(format!(
                            "server '{wanted}' is disabled in {}",
                            path.display()
                        ));
                    }
                    Err(format!(
                        "no server '{wanted}' in {} (it has: {})",
                        path.display(),
                        names.join(", ")
                    ))
                })
                .collect();
        }
        if let Some(url) = &self.url {
            let mut config = ServerConfig::remote(name, url);
            for header in &self.headers {
                let (key, value) = header
                    .split_once(':')
                    .ok_or_else(|| format!("--header '{header}': expected 'Name: value'"))?;
                config = config.header(key.trim(), value.trim());
            }
            return Ok(vec![config]);
        }
        let (command, args) = self
            .command
            .split_first()
            .ok_or("--stdio needs the command after `--`, e.g. --stdio -- my-server --flag")?;
        Ok(vec![
            ServerConfig::stdio(name, command).args(args.iter().cloned()),
        ])
    }
}

fn set<C, T>(config: C, value: Option<T>, setter: fn(C, T) -> C) -> C {
    match value {
        Some(value) => setter(config, value),
        None => config,
    }
}
