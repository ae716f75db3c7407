//! [`ServerConfig::resolve`]: the one place every bound is checked.

use std::time::Duration;

use super::{
    ConfigError, Heartbeat, MAX_DURATION, ProtocolChoice, Reconnect, RemoteConfig, RemoteKind,
    ServerConfig, StdioConfig, TransportConfig, format_duration,
};

type Check = Result<(), ConfigError>;

impl ServerConfig {
    /// Validates the config and returns it unchanged, or the first problem found with the dotted
    /// path of its field (`name`, `transport.url`, `reconnect.max_delay`, `heartbeat.timeout`, …).
    ///
    /// Reconnect and heartbeat bounds are checked only when the policy is enabled.
    /// `reconnect.stability_window` stays `None` when unset; read it through
    /// [`Reconnect::effective_stability_window`].
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
            positive("call_wait", wait)?;
        }
        self.limits.check()?;
        Ok(self)
    }
}

/// Checks a server name: 1 to 32 characters from `A-Z`, `a-z`, `0-9`, `_` and `-`.
///
/// The name becomes part of every public tool name (`mcp__<server>__<tool>`), so it is kept to
/// characters every model provider accepts in a tool name.
pub fn validate_server_name(name: &str) -> Result<(), String> {
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

fn check_stdio(stdio: &StdioConfig) -> Check {
    if stdio.command.trim().is_empty() {
        return fail("transport.command", "must not be empty");
    }
    if stdio.command.contains('\0') {
        return fail("transport.command", "must not contain a NUL byte");
    }
    if let Some(i) = stdio.args.iter().position(|a| a.contains('\0')) {
        return fail(
            &format!("transport.args.{i}"),
            "must not contain a NUL byte",
        );
    }
    for (key, value) in &stdio.env {
        if key.is_empty() || key.contains(['=', '\0']) {
            return fail(
                &format!("transport.env.{key}"),
                "variable name must be non-empty, without `=` or NUL",
            );
        }
        if value.contains('\0') {
            return fail(
                &format!("transport.env.{key}"),
                "must not contain a NUL byte",
            );
        }
    }
    if let Some(i) = stdio
        .env_allowlist
        .iter()
        .position(|k| k.is_empty() || k.contains(['=', '\0']))
    {
        return fail(
            &format!("transport.env_allowlist.{i}"),
            "variable name must be non-empty, without `=` or NUL",
        );
    }
    at_most("transport.stdin_close_grace", stdio.stdin_close_grace)?;
    at_most("transport.term_grace", stdio.term_grace)?;
    Ok(())
}

/// How long rmcp may take to close a Streamable HTTP session by itself: a 2 s drain of in-flight
/// responses, then a `DELETE` bounded at 5 s.
pub(crate) const REMOTE_CLOSE_MIN: Duration = Duration::from_secs(7);

/// Room for SIGKILL, the exit and the reap after the graces.
const KILL_SLACK: Duration = Duration::from_secs(1);

/// `close_timeout` must leave room for the stop sequence it bounds; shorter, a slow but normal
/// stop would be taken for a process that cannot be stopped, and the server would fail closed.
fn check_close_timeout(transport: &TransportConfig, close_timeout: Duration) -> Check {
    let (needed, what) = match transport {
        TransportConfig::Stdio(stdio) => (
            stdio.stdin_close_grace + stdio.term_grace + KILL_SLACK,
            "stdin_close_grace + term_grace + 1s: an orderly stop waits that long before SIGKILL, \
             then the kill and the reap need a moment",
        ),
        TransportConfig::Remote(_) => (
            REMOTE_CLOSE_MIN,
            "rmcp's own session close (a 2s drain, then a DELETE of up to 5s)",
        ),
    };
    let too_short = match transport {
        TransportConfig::Stdio(_) => close_timeout <= needed,
        TransportConfig::Remote(_) => close_timeout < needed,
    };
    if too_short {
        return fail(
            "close_timeout",
            format!(
                "must be more than {} ({what}), got {}",
                format_duration(needed),
                format_duration(close_timeout)
            ),
        );
    }
    Ok(())
}

fn check_remote(remote: &RemoteConfig) -> Check {
    let url = &crate::text::redact_url(&remote.url);
    if !matches!(url.scheme(), "http" | "https") {
        return fail(
            "transport.url",
            format!(
                "scheme must be http or https, got `{}` in `{url}`",
                url.scheme()
            ),
        );
    }
    if url.host_str().is_none_or(str::is_empty) {
        return fail("transport.url", format!("`{url}` has no host"));
    }
    for (name, value) in &remote.headers {
        let path = format!("transport.headers.{name}");
        if !is_token(name) {
            return fail(&path, "invalid header name");
        }
        if value
            .chars()
            .any(|c| (c.is_control() && c != '\t') || c == '\u{7f}')
        {
            return fail(
                &path,
                "header value must not contain CR, LF or other control characters",
            );
        }
    }
    if remote.auth != crate::auth::Auth::None
        && remote
            .headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("authorization"))
    {
        return fail(
            "transport.headers.Authorization",
            format!(
                "auth `{}` sets the Authorization header itself; remove one of the two",
                remote.auth.kind()
            ),
        );
    }
    positive("transport.endpoint_timeout", remote.endpoint_timeout)?;
    at_most("transport.sse_retry_min", remote.sse_retry_min)?;
    at_most("transport.sse_retry_max", remote.sse_retry_max)?;
    if remote.sse_retry_min > remote.sse_retry_max {
        return fail(
            "transport.sse_retry_max",
            format!(
                "must be at least sse_retry_min ({}), got {}",
                format_duration(remote.sse_retry_min),
                format_duration(remote.sse_retry_max)
            ),
        );
    }
    Ok(())
}

/// RFC 7230 `token`: one or more of `!#$%&'*+-.^_`|~`, digits and letters.
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
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
    Ok(())
}

/// Greater than zero and at most [`MAX_DURATION`].
fn positive(path: &str, d: Duration) -> Check {
    if d.is_zero() {
        return fail(path, "must be greater than zero, got 0s");
    }
    at_most(path, d)
}

/// At most [`MAX_DURATION`]: beyond it a duration is a mistake (a unit mixed up, `u64::MAX`
/// meant as "forever"), and clock arithmetic near the limit of `Instant` would overflow.
fn at_most(path: &str, d: Duration) -> Check {
    if d > MAX_DURATION {
        return fail(
            path,
            format!(
                "must be at most {}, got {}",
                format_duration(MAX_DURATION),
                format_duration(d)
            ),
        );
    }
    Ok(())
}

fn fail(path: &str, message: impl Into<String>) -> Check {
    Err(ConfigError::new(path, message))
}
