//! The binary's arguments: every flag in both spellings (`--flag value`, `--flag=value`) and
//! its default; what is refused is in [`rejects`].

mod rejects;

use std::time::Duration;

use super::args::{Args, Mode};
use crate::hostile::flood::FloodPlan;
use crate::hostile::sse::{HostileSseOptions, SseHostility, Trigger};
use crate::hostile::{Hostile, replies::ReplyKind};
use crate::{DiscoverRefusal, OAuthOptions, StatusFault};

pub(super) fn parse(args: &[&str]) -> Result<Args, clap::Error> {
    Args::parse_from_args(args.iter().map(|s| s.to_string()))
}

pub(super) fn valid(args: &[&str]) -> Args {
    parse(args).unwrap_or_else(|error| panic!("{args:?}: {error}"))
}

#[test]
fn no_flag_gives_the_old_defaults() {
    let args = valid(&[]);
    assert_eq!(
        (args.transport, args.port, args.extra_tools),
        (Mode::Stdio, 0, 0)
    );
    assert_eq!((args.boot_id, args.lock_file), (None, None));
    assert!(!(args.ignore_stdin_eof || args.ignore_sigterm || args.exit_after_list));
    assert!(!(args.modern_only || args.remote.stateless));
    assert_eq!(args.remote.sse_retry(), Duration::from_millis(100));
    assert_eq!(args.remote.status_fault(), None);
    assert_eq!(args.remote.redirect, None);
    assert_eq!(args.oauth.options(), None);
    assert_eq!(args.hostile.discover_refusal, None);
    assert_eq!(
        (args.hostile.replacing(), args.hostile.mods()),
        (None, Hostile::default())
    );
    assert_eq!(args.hostile.flood, FloodPlan::default());
    let pages = args.hostile.pages.options(ReplyKind::HugePages, 0);
    assert_eq!((pages.page_bytes, pages.pages), (4 * 1024 * 1024, 100));
}

#[test]
fn parses_every_flag_in_both_spellings() {
    let args = valid(&[
        "--transport=http",
        "--port",
        "8080",
        "--boot-id",
        "b1",
        "--lock-file=/tmp/x",
        "--extra-tools",
        "3",
        "--sse-retry-ms",
        "5",
        "--ignore-stdin-eof",
    ]);
    assert_eq!(
        (args.transport, args.port, args.extra_tools),
        (Mode::Http, 8080, 3)
    );
    assert_eq!(args.boot_id.as_deref(), Some("b1"));
    assert_eq!(args.lock_file, Some("/tmp/x".into()));
    assert_eq!(args.remote.sse_retry(), Duration::from_millis(5));
    assert!(args.ignore_stdin_eof);
    let stdio = valid(&["--exit-after-list", "--ignore-sigterm", "--modern-only"]);
    assert!(stdio.exit_after_list && stdio.ignore_sigterm && stdio.modern_only);
    let hostile = valid(&[
        "--hostile",
        "huge-pages",
        "--page-bytes=1024",
        "--pages",
        "3",
    ]);
    assert_eq!(hostile.hostile.replacing(), Some("huge-pages"));
    let pages = hostile.hostile.pages.options(ReplyKind::HugePages, 7);
    assert_eq!((pages.page_bytes, pages.pages, pages.port), (1024, 3, 7));
    let stateless = valid(&["--stateless", "--transport", "http"]);
    assert!(stateless.remote.stateless);
    let refusal = valid(&["--discover-refusal", "error:-32601"]);
    let shape = Some(DiscoverRefusal::Error(-32601));
    assert_eq!(refusal.hostile.discover_refusal, shape);
    assert!(!refusal.hostile.discover_late);
    let late = valid(&["--discover-refusal", "empty-result", "--discover-late"]);
    assert!(late.hostile.discover_late);
}

#[test]
fn parses_the_remote_fault_flags() {
    let args = valid(&[
        "--fail-every=3",
        "--retry-after",
        "2",
        "--fail-status",
        "503",
        "--fail-methods",
        "tools/call,ping",
        "--fail-count",
        "4",
        "--www-authenticate",
        "Bearer realm=\"m\"",
        "--modern-only",
        "--redirect",
        "http://127.0.0.1:1/mcp",
        "--transport",
        "http",
    ]);
    let fault = StatusFault {
        every: 3,
        count: Some(4),
        retry_after: Some("2".into()),
        www_authenticate: Some("Bearer realm=\"m\"".into()),
        methods: vec!["tools/call".into(), "ping".into()],
        ..StatusFault::new(503)
    };
    assert_eq!(args.remote.status_fault(), Some(fault));
    assert!(args.modern_only);
    assert_eq!(
        args.remote.redirect.as_deref(),
        Some("http://127.0.0.1:1/mcp")
    );
    let plain = valid(&["--fail-status", "429", "--transport", "sse"]);
    assert_eq!(plain.remote.status_fault(), Some(StatusFault::new(429)));
}

#[test]
fn parses_the_oauth_flags() {
    let args = valid(&[
        "--oauth-client",
        "app",
        "--oauth",
        "--oauth-client=svc:s3cret",
        "--oauth-access-ttl",
        "5",
        "--oauth-step-up",
        "add:mcp:admin",
        "--oauth-refresh-delay-ms=250",
        "--transport",
        "sse",
    ]);
    let expected = OAuthOptions {
        access_ttl: Duration::from_secs(5),
        clients: vec![("app".into(), None), ("svc".into(), Some("s3cret".into()))],
        step_up: Some(("add".into(), "mcp:admin".into())),
        refresh_delay: Duration::from_millis(250),
        ..OAuthOptions::default()
    };
    assert_eq!(args.oauth.options(), Some(expected));
    let plain = valid(&["--oauth", "--transport", "http"]);
    assert_eq!(plain.oauth.options(), Some(OAuthOptions::default()));
}

#[test]
fn parses_a_hostile_flood() {
    let args = valid(&[
        "--hostile",
        "flood",
        "--flood-count=7",
        "--flood-bytes",
        "10",
        "--flood-ms",
        "250",
    ]);
    let mods = Hostile {
        flood: true,
        ..Hostile::default()
    };
    assert_eq!(
        (args.hostile.mods(), args.hostile.replacing()),
        (mods, None)
    );
    let plan = FloodPlan {
        count: 7,
        bytes: 10,
        limit: Duration::from_millis(250),
    };
    assert_eq!(args.hostile.flood, plan);
    // A knob at its default value is no knob (as before clap).
    valid(&["--flood-count", "100000"]);
}

#[test]
fn hostile_kinds_are_parsed_and_checked_against_the_mode() {
    let args = valid(&["--hostile", "escapes", "--hostile=escapes-exit"]);
    assert!(args.hostile.mods().escapes && args.hostile.mods().escapes_exit);
    let remote = valid(&["--hostile", "escapes", "--transport", "http"]);
    assert!(remote.hostile.mods().escapes);
    let flood = valid(&["--hostile", "flood", "--flood-count", "5"]);
    assert!(flood.hostile.mods().flood && flood.hostile.flood.count == 5);
    // `malformed-json` is a reply kind and an SSE kind.
    for transport in ["stdio", "sse", "http"] {
        valid(&["--hostile", "malformed-json", "--transport", transport]);
    }
    let last = valid(&["--hostile", "escapes", "--hostile", "stray-response"]);
    assert_eq!(last.hostile.replacing(), Some("stray-response"));
    assert!(last.hostile.mods().escapes);
}

#[test]
fn the_sse_kinds_take_their_options() {
    let args = valid(&[
        "--transport",
        "sse",
        "--hostile",
        "endless-line",
        "--hostile-bytes=9",
        "--hostile-trigger",
        "call",
    ]);
    let opts = args.hostile.sse.options(SseHostility::EndlessLine, 3);
    let expected = HostileSseOptions {
        port: 3,
        bytes: 9,
        pace: Duration::from_millis(1),
        trigger: Trigger::Manual,
        ..HostileSseOptions::new(SseHostility::EndlessLine)
    };
    assert_eq!(format!("{opts:?}"), format!("{expected:?}"));
    let paced = valid(&[
        "--transport=sse",
        "--hostile=invalid-utf8",
        "--hostile-pace-ms=4",
    ]);
    let opts = paced.hostile.sse.options(SseHostility::InvalidUtf8, 0);
    assert_eq!(
        (opts.pace, opts.trigger),
        (Duration::from_millis(4), Trigger::AfterList)
    );
}
