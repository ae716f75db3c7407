//! [`ServerConfig::resolve`]: the one place every bound is checked.

use super::{
    ConfigError, Heartbeat, ProtocolChoice, Reconnect, RemoteKind, ServerConfig, TransportConfig,
    format_duration,
};

mod check;
mod transport;

use check::{Check, at_most, fail, positive};
use transport::{check_close_timeout, check_remote, check_stdio};

impl ServerConfig {
    /// Validates the config and returns it unchanged, or the first problem found with the dotted
    /// path of its field (`name`, `transport.url`, `reconnect.max_delay`, `heartbeat.timeout`, …).
    ///
    /// Reconnect and heartbeat bounds are checked only when the policy is enabled. An unset
    /// stability window stays unset (it means the max delay).
    pub fn resolve(self) -> Result<ServerConfig, ConfigError> {
        if let Some(err) = &self.pending {
            return Err(err.clone());
        }
        validate_server_name(&self.name).map_err(|message| ConfigError::new("name", message))?;
        match &self.transport {
            TransportConfig::Stdio(stdio) => check_stdio(stdio)?,
            TransportConfig::Remote(remote) => check_remote(remote)?,
        }
        if let TransportConfig::Remote(remote) = &self.transport
            && remote.kind == RemoteKind::Sse
            && self.protocol == ProtocolChoice::V2026_07_28
        {
            fail(
                "protocol",
                "legacy SSE speaks only 2024-11-05; use transport `http` (or `auto`) for 2026-07-28",
            )?;
        }
        if self.reconnect.enabled {
            check_reconnect(&self.reconnect)?;
        }
        if self.heartbeat.enabled {
            check_heartbeat(&self.heartbeat)?;
        }
        positive("call_timeout", self.call_timeout)?;
        positive("connect_timeout", self.connect_timeout)?;
        positive("close_timeout", self.close_timeout)?;
        check_close_timeout(&self.transport, self.close_timeout)?;
        if let Some(wait) = self.call_wait {
            at_most("call_wait", wait)?;
        }
        self.limits.check()?;
        Ok(self)
    }
}

/// Checks a server name: 1 to 32 characters from `A-Z`, `a-z`, `0-9`, `_` and `-`.
///
/// The name becomes part of every public tool name (`mcp__<server>__<tool>`), so it is kept to
/// characters every model provider accepts in a tool name.
pub(in crate::config) fn validate_server_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("server name must not be empty".to_owned());
    }
    // Both problems at once: a name copied from a marketplace (`io.github.org/server`) usually
    // has both, and fixing one only to hear of the other wastes a round trip.
    let too_long = name.chars().count() > 32;
    let bad = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'));
    match (too_long, bad) {
        (false, None) => {}
        (true, None) => {
            return Err(format!("server name `{name}` is longer than 32 characters"));
        }
        (false, Some(bad)) => {
            return Err(format!(
                "server name `{name}` contains {bad:?}; use only A-Z, a-z, 0-9, _ and -"
            ));
        }
        (true, Some(bad)) => {
            return Err(format!(
                "server name `{name}` is longer than 32 characters and contains {bad:?}; use at \
                 most 32 of A-Z, a-z, 0-9, _ and -"
            ));
        }
    }
    Ok(())
}

fn check_reconnect(r: &Reconnect) -> Check {
    positive("reconnect.initial_delay", r.initial_delay)?;
    if r.max_delay < r.initial_delay {
        return fail(
            "reconnect.max_delay",
            format!(
                "must be at least initial_delay ({}), got {}",
                format_duration(r.initial_delay),
                format_duration(r.max_delay)
            ),
        );
    }
    at_most("reconnect.max_delay", r.max_delay)?;
    if !(r.multiplier.is_finite() && r.multiplier >= 1.0) {
        return fail(
            "reconnect.multiplier",
            format!(
                "must be a finite number of at least 1.0, got {}",
                r.multiplier
            ),
        );
    }
    if !(r.jitter.is_finite() && (0.0..1.0).contains(&r.jitter)) {
        return fail(
            "reconnect.jitter",
            format!("must be at least 0 and less than 1, got {}", r.jitter),
        );
    }
    if r.max_attempts == 0 {
        return fail("reconnect.max_attempts", "must be at least 1, got 0");
    }
    if let Some(window) = r.stability_window {
        positive("reconnect.stability_window", window)?;
    }
    if r.origin_attempts_per_second == 0 {
        return fail(
            "reconnect.origin_attempts_per_second",
            "must be at least 1, got 0",
        );
    }
    Ok(())
}

fn check_heartbeat(h: &Heartbeat) -> Check {
    positive("heartbeat.interval", h.interval)?;
    positive("heartbeat.timeout", h.timeout)?;
    if h.timeout >= h.interval {
        return fail(
            "heartbeat.timeout",
            format!(
                "must be less than interval ({}), got {}",
                format_duration(h.interval),
                format_duration(h.timeout)
            ),
        );
    }
    if h.failures == 0 {
        return fail("heartbeat.failures", "must be at least 1, got 0");
    }
    if h.session_check_every == 0 {
        return fail("heartbeat.session_check_every", "must be at least 1, got 0");
    }
    Ok(())
}
