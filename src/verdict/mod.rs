//! The fault model: what each observation means.
//!
//! Detection is half of resilience; the other half is not mistaking a live server for a dead one.
//! Every observation a transport, a call or a probe makes becomes exactly one [`Verdict`], and only
//! [`Verdict::Death`] ends a generation. The table (DESIGN.md, "Verdicts"):
//!
//! | observation | verdict |
//! |---|---|
//! | child exit, stdout EOF, SSE stream end or error | death (`process_exited`, `stream_closed`) |
//! | connect refused, connection reset, DNS or TLS failure on a request | death (`transport_error`) |
//! | 404 on a live session (410 on legacy SSE), 400 "no valid session" where configured | death (`session_expired`) |
//! | `failures` consecutive probes unanswered while no call is in flight, or a pre-call probe unanswered | death (`heartbeat_timeout`) |
//! | a call in flight inside its deadline and the server silent | busy: probe misses do not count |
//! | HTTP 429, or 503 with `Retry-After` | overload: the request never ran |
//! | HTTP 5xx without `Retry-After`, or a malformed HTTP answer | suspect: one miss |
//! | any JSON-RPC response, error or not | alive |
//! | HTTP 401 | unauthorized |
//! | no token to send: the authorization server did not answer a refresh (network, 5xx, timeout) | auth unavailable: the request never left; not a miss |
//! | 403; 404/405 at connect on every transport tried; `-32022` with no common version; a JSON-RPC error answering `initialize`; a redirect to another origin | rejected (permanent) |
//! | a tool list over `limits` (bytes, items, pages); a stdio line or legacy SSE event over its bound; a tools/list body over `max_message_bytes` at connect | death, cause `limit_exceeded` (permanent, like a refusal; see [`limit`]) |
//! | a response to an id never sent, or a second response to one | alive: ignored, counted, said once per generation |
//! | a stdio line that is not JSON | alive: ignored (the next line is framed as usual), counted, said once per generation |
//!
//! Each transport maps its own error types here by type ([`crate::transport::judge`]); this module
//! holds the rules that do not depend on a transport: HTTP statuses, `Retry-After`, and (in
//! [`probe`]) how misses are counted.
//!
//! # Invariants
//!
//! 1. A verdict is computed from the type and status of an observation, never from message text.
//! 2. Only `Death` ends a generation. `Unauthorized` and `Rejected` at connect end the *outage*
//!    with state `failed` (retried only at `max_delay`); during a session they fail the one request
//!    (a 401 also fails the server: every further request would be refused the same way).
//! 3. `Overload` means the server did not run the request, so resending it is safe.

pub(crate) mod limit;
pub(crate) mod probe;

use std::time::{Duration, SystemTime};

use crate::state::{Cause, Death};

/// What one observation means.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub enum Verdict {
    /// The generation is dead: end it and build the next one.
    Death(Death),
    /// Silence while a call is being worked on inside its deadline: not a miss.
    Busy,
    /// The server (or a gateway in front of it) refused this one request for load; it did not run.
    Overload {
        /// The HTTP status (429 or 503).
        status: u16,
        /// How long the server asked us to wait, if it said.
        retry_after: Option<Duration>,
    },
    /// One bad answer (a 5xx without `Retry-After`, a malformed response): counts as one miss.
    Suspect {
        /// The HTTP status, if there was one.
        status: Option<u16>,
        /// What was observed.
        detail: String,
    },
    /// The server answered; whatever the answer says belongs to the request.
    Alive,
    /// HTTP 401: the credentials are missing or no longer accepted.
    Unauthorized {
        /// What was observed.
        detail: String,
    },
    /// No token could be had because the authorization server did not answer (it is down or
    /// slow, not refusing): the request was never sent. Says nothing about the MCP server, so it
    /// is not a miss; the grant stands, so it is not `Unauthorized`.
    AuthUnavailable {
        /// What was observed.
        detail: String,
    },
    /// A permanent refusal: retrying the same thing will not help.
    Rejected {
        /// The HTTP status, if there was one.
        status: Option<u16>,
        /// What was observed.
        detail: String,
    },
}

/// When an HTTP answer was observed: while opening a session, or on a live session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub enum Phase {
    /// The opening request of a session (`initialize`, the legacy SSE `GET`).
    Connect,
    /// A request on an established session.
    Session,
}

impl Verdict {
    /// The verdict of an HTTP error status answering one request.
    ///
    /// `retry_after` is the raw header value. 404 and 410 are not judged here: whether they mean
    /// an expired session or a wrong URL depends on the transport and the phase.
    #[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
    pub fn of_status(status: u16, retry_after: Option<&str>, detail: String) -> Verdict {
        let wait = retry_after.and_then(|v| parse_retry_after(v, SystemTime::now()));
        match status {
            401 => Verdict::Unauthorized { detail },
            403 => Verdict::Rejected {
                status: Some(status),
                detail,
            },
            // A redirect that reached us was not followed: with the default client, it pointed at
            // another origin (see `same_origin_redirects`).
            300..=399 => Verdict::Rejected {
                status: Some(status),
                detail: format!("{detail}; a redirect that was not followed"),
            },
            429 => Verdict::Overload {
                status,
                retry_after: wait,
            },
            503 if wait.is_some() => Verdict::Overload {
                status,
                retry_after: wait,
            },
            _ => Verdict::Suspect {
                status: Some(status),
                detail,
            },
        }
    }

    /// A transport failure that proves the connection gone.
    pub(crate) fn transport(detail: impl Into<String>) -> Verdict {
        Verdict::Death(Death::new(Cause::TransportError, detail))
    }

    /// The connect-phase cause for a permanent verdict, if this is one.
    pub(crate) fn permanent_cause(&self) -> Option<Cause> {
        match self {
            Verdict::Unauthorized { .. } => Some(Cause::Unauthorized),
            Verdict::Rejected { .. } => Some(Cause::Rejected),
            _ => None,
        }
    }
}

/// Most a `Retry-After` is believed: a server asking for more is treated as asking for this.
const RETRY_AFTER_MAX: Duration = Duration::from_secs(3600);

/// Parses `Retry-After`: delay-seconds or an HTTP-date (RFC 9110 §10.2.3). A date in the past
/// means "now" (zero). Anything else is `None`.
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    let wait = if let Ok(seconds) = value.parse::<u64>() {
        Duration::from_secs(seconds)
    } else {
        let at = httpdate::parse_http_date(value).ok()?;
        at.duration_since(now).unwrap_or(Duration::ZERO)
    };
    Some(wait.min(RETRY_AFTER_MAX))
}

/// A detail safe to show a user: an HTML error page (a proxy's 404, say) is summarised instead of
/// printed, anything longer than a line is cut, and URLs lose their credentials
/// ([`crate::text::redact`]).
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub fn plain(detail: &str) -> String {
    const MAX: usize = 200;
    let redacted = crate::text::redact(detail);
    let detail = &*redacted;
    let lower = detail.to_ascii_lowercase();
    let cut = ["<!doctype", "<html"]
        .iter()
        .filter_map(|tag| lower.find(tag))
        .min();
    let mut text = match cut {
        Some(at) => format!("{}<html page>", &detail[..at]),
        None => detail.to_owned(),
    };
    if let Some(newline) = text.find('\n') {
        text.truncate(newline);
    }
    if text.len() > MAX {
        let mut end = MAX;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests;
