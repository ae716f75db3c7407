//! The checks of a server's transport: the child's command and environment, the remote URL,
//! headers and SSE bounds, and a close timeout long enough for the transport's close sequence.

use std::time::Duration;

use super::check::{Check, at_most, fail, positive};
use crate::config::{RemoteConfig, StdioConfig, TransportConfig, format_duration};

pub(super) fn check_stdio(stdio: &StdioConfig) -> Check {
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
pub(in crate::config) const REMOTE_CLOSE_MIN: Duration = Duration::from_secs(7);

/// Room for SIGKILL, the exit and the reap after the graces.
const KILL_SLACK: Duration = Duration::from_secs(1);

/// `close_timeout` must leave room for the stop sequence it bounds; shorter, a slow but normal
/// stop would be taken for a process that cannot be stopped, and the server would fail closed.
pub(super) fn check_close_timeout(transport: &TransportConfig, close_timeout: Duration) -> Check {
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

pub(super) fn check_remote(remote: &RemoteConfig) -> Check {
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
