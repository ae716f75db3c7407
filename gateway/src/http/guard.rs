//! What every request to `/mcp` passes before rmcp sees it: the drain lets it in, the
//! host presents a token we know (a static one or a JWT of the issuer: `identify`), its caller
//! is within its rate (`access`), and it is within its bounds (sessions per token and in all,
//! requests in flight per session). A refusal is an HTTP status with a JSON-RPC error body that
//! says which bound, and touches no other host. A session is the caller's that opened it:
//! another caller's requests in it get 403. A `DELETE` that ended a session is answered
//! `204 No Content` (rmcp answers `202`, which hosts read as a failed termination).
//!
//! `Host` and `Origin` (DNS rebinding) and the body size are checked by rmcp's service behind
//! this, with the gateway's settings.

use std::sync::Arc;

use axum::{
    body::Body,
    extract::{Request, State},
    http::{HeaderValue, Method, StatusCode, header},
    middleware::Next,
    response::Response,
};
use futures::StreamExt;

use super::{
    access::rate::Buckets,
    admit::{Admission, Flow, Full},
    drain::{Drain, until_cut},
    hub::Hosts,
    identify::{Caller, Doors, Refused, TokenKey},
    lost::Unanswered,
    opening::{self, Known, Openings, Settle},
    prm::Metadata,
    refusal::refuse,
};

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
/// The first revision without sessions.
const STATELESS_FROM: &str = "2026-07-28";

/// The guard's state.
#[derive(Debug)]
pub(in crate::http) struct Gate {
    pub(in crate::http) doors: Doors,
    /// The protected resource metadata a 401 points at.
    pub(in crate::http) metadata: Arc<Metadata>,
    /// Each limited caller's requests per second.
    pub(in crate::http) rates: Buckets<TokenKey>,
    pub(in crate::http) admission: Admission,
    pub(in crate::http) hosts: Arc<Hosts>,
    /// The openings of requests waiting on a session's take-over (`gateway/src/http/opening/mod.rs`).
    pub(in crate::http) openings: Arc<Openings>,
    /// The body bound (`--max-body`).
    pub(in crate::http) max_body: usize,
    /// The drain: what is refused once it has begun, and the requests it waits for.
    pub(in crate::http) drain: Arc<Drain>,
    /// Whether a session's request may be opened early (rmcp's front; the own front answers a
    /// request as JSON, its head with its answer: `gateway/src/http/own/`).
    pub(in crate::http) open_sessions_early: bool,
}

/// The middleware on `/mcp`.
pub(in crate::http) async fn guard(
    State(gate): State<Arc<Gate>>,
    mut request: Request,
    next: Next,
) -> Response {
    let session = header_text(&request, SESSION_HEADER);
    if let Some(refused) = draining(&gate.drain, &request, session.is_some()) {
        return refused;
    }
    let authorization = request.headers().get(header::AUTHORIZATION).cloned();
    let post = request.method() == Method::POST;
    let caller = match let_in(&gate, authorization, post, session.as_deref()).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let token = caller.key.clone();
    request.extensions_mut().insert(caller);
    let stateless = header_text(&request, VERSION_HEADER)
        .is_some_and(|version| version.as_str() >= STATELESS_FROM);
    let (mut reservation, mut slot) = (None, None);
    // A session this gateway does not hold may be restored from the store by this request:
    // it is counted like a new one, and given back if it was not.
    let restoring = session.clone().filter(|id| !gate.hosts.has(id));
    let taking_over = restoring.is_some();
    if restoring.is_some() && request.method() != Method::DELETE {
        match gate.admission.reserve(token.clone()) {
            Ok(taken) => reservation = Some(taken),
            Err(full) => return over(full),
        }
    }
    if request.method() == Method::POST {
        let taken = match (&session, stateless) {
            (Some(id), _) => gate
                .admission
                .enter(Flow::Session(id.clone()))
                .map(|s| slot = Some(s)),
            (None, true) => gate
                .admission
                .enter(Flow::Token(token.clone()))
                .map(|s| slot = Some(s)),
            (None, false) => gate
                .admission
                .reserve(token.clone())
                .map(|r| reservation = Some(r)),
        };
        if let Err(full) = taken {
            return over(full);
        }
    }
    // Invariant 1 of the drain: a GET stream never holds it up.
    let counted = (request.method() != Method::GET).then(|| gate.drain.arrived());
    let (hosts, admission) = (gate.hosts.clone(), gate.admission.clone());
    // Once rmcp's own answer is known (after the head, for a request opened early).
    let settle: Settle = Box::new(move |response: &Response| {
        let created = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if let Some(reservation) = reservation
            && let Some(id) = created.or(restoring)
        {
            reservation.bind(id.clone());
            // The session may have failed its initialize, or closed already: then its slot
            // goes back now (closing twice gives back once).
            if !hosts.has(&id) {
                admission.closed(&id);
            }
        }
    });
    let known = Known {
        openings: gate.openings.clone(),
        max_body: gate.max_body,
        session: session.filter(|_| gate.open_sessions_early),
        stateless,
    };
    let delete = request.method() == Method::DELETE;
    let mut response = opening::respond(request, next, known, settle).await;
    if delete && response.status() == StatusCode::ACCEPTED {
        // The session is ended: nothing follows (the official Python SDK logs a 202 as a
        // failed termination).
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    if taking_over && response.status() == StatusCode::INTERNAL_SERVER_ERROR {
        response = store_unreadable();
    }
    // The slot and the count last as long as the response's body: an SSE stream included.
    let unanswered = response.extensions().get::<Unanswered>().cloned();
    let (parts, body) = response.into_parts();
    let body = until_cut(body.into_data_stream(), gate.drain.cut.clone(), unanswered);
    let body = body.map(move |chunk| {
        let _held = (&slot, &counted);
        chunk
    });
    Response::from_parts(parts, Body::from_stream(body))
}

/// The refusal of a request the drain does not let in: every request once it is over; a new
/// session once it has begun, and with the hand-off every request but a resumption and a
/// `DELETE`. A 503 that a balancer may send to another replica: nothing of it ran here.
fn draining(drain: &Drain, request: &Request, in_session: bool) -> Option<Response> {
    if drain.over.is_cancelled() {
        let message = "the gateway is shutting down";
        return Some(refuse(StatusCode::SERVICE_UNAVAILABLE, message));
    }
    if !drain.begun.is_cancelled() {
        return None;
    }
    let method = request.method();
    let stateless = header_text(request, VERSION_HEADER)
        .is_some_and(|version| version.as_str() >= STATELESS_FROM);
    let opens = *method == Method::POST && !in_session && !stateless;
    let resumes = request.headers().contains_key("last-event-id");
    let handed_off = drain.options.hand_off && *method != Method::DELETE && !resumes;
    if !opens && !handed_off {
        return None;
    }
    let message = match opens {
        true => "this gateway is draining (a restart): open the session on another one",
        false => "this gateway is draining (a restart): another one serves this session",
    };
    let mut refused = refuse(StatusCode::SERVICE_UNAVAILABLE, message);
    (refused.headers_mut()).insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    Some(refused)
}

/// The request's caller, if its token is one of ours, the session it names (if any) is its
/// own, and it is within its rate; else the refusal (401, 403, 429).
async fn let_in(
    gate: &Gate,
    authorization: Option<HeaderValue>,
    post: bool,
    session: Option<&str>,
) -> Result<Caller, Response> {
    let caller = (gate.doors)
        .identify(authorization.as_ref().map(HeaderValue::as_bytes))
        .await
        .map_err(|refused| unauthorized(&gate.metadata, refused))?;
    if let Some(id) = session
        && gate
            .admission
            .owner(id)
            .is_some_and(|owner| owner != caller.key)
    {
        // A session is its opener's: another caller's token does not reach it.
        let message = "this session was opened by another caller";
        return Err(refuse(StatusCode::FORBIDDEN, message));
    }
    if post {
        within_rate(gate, &caller).map_err(too_fast)?;
    }
    Ok(caller)
}

fn header_text(request: &Request, name: &str) -> Option<String> {
    let value = request.headers().get(name)?.to_str().ok()?;
    Some(value.to_owned())
}

pub(in crate::http) fn unauthorized(metadata: &Metadata, refused: Refused) -> Response {
    let (error, message) = match refused {
        Refused::Missing => (
            None,
            "this gateway needs a bearer token (Authorization: Bearer …)",
        ),
        Refused::Invalid => (
            Some("the token is not one this gateway accepts"),
            "the bearer token is not one this gateway accepts",
        ),
        Refused::Jwt(rejected) => (Some(rejected.description()), rejected.description()),
    };
    if let Refused::Jwt(rejected) = refused {
        tracing::debug!(?rejected, "a JWT was refused");
    }
    let mut response = refuse(StatusCode::UNAUTHORIZED, message);
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, metadata.challenge(error));
    response
}

/// Takes one of the caller's requests from its rate, if the policy gives it one.
fn within_rate(gate: &Gate, caller: &Caller) -> Result<(), std::time::Duration> {
    match caller.grant.as_ref().and_then(|grant| grant.rate) {
        Some(rate) => gate.rates.take(&caller.key, rate).inspect_err(|_| {
            tracing::debug!(caller = %caller.label, "a caller over its rate was answered 429");
        }),
        None => Ok(()),
    }
}

/// 429 with the seconds until the caller's next request is let through (at least 1).
fn too_fast(wait: std::time::Duration) -> Response {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    let seconds = seconds.max(1);
    let mut response = refuse(
        StatusCode::TOO_MANY_REQUESTS,
        &format!("this caller is over its requests per second; try again in {seconds} s"),
    );
    if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

fn over(full: Full) -> Response {
    let (status, message) = match full {
        Full::TokenSessions(max) => (
            StatusCode::TOO_MANY_REQUESTS,
            format!("this token already holds {max} sessions, the most it may; end one first"),
        ),
        Full::Sessions(max) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the gateway holds {max} sessions, the most it may; try again later"),
        ),
        Full::Requests(max) => (
            StatusCode::TOO_MANY_REQUESTS,
            format!("this session has {max} requests in flight, the most it may"),
        ),
    };
    let mut response = refuse(status, &message);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// rmcp's `500` when the store could not tell whether a session may be taken over here:
/// nothing ran, so a `503` that a balancer may send to another replica.
fn store_unreadable() -> Response {
    let message = "the session store could not be read; ask again";
    let mut refused = refuse(StatusCode::SERVICE_UNAVAILABLE, message);
    (refused.headers_mut()).insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    refused
}
