//! The session's standalone `GET` stream: where a 2025-era server sends what belongs to no
//! request (a `tools/list_changed`, a request of its own), and the signal of its death.
//!
//! # Invariants
//!
//! 1. The stream is opened once `notifications/initialized` is accepted, on sessions the
//!    server gave an id, and read until the transport stops.
//! 2. When it ends (cleanly, or broken) it is opened again at once: a new stream is life (a
//!    proxy cut an idle stream; no generation is lost), while a refused connection, a reset or
//!    a 404 for the session is the generation's death, reported within the same second (the
//!    verdict of [`crate::transport::judge::judge_http`], put in the death slot). A server that
//!    ended the stream itself with a `retry:` hint is waited for (clamped) first; a stream that
//!    lived less than [`SHORT`] is opened again after a doubling delay, so a proxy that cuts
//!    every stream at once costs no busy loop.
//! 3. The first open's failures are not deaths (many servers answer that `GET` with 405, some
//!    with other refusals): the connect goes on, and the open is tried again after a delay.
//!    A 405, a 401 or a 403 stops trying.
//!
//! The connect waits for the first `GET` to be answered ([`super::settle`]).

use std::{sync::Arc, time::Duration};

use reqwest::StatusCode;
use rmcp::{
    model::{GetExtensions, JsonRpcMessage},
    service::InboundStreamOrigin,
    transport::streamable_http_client::StreamableHttpError,
};
use tokio::time::Instant;

use super::{
    HttpError,
    answer::{self, content_type, is},
    core::Core,
    errors::{expire_on_400_get, redacted},
    events::{Broken, Events},
};
use crate::transport::decode;
use crate::{
    state::Death,
    transport::judge::judge_http,
    verdict::{Phase, Verdict},
};

/// A stream that lived less than this is opened again only after a delay (invariant 2).
const SHORT: Duration = Duration::from_secs(1);
/// How often the origin is looked at while a stream's re-opening waits.
const CHECK: Duration = Duration::from_millis(50);

impl Core {
    /// Starts reading the standalone stream (invariant 1); a second call does nothing.
    pub(super) fn start_standalone(self: &Arc<Self>) {
        let mut task = self
            .standalone_task
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if task.is_none() {
            *task = Some(tokio::spawn(run(self.clone())));
        }
    }

    /// A `GET` of the session's event stream (resuming after `last_id`): its answer, if it is
    /// an event stream.
    pub(super) async fn open_get(
        &self,
        last_id: Option<&str>,
    ) -> Result<reqwest::Response, HttpError> {
        let opened = self
            .authorized(|token| async move {
                let response = self.execute(|| self.get(last_id, token.as_deref())).await?;
                stream_answer(response, self.session.id.get().is_some())
            })
            .await;
        let session = self.session.id.get().is_some();
        redacted(match session && self.rules.treat_400_as_expired {
            true => expire_on_400_get(opened),
            false => opened,
        })
    }
}

/// What a `GET`'s answer is: the stream, or why there is none.
fn stream_answer(
    response: reqwest::Response,
    session: bool,
) -> Result<reqwest::Response, HttpError> {
    let status = response.status();
    if status == StatusCode::METHOD_NOT_ALLOWED {
        return Err(StreamableHttpError::ServerDoesNotSupportSse);
    }
    answer::challenge(status, response.headers())?;
    if let Some(error) = answer::overload(status, response.headers()) {
        return Err(error.into());
    }
    if status == StatusCode::NOT_FOUND && session {
        return Err(StreamableHttpError::SessionExpired);
    }
    if !status.is_success() {
        let text = format!("HTTP {status}: ");
        return Err(StreamableHttpError::UnexpectedServerResponse(text.into()));
    }
    match content_type(response.headers()) {
        Some(kind) if is(&kind, "text/event-stream") => Ok(response),
        other => Err(StreamableHttpError::UnexpectedContentType(other)),
    }
}

/// How one reading of the stream ended.
enum End {
    /// The transport stopped (or its inbox is gone): nothing more to do.
    Stopped,
    /// The stream ended; `hint` is the server's clamped `retry:` when it ended the stream itself.
    Ended { why: String, hint: Option<Duration> },
}

/// The task of invariants 1-3.
async fn run(core: Arc<Core>) {
    let mut last_id: Option<String> = None;
    let mut ended: Option<String> = None;
    let mut delays = 0u32;
    loop {
        // Boxed: the open (auth, the HTTP/2 set's send: 8.4 KiB of future) is held only while
        // it runs, not for the stream's whole life beside the read.
        let opened = tokio::select! {
            opened = Box::pin(core.open_get(last_id.as_deref())) => opened,
            () = core.stop.cancelled() => return,
        };
        let wait = match (opened, ended.take()) {
            (Ok(response), reopened) => {
                core.standalone.answered();
                if let Some(why) = reopened {
                    tracing::debug!(
                        "standalone GET stream opened again after it ended ({why}): the server is alive"
                    );
                }
                let began = Instant::now();
                // Held on a shared HTTP/2 connection that `PING`s keep proven?
                let pinged = core.http2.as_ref().is_some_and(|set| set.pinged());
                let h2 = response.version() == reqwest::Version::HTTP_2;
                core.activity.hold_stream(pinged && h2);
                let end = read(&core, response, &mut last_id).await;
                core.activity.hold_stream(false);
                match end {
                    End::Stopped => return,
                    End::Ended { why, hint } => {
                        tracing::debug!("standalone GET stream ended ({why}); opening it again");
                        let lived = began.elapsed();
                        ended = Some(why);
                        delays = if lived < SHORT { delays + 1 } else { 0 };
                        let backoff = (delays > 0).then(|| core.rules.backoff(delays - 1));
                        let wait = hint.max(backoff).unwrap_or_default();
                        // Waiting out `retry:` or the delay must not hide a dead server.
                        if !wait.is_zero() && refuses_within(&core.url, wait).await {
                            let detail = format!(
                                "the standalone GET stream ended ({}) and the server refuses connections",
                                ended.as_deref().unwrap_or_default()
                            );
                            return core
                                .die(Death::new(crate::state::Cause::TransportError, detail));
                        }
                        // Opened again at once, the stream is its own check (a refusal is the
                        // death, an answer is life): a probe beside it would only race it. While
                        // it waits, the session's own signal is suspect: it probes for itself.
                        if !wait.is_zero() {
                            core.activity.suspect_own_signal();
                        }
                        wait
                    }
                }
            }
            (Err(error), Some(why)) => match judge_http(&error, Phase::Session) {
                Verdict::Death(death) => {
                    let detail = format!(
                        "the standalone GET stream ended ({why}) and could not be opened again: {}",
                        death.detail
                    );
                    return core.die(Death::new(death.cause, detail));
                }
                _ if stops_trying(&error) => return,
                verdict => {
                    tracing::debug!(
                        ?verdict,
                        "opening the standalone GET stream again failed; trying later"
                    );
                    ended = Some(why);
                    delays += 1;
                    core.activity.suspect_own_signal();
                    core.rules.backoff(delays - 1)
                }
            },
            (Err(error), None) => {
                core.standalone.answered();
                if stops_trying(&error) {
                    tracing::debug!("no standalone GET stream: {error}");
                    return;
                }
                tracing::debug!("opening the standalone GET stream failed: {error}; trying later");
                delays += 1;
                core.rules.backoff(delays - 1)
            }
        };
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = core.stop.cancelled() => return,
        }
    }
}

/// Whether the server's origin refuses a TCP connection (nothing listens) within `wait`:
/// connects every [`CHECK`], each bounded; an origin that cannot be watched never does. A
/// process being killed may still complete a connect on its closing listener, hence more than
/// one look.
async fn refuses_within(url: &url::Url, wait: Duration) -> bool {
    let Some(origin) = crate::transport::origin_of(url) else {
        return false;
    };
    let looks = async {
        loop {
            let connect = tokio::net::TcpStream::connect(origin.as_str());
            if let Ok(Err(e)) = tokio::time::timeout(CHECK, connect).await
                && e.kind() == std::io::ErrorKind::ConnectionRefused
            {
                return;
            }
            tokio::time::sleep(CHECK).await;
        }
    };
    tokio::time::timeout(wait, looks).await.is_ok()
}

/// A 405 (no stream offered), a 401 or a 403: opening again cannot help.
fn stops_trying(error: &HttpError) -> bool {
    matches!(
        error,
        StreamableHttpError::ServerDoesNotSupportSse
            | StreamableHttpError::AuthRequired(_)
            | StreamableHttpError::InsufficientScope(_)
    )
}

/// Reads one opening of the stream, delivering its messages, until it ends.
async fn read(core: &Core, response: reqwest::Response, last_id: &mut Option<String>) -> End {
    let mut events = Events::new(response, core.rules.max_event, core.rules.max_line);
    let end = loop {
        let next = tokio::select! {
            next = events.next(&core.activity) => next,
            () = core.stop.cancelled() => return End::Stopped,
        };
        let event = match next {
            Ok(Some(event)) => event,
            Ok(None) => {
                let hint = events.retry().map(|ms| core.rules.clamp_retry(ms));
                break End::Ended {
                    why: "the server ended it".to_owned(),
                    hint,
                };
            }
            Err(Broken::Http(e)) => {
                let why = crate::transport::innermost(&e);
                break End::Ended { why, hint: None };
            }
            Err(broken @ Broken::Sse(_)) => {
                if let Some(death) = broken.death() {
                    core.die(death);
                }
                return End::Stopped;
            }
        };
        if event.event != "message" || event.data.trim().is_empty() {
            continue;
        }
        let mut message = match decode::message(event.data.as_bytes(), None) {
            Ok(message) => message,
            Err(e) => {
                tracing::warn!(
                    "a message on the standalone GET stream did not parse and was skipped: {e}"
                );
                continue;
            }
        };
        if let JsonRpcMessage::Request(request) = &mut message {
            request
                .request
                .extensions_mut()
                .insert(InboundStreamOrigin::Unassociated);
        }
        // Boxed: a delivery (1.8 KiB of future) is rare on this stream; the idle read is not.
        if !Box::pin(core.deliver(message)).await {
            return End::Stopped;
        }
    };
    if let Some(id) = events.last_id() {
        *last_id = Some(id.to_owned());
    }
    end
}
