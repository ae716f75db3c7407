//! What a Streamable HTTP answer reaches once the transport has read it: the status, headers and
//! body become a [`StreamableHttpError`] (or a JSON-RPC message) in the shapes rmcp's client
//! makes, and we read a
//! status back out of it, judge it, describe it for a person, decide whether the request ran,
//! turn a stray error into a session expiry, and parse `Retry-After`. The same bytes are also
//! read as a stored token record (what an authorization server's token response becomes).

use std::{
    borrow::Cow,
    time::{Duration, SystemTime},
};

use mcp_resilient::rmcp::{
    model::{JsonRpcMessage, RequestId, ServerJsonRpcMessage},
    service::ClientInitializeError,
    transport::{
        DynamicTransportError,
        streamable_http_client::{
            AuthRequiredError, HttpStatusError, InsufficientScopeError, StreamableHttpError,
        },
    },
};

use mcp_resilient::{
    auth::StoredAuth,
    // `http::status_of` and the like: the Streamable HTTP transport's functions.
    fuzzing::{
        self as http, Handshake, HttpError, HttpTransport, Phase, Verdict, parse_retry_after, plain,
    },
};

use crate::assert_plain;

/// The most a `Retry-After` is believed (`verdict::RETRY_AFTER_MAX`).
const RETRY_AFTER_MAX: Duration = Duration::from_secs(3600);

/// `data` is an answer in lines: the status, `Retry-After`, `WWW-Authenticate`, `Content-Type`,
/// then the body (invalid UTF-8 is replaced). Every error shape rmcp makes of such an answer
/// goes through our classification in both phases. Never panics; a status read back is a real
/// one; the verdict does not depend on the detail text; `Retry-After` is capped; every detail
/// is plain; a stray JSON-RPC error means expiry exactly when its id is not the request's; a
/// token record's `Debug` shows no access token.
pub fn http_answer(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.splitn(5, '\n');
    let status = lines
        .next()
        .unwrap_or("")
        .trim()
        .parse::<u16>()
        .unwrap_or(0);
    let retry_after = lines.next().unwrap_or("").to_owned();
    let www_authenticate = lines.next().unwrap_or("").to_owned();
    let content_type = lines.next().unwrap_or("").to_owned();
    let body = lines.next().unwrap_or("").to_owned();
    let answer = Answer {
        status,
        retry_after,
        www_authenticate,
        content_type,
        body,
    };
    for shape in 0..Answer::SHAPES {
        if let Some(error) = answer.error(shape) {
            classify(&error);
        }
        if let Some(error) = answer.error(shape) {
            handshake(error);
        }
    }
    retry_after_is_capped(&answer);
    stray_errors(&answer.body);
    token_record(&answer.body);
}

struct Answer {
    status: u16,
    retry_after: String,
    www_authenticate: String,
    content_type: String,
    body: String,
}

impl Answer {
    const SHAPES: usize = 8;

    /// The `shape`th error rmcp's client makes of such an answer, if it makes that one.
    fn error(&self, shape: usize) -> Option<HttpError> {
        use StreamableHttpError as E;
        Some(match shape {
            // rmcp's client keeps a status only for 429 and 5xx (`http_status_error`).
            0 if self.status == 429 || (500..600).contains(&self.status) => E::HttpStatus(
                HttpStatusError::new(self.status, Some(self.retry_after.clone())),
            ),
            // rmcp's words for a non-JSON error answer: `HTTP 404 Not Found: <body>`.
            1 => {
                let status = reqwest::StatusCode::from_u16(self.status).ok()?;
                E::UnexpectedServerResponse(Cow::Owned(format!("HTTP {status}: {}", self.body)))
            }
            2 => E::UnexpectedServerResponse(Cow::Owned(self.body.clone())),
            3 => E::AuthRequired(AuthRequiredError::new(self.www_authenticate.clone())),
            4 => E::InsufficientScope(InsufficientScopeError::new(
                self.www_authenticate.clone(),
                Some(self.body.clone()),
            )),
            5 => E::UnexpectedContentType(Some(self.content_type.clone())),
            6 => E::Deserialize(serde_json::from_str::<ServerJsonRpcMessage>(&self.body).err()?),
            7 => E::ReinitializationFailed(mcp_resilient::rmcp::model::ErrorData::new(
                mcp_resilient::rmcp::model::ErrorCode(i32::from(self.status)),
                self.body.clone(),
                None,
            )),
            _ => return None,
        })
    }
}

fn classify(error: &HttpError) {
    let status = http::status_of(error);
    assert!(
        status.is_none_or(|s| (100..600).contains(&s)),
        "status {status:?} read from {error:?}"
    );
    for phase in [Phase::Connect, Phase::Session] {
        let a = http::verdict(error, phase, "a".to_owned());
        let b = http::verdict(error, phase, format!("b {}", error));
        assert_eq!(
            kind(&a),
            kind(&b),
            "the verdict of {error:?} depends on its detail"
        );
        if let Verdict::Overload {
            retry_after: Some(wait),
            ..
        } = a
        {
            assert!(
                wait <= RETRY_AFTER_MAX,
                "a Retry-After of {wait:?} believed"
            );
        }
    }
    let _ = http::never_ran(error);
    assert_plain(&plain(&http::describe(error)));
}

/// A verdict without its detail text.
fn kind(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Death(death) => format!("death {:?}", death.cause),
        Verdict::Suspect { status, .. } => format!("suspect {status:?}"),
        Verdict::Unauthorized { .. } => "unauthorized".to_owned(),
        Verdict::AuthUnavailable { .. } => "auth unavailable".to_owned(),
        Verdict::Rejected { status, .. } => format!("rejected {status:?}"),
        other => format!("{other:?}"),
    }
}

/// The same error answering `initialize`: the handshake's cause, detail and status.
fn handshake(error: HttpError) {
    let error = ClientInitializeError::TransportError {
        error: DynamicTransportError::from_parts(
            "StreamableHttp",
            std::any::TypeId::of::<HttpTransport>(),
            Box::new(error),
        ),
        context: Cow::Borrowed("send initialize request"),
    };
    let status = http::initialize_status(&error);
    assert!(status.is_none_or(|s| (100..600).contains(&s)));
    let failed = Handshake::Failed {
        error: Box::new(error),
        step: "initialize",
    };
    let _ = failed.verdict();
    assert_plain(&failed.detail(Duration::from_secs(30)));
}

fn retry_after_is_capped(answer: &Answer) {
    for now in [
        SystemTime::UNIX_EPOCH,
        SystemTime::UNIX_EPOCH + Duration::from_secs(1 << 31),
    ] {
        if let Some(wait) = parse_retry_after(&answer.retry_after, now) {
            assert!(wait <= RETRY_AFTER_MAX, "Retry-After {wait:?}");
        }
    }
    let verdict = Verdict::of_status(answer.status, Some(&answer.retry_after), String::new());
    if let Verdict::Overload {
        retry_after: Some(wait),
        ..
    } = verdict
    {
        assert!(wait <= RETRY_AFTER_MAX, "Retry-After {wait:?}");
    }
}

/// A JSON body answering request 1 on a session that treats 400 as expiry.
fn stray_errors(body: &str) {
    let Ok(message) = serde_json::from_str::<ServerJsonRpcMessage>(body) else {
        return;
    };
    let ours = Some(RequestId::Number(1));
    let stray = matches!(&message, JsonRpcMessage::Error(e) if e.id != ours);
    let answered =
        http::expire_on_400(ours.as_ref(), Ok((http::Answer::Json(message.clone()), ())));
    assert_eq!(
        matches!(answered, Err(StreamableHttpError::SessionExpired)),
        stray,
        "expiry judged wrongly for {message:?}"
    );
    let unsent = http::expire_on_400(None, Ok((http::Answer::Json(message), ())));
    assert!(unsent.is_ok(), "a notification's answer became an expiry");
}

/// The body as a stored token record: what it says about expiry, and a `Debug` that shows no
/// token.
fn token_record(body: &str) {
    let Ok(record) = serde_json::from_str::<StoredAuth>(body) else {
        return;
    };
    let _ = record.expires_at();
    let _ = record.expires_in();
    let _ = record.can_refresh();
    let shown = format!("{record:?}");
    let Some(token) = record.credentials.token_response.as_ref() else {
        return;
    };
    use oauth2::TokenResponse;
    let secret = token.access_token().secret();
    // A long token that no other field holds must not appear.
    let elsewhere = format!(
        "{} {} {:?} {:?}",
        record.server_url,
        record.credentials.client_id,
        record.credentials.granted_scopes,
        record.credentials.issuer
    );
    if secret.len() >= 24 && !elsewhere.contains(secret.as_str()) {
        assert!(
            !shown.contains(secret.as_str()),
            "the access token is in {shown}"
        );
    }
}
