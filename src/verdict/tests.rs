use std::time::{Duration, SystemTime};

use super::*;

fn detail() -> String {
    "observed".to_owned()
}

#[test]
fn http_429_is_overload_with_or_without_retry_after() {
    assert_eq!(
        Verdict::of_status(429, Some("3"), detail()),
        Verdict::Overload {
            status: 429,
            retry_after: Some(Duration::from_secs(3))
        }
    );
    assert_eq!(
        Verdict::of_status(429, None, detail()),
        Verdict::Overload {
            status: 429,
            retry_after: None
        }
    );
}

#[test]
fn http_503_is_overload_only_with_retry_after() {
    assert!(matches!(
        Verdict::of_status(503, Some("1"), detail()),
        Verdict::Overload { status: 503, .. }
    ));
    assert!(matches!(
        Verdict::of_status(503, None, detail()),
        Verdict::Suspect {
            status: Some(503),
            ..
        }
    ));
}

#[test]
fn other_5xx_and_unexpected_statuses_are_suspect() {
    for status in [500, 502, 504, 400, 418] {
        assert!(
            matches!(Verdict::of_status(status, Some("5"), detail()), Verdict::Suspect { status: Some(s), .. } if s == status),
            "HTTP {status}"
        );
    }
}

#[test]
fn http_401_is_unauthorized_and_403_rejected() {
    assert!(matches!(
        Verdict::of_status(401, None, detail()),
        Verdict::Unauthorized { .. }
    ));
    assert!(matches!(
        Verdict::of_status(403, None, detail()),
        Verdict::Rejected { .. }
    ));
    assert_eq!(
        Verdict::of_status(401, None, detail()).permanent_cause(),
        Some(Cause::Unauthorized)
    );
    assert_eq!(
        Verdict::of_status(403, None, detail()).permanent_cause(),
        Some(Cause::Rejected)
    );
    assert_eq!(Verdict::Alive.permanent_cause(), None);
}

#[test]
fn a_redirect_left_unfollowed_is_a_rejection() {
    for status in [301, 302, 307, 308] {
        assert!(matches!(
            Verdict::of_status(status, None, detail()),
            Verdict::Rejected { .. }
        ));
    }
}

#[test]
fn retry_after_reads_seconds_and_http_dates() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    assert_eq!(parse_retry_after(" 7 ", now), Some(Duration::from_secs(7)));
    let later = httpdate::fmt_http_date(now + Duration::from_secs(90));
    assert_eq!(
        parse_retry_after(&later, now),
        Some(Duration::from_secs(90))
    );
    let past = httpdate::fmt_http_date(now - Duration::from_secs(90));
    assert_eq!(parse_retry_after(&past, now), Some(Duration::ZERO));
    assert_eq!(parse_retry_after("soon", now), None);
    assert_eq!(parse_retry_after("-1", now), None);
    assert_eq!(
        parse_retry_after("999999999", now),
        Some(RETRY_AFTER_MAX),
        "an absurd wait is capped"
    );
}

#[test]
fn html_pages_never_reach_a_user_message() {
    let page = "HTTP 404 Not Found: <!DOCTYPE html><html><body>nope</body></html>";
    assert_eq!(plain(page), "HTTP 404 Not Found: <html page>");
    assert_eq!(plain("two\nlines"), "two");
    let long = "x".repeat(500);
    assert!(plain(&long).chars().count() <= 201);
}

mod probe_policy {
    use tokio::time::Instant;

    use super::super::probe::{Load, Misses, Stretch};

    #[tokio::test(start_paused = true)]
    async fn concurrent_misses_count_once() {
        let misses = Misses::default();
        let sent = Instant::now();
        tokio::time::advance(std::time::Duration::from_millis(200)).await;
        // Three probes sent at the same moment all time out together: one observation.
        assert_eq!(misses.record(sent), Some(1));
        assert_eq!(misses.record(sent), None);
        assert_eq!(misses.record(sent), None);
        // A probe sent after that miss was counted is the next consecutive one.
        let next = Instant::now();
        tokio::time::advance(std::time::Duration::from_millis(200)).await;
        assert_eq!(misses.record(next), Some(2));
        misses.clear();
        assert_eq!(misses.count(), 0);
    }

    #[test]
    fn silence_during_a_call_inside_its_deadline_is_busy() {
        let busy = Load {
            calls_in_flight: 1,
            ..Load::default()
        };
        assert!(busy.is_busy());
        assert!(!Load::default().is_busy(), "no call: a miss");
        assert!(
            !Load {
                overdue: true,
                ..busy
            }
            .is_busy(),
            "a call past its deadline: a miss"
        );
        assert!(
            !Load {
                write_stalled: true,
                ..busy
            }
            .is_busy(),
            "a wedged writer: a miss"
        );
    }

    #[test]
    fn overload_stretches_the_interval_up_to_four_times() {
        let base = std::time::Duration::from_secs(10);
        let mut stretch = Stretch::default();
        assert_eq!(stretch.apply(base), base);
        stretch.overloaded();
        assert_eq!(stretch.apply(base), base * 2);
        stretch.overloaded();
        stretch.overloaded();
        assert_eq!(stretch.apply(base), base * 4);
        stretch.clean();
        assert_eq!(stretch.apply(base), base);
    }
}
