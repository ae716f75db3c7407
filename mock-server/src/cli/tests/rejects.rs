//! What the binary refuses (exit code 2): every combination the hand-written parser before clap
//! refused, and more; and what it takes again (a flag given twice).

use clap::error::ErrorKind;

use super::{parse, valid};
use crate::cli::args::Mode;

#[test]
fn a_flag_given_again_overrides_it() {
    let twice = [
        "--port",
        "1",
        "--port=2",
        "--stateless",
        "--stateless",
        "--transport=http",
    ];
    assert_eq!(valid(&twice).port, 2);
    let args = valid(&["--transport", "sse", "--transport", "http", "--stateless"]);
    assert_eq!(args.transport, Mode::Http);
}

#[test]
fn help_and_version_exit_0() {
    for flag in ["--help", "--version"] {
        let error = parse(&[flag]).expect_err("not a run");
        assert_eq!(error.exit_code(), 0, "{flag}");
    }
    let error = parse(&["--nope"]).expect_err("bad");
    assert_eq!(
        (error.exit_code(), error.kind()),
        (2, ErrorKind::UnknownArgument)
    );
}

#[test]
fn rejects_bad_arguments() {
    for bad in [
        &["--transport", "ws"][..],
        &["--port", "-1"],
        &["--port"],
        &["--boot-id", ""],
        &["stray"],
        &["--nope", "1"],
        &["--ignore-stdin-eof=1"],
        &["--modern-only=yes"],
        &["--stateless"],
        &["--stateless", "--transport", "sse"],
        &["--stateless=1", "--transport", "http"],
        &["--fail-status", "x", "--transport", "http"],
        &["--fail-every", "2", "--transport", "http"],
        &["--retry-after", "2", "--transport", "sse"],
        &["--fail-status", "503"],
        &["--redirect", "http://127.0.0.1:1/"],
        &["--redirect", "", "--transport", "http"],
        &["--hostile", ""],
        &["--hostile", "huge-pages", "--pages", "many"],
        &["--exit-after-list", "--transport", "http"],
        &["--oauth"],
        &["--oauth=1", "--transport", "http"],
        &["--oauth-client", "app", "--transport", "http"],
        &["--oauth", "--oauth-client", "", "--transport", "http"],
        &["--oauth", "--oauth-client", "app:", "--transport", "http"],
        &["--oauth", "--oauth-step-up", "add", "--transport", "http"],
        &[
            "--oauth",
            "--oauth-access-ttl",
            "soon",
            "--transport",
            "http",
        ],
        &["--oauth", "--oauth-nope", "1", "--transport", "http"],
        &["--discover-refusal", "nope"],
        &["--discover-refusal", "status:404"],
        &["--discover-refusal", "empty:202", "--transport", "sse"],
        &["--discover-late"],
        &[
            "--discover-refusal",
            "empty-result",
            "--discover-late",
            "--transport",
            "http",
        ],
        &["--hostile", "flood", "--transport", "http"],
        &["--hostile", "flood", "--flood-count", "-1"],
        // From the hostile kinds' own checks.
        &["--hostile", "nope"],
        &["--hostile"],
        &["--hostile", "escapes-exit", "--transport", "sse"],
        &["--flood-count", "5"],
        &["--hostile-bytes", "5"],
        &["--hostile", "invalid-utf8"],
        &["--hostile", "huge-pages", "--transport", "sse"],
        &[
            "--transport",
            "sse",
            "--hostile",
            "endless-line",
            "--hostile-trigger",
            "x",
        ],
    ] {
        match parse(bad) {
            Ok(args) => panic!("{bad:?} was accepted: {args:?}"),
            Err(error) => assert_eq!(error.exit_code(), 2, "{bad:?}: {error}"),
        }
    }
}
