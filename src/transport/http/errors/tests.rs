//! What the errors of the Streamable HTTP transport say.

use super::*;

#[test]
fn the_status_is_read_from_every_error_that_carries_one() {
    let text = |t: &'static str| StreamableHttpError::UnexpectedServerResponse(t.into());
    assert_eq!(status_of(&text("HTTP 405 Method Not Allowed: ")), Some(405));
    assert_eq!(
        status_of(&text("HTTP 400 Bad Request: no valid session")),
        Some(400)
    );
    assert_eq!(status_of(&text("expect initialized, accepted")), None);
    assert_eq!(status_of(&StreamableHttpError::SessionExpired), Some(404));
}

#[test]
fn an_unanswered_token_refresh_is_auth_unavailable_and_never_ran() {
    let error = StreamableHttpError::Auth(AuthError::TokenRefreshFailed(
        "the authorization server did not answer a refresh: 503".to_owned(),
    ));
    for phase in [Phase::Connect, Phase::Session] {
        assert_eq!(
            verdict(&error, phase, "WorkerTransport: …".to_owned()),
            Verdict::AuthUnavailable {
                detail: "the authorization server did not answer a refresh: 503".to_owned()
            }
        );
    }
    assert!(never_ran(&error));
    assert_eq!(
        verdict(&error, Phase::Connect, String::new()).permanent_cause(),
        None
    );
    assert_eq!(
        describe(&error),
        "the authorization server did not answer a refresh: 503"
    );
}

#[test]
fn rate_limits_and_server_errors_are_judged_by_status() {
    let status = |status, retry_after: Option<&str>| {
        StreamableHttpError::HttpStatus(
            rmcp::transport::streamable_http_client::HttpStatusError::new(
                status,
                retry_after.map(str::to_owned),
            ),
        )
    };
    assert!(matches!(
        verdict(&status(429, Some("2")), Phase::Session, String::new()),
        Verdict::Overload {
            status: 429,
            retry_after: Some(_)
        }
    ));
    assert!(matches!(
        verdict(&status(500, None), Phase::Session, String::new()),
        Verdict::Suspect {
            status: Some(500),
            ..
        }
    ));
    assert!(matches!(
        verdict(&StreamableHttpError::SessionExpired, Phase::Session, String::new()),
        Verdict::Death(d) if d.cause == Cause::SessionExpired
    ));
    let text = |t: &'static str| StreamableHttpError::UnexpectedServerResponse(t.into());
    assert!(matches!(
        verdict(
            &text("HTTP 401 Unauthorized: "),
            Phase::Connect,
            String::new()
        ),
        Verdict::Unauthorized { .. }
    ));
    assert!(matches!(
        verdict(
            &text("HTTP 403 Forbidden: no"),
            Phase::Connect,
            String::new()
        ),
        Verdict::Rejected { .. }
    ));
    assert!(matches!(
        verdict(&StreamableHttpError::TransportChannelClosed, Phase::Session, String::new()),
        Verdict::Death(d) if d.cause == Cause::TransportError
    ));
    assert!(matches!(
        verdict(
            &StreamableHttpError::UnexpectedContentType(None),
            Phase::Session,
            String::new()
        ),
        Verdict::Suspect { status: None, .. }
    ));
}
