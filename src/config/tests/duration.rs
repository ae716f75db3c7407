use std::time::Duration;

use crate::config::duration::{format_duration, parse_duration};

#[test]
fn parses_every_unit_and_fractions() {
    let cases = [
        ("250ms", Duration::from_millis(250)),
        ("5s", Duration::from_secs(5)),
        ("1.5s", Duration::from_millis(1500)),
        (".5s", Duration::from_millis(500)),
        ("1m", Duration::from_secs(60)),
        ("2h", Duration::from_secs(7200)),
        ("1d", Duration::from_secs(86_400)),
        ("0s", Duration::ZERO),
        ("1m30s", Duration::from_secs(90)),
        ("15us", Duration::from_micros(15)),
        ("15µs", Duration::from_micros(15)),
        ("7ns", Duration::from_nanos(7)),
        (" 3s ", Duration::from_secs(3)),
    ];
    for (input, expected) in cases {
        assert_eq!(parse_duration(input), Ok(expected), "{input}");
    }
}

#[test]
fn rejects_empty_negative_bare_unknown_and_non_finite() {
    let cases = [
        ("", "empty"),
        ("   ", "empty"),
        ("-1s", "negative"),
        ("5", "missing unit"),
        ("0", "missing unit"),
        ("5 s", "unknown unit"),
        ("5sec", "unknown unit"),
        ("5x", "unknown unit"),
        ("inf", "expected a number"),
        ("NaN", "expected a number"),
        ("1.2.3s", "invalid number"),
        ("s", "expected a number"),
        ("99999999999999999999999h", "too large"),
    ];
    for (input, needle) in cases {
        let err = parse_duration(input).expect_err(input);
        assert!(err.to_string().contains(needle), "{input}: {err}");
    }
}

#[test]
fn formats_short_and_exact() {
    let cases = [
        (Duration::ZERO, "0s"),
        (Duration::from_millis(500), "500ms"),
        (Duration::from_secs(30), "30s"),
        (Duration::from_secs(90), "1m30s"),
        (Duration::from_secs(7200), "2h"),
        (Duration::from_millis(1250), "1s250ms"),
        (Duration::from_nanos(1500), "1us500ns"),
    ];
    for (duration, expected) in cases {
        assert_eq!(format_duration(duration), expected);
    }
}

#[test]
fn formatted_durations_parse_back() {
    for nanos in [1, 999, 1_000_001, 61_000_000_123, 3_723_004_005_006] {
        let d = Duration::from_nanos(nanos);
        assert_eq!(parse_duration(&format_duration(d)), Ok(d));
    }
}
