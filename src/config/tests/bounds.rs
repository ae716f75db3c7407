use super::{assert_error, ms, ok, rejected};
use crate::config::{Heartbeat, Reconnect, RemoteConfig, ServerConfig, TransportConfig};

#[test]
fn stdio_fields_are_checked() {
    assert_error(
        &rejected(ServerConfig::stdio("fs", " ")),
        "transport.command",
        "empty",
    );
    assert_error(
        &rejected(ok().env("A=B", "x")),
        "transport.env.A=B",
        "variable name",
    );
}

#[test]
fn headers_are_checked_by_rfc_7230_rules() {
    let remote = || ServerConfig::http("w", "http://h/mcp");
    assert_error(
        &rejected(remote().header("Bad Name", "x")),
        "transport.headers.Bad Name",
        "name",
    );
    assert_error(
        &rejected(remote().header("", "x")),
        "transport.headers.",
        "name",
    );
    let err = rejected(remote().header("X-Key", "a\r\nInjected: 1"));
    assert_error(&err, "transport.headers.X-Key", "CR, LF");
    assert!(
        remote()
            .header("X-Key", "tab\tand ünicode")
            .resolve()
            .is_ok()
    );
}

#[test]
fn remote_bounds_are_checked() {
    let remote = |f: fn(&mut RemoteConfig)| {
        let mut config = ServerConfig::http("w", "http://h/mcp");
        if let TransportConfig::Remote(r) = &mut config.transport {
            f(r);
        }
        rejected(config)
    };
    assert_error(
        &remote(|r| r.endpoint_timeout = ms(0)),
        "transport.endpoint_timeout",
        "zero",
    );
    let err = remote(|r| r.sse_retry_min = ms(31_000));
    assert_error(
        &err,
        "transport.sse_retry_max",
        "at least sse_retry_min (31s), got 30s",
    );
}

#[test]
fn reconnect_bounds_are_checked() {
    let with = |f: fn(&mut Reconnect)| {
        let mut r = Reconnect::default();
        f(&mut r);
        rejected(ok().reconnect(r))
    };
    assert_error(
        &with(|r| r.initial_delay = ms(0)),
        "reconnect.initial_delay",
        "zero",
    );
    let err = with(|r| r.max_delay = ms(100));
    assert_eq!(
        err.to_string(),
        "reconnect.max_delay: must be at least initial_delay (500ms), got 100ms"
    );
    assert_error(
        &with(|r| r.multiplier = 0.5),
        "reconnect.multiplier",
        "at least 1.0",
    );
    assert_error(
        &with(|r| r.multiplier = f64::NAN),
        "reconnect.multiplier",
        "finite",
    );
    assert_error(
        &with(|r| r.multiplier = f64::INFINITY),
        "reconnect.multiplier",
        "finite",
    );
    assert_error(&with(|r| r.jitter = 1.0), "reconnect.jitter", "less than 1");
    assert_error(&with(|r| r.jitter = -0.1), "reconnect.jitter", "at least 0");
    assert_error(
        &with(|r| r.max_attempts = 0),
        "reconnect.max_attempts",
        "at least 1",
    );
    assert_error(
        &with(|r| r.stability_window = Some(ms(0))),
        "reconnect.stability_window",
        "zero",
    );
    assert_error(
        &with(|r| r.origin_attempts_per_second = 0),
        "reconnect.origin_attempts_per_second",
        "at least 1",
    );
}

#[test]
fn heartbeat_bounds_are_checked() {
    let with = |f: fn(&mut Heartbeat)| {
        let mut h = Heartbeat::default();
        f(&mut h);
        rejected(ok().heartbeat(h))
    };
    assert_error(&with(|h| h.interval = ms(0)), "heartbeat.interval", "zero");
    assert_error(&with(|h| h.timeout = ms(0)), "heartbeat.timeout", "zero");
    let err = with(|h| h.timeout = h.interval);
    assert_error(
        &err,
        "heartbeat.timeout",
        "less than interval (30s), got 30s",
    );
    assert_error(
        &with(|h| h.failures = 0),
        "heartbeat.failures",
        "at least 1",
    );
}

#[test]
fn disabled_policies_are_not_checked() {
    let reconnect = Reconnect {
        max_attempts: 0,
        initial_delay: ms(0),
        ..Reconnect::disabled()
    };
    let heartbeat = Heartbeat {
        interval: ms(0),
        ..Heartbeat::disabled()
    };
    assert!(
        ok().reconnect(reconnect)
            .heartbeat(heartbeat)
            .resolve()
            .is_ok()
    );
    assert!(!Reconnect::disabled().enabled && !Heartbeat::disabled().enabled);
}

#[test]
fn zero_timeouts_and_pages_are_rejected() {
    assert_error(&rejected(ok().call_timeout(ms(0))), "call_timeout", "zero");
    assert_error(
        &rejected(ok().connect_timeout(ms(0))),
        "connect_timeout",
        "zero",
    );
    assert_error(
        &rejected(ok().close_timeout(ms(0))),
        "close_timeout",
        "zero",
    );
    assert_error(
        &rejected(ok().limits(crate::config::Limits::default().max_list_pages(0))),
        "limits.max_list_pages",
        "at least 1",
    );
}

#[test]
fn close_timeout_must_cover_the_stop_sequence_it_bounds() {
    // Default graces: 3 s stdin close + 2 s after SIGTERM, plus 1 s for the kill and the reap.
    assert_error(
        &rejected(ok().close_timeout(ms(6_000))),
        "close_timeout",
        "stdin_close_grace + term_grace",
    );
    assert!(ok().close_timeout(ms(6_001)).resolve().is_ok());
    let mut short = ok().close_timeout(ms(1_500));
    if let TransportConfig::Stdio(stdio) = &mut short.transport {
        stdio.stdin_close_grace = ms(100);
        stdio.term_grace = ms(100);
    }
    assert!(short.resolve().is_ok(), "short graces allow a short bound");
    let remote = || ServerConfig::http("w", "http://h/mcp");
    assert_error(
        &rejected(remote().close_timeout(ms(6_999))),
        "close_timeout",
        "DELETE",
    );
    assert!(remote().close_timeout(ms(7_000)).resolve().is_ok());
}

#[test]
fn a_session_check_of_zero_intervals_is_rejected() {
    let heartbeat = Heartbeat::default().session_check_every(0);
    assert_error(
        &rejected(ok().heartbeat(heartbeat)),
        "heartbeat.session_check_every",
        "at least 1",
    );
    assert_eq!(
        Heartbeat::default().get_scope(),
        crate::config::HeartbeatScope::Origin
    );
}
