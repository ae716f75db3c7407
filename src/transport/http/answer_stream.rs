//! Reading the event stream that answers a request (see [`super::send`]): its messages are
//! delivered as they come, the answer ends it; a 2025 stream that ends first is resumed with
//! `Last-Event-ID`, a 2026-07-28 one is the request's loss ([`StreamLost`]).

use std::time::Duration;

use rmcp::{model::RequestId, transport::streamable_http_client::StreamableHttpError};

use super::{
    HttpError,
    core::Core,
    errors::StreamLost,
    events::{Broken, Events, answers, on_stream_of},
};
use crate::transport::{decode, refusal};

/// How long the rest of an answered HTTP/1.1 stream is read, so its connection can be reused.
pub(super) const DRAIN: Duration = Duration::from_millis(50);

impl Core {
    /// Reads the event stream that answers a request until its answer (see the module docs).
    pub(super) async fn answer(
        &self,
        response: reqwest::Response,
        reading: Reading<'_>,
    ) -> Result<(), HttpError> {
        let Reading {
            id,
            method,
            refuse_if_empty,
            modern,
        } = reading;
        let h1 = response.version() < reqwest::Version::HTTP_2;
        let (max_event, max_line) = (self.rules.max_event, self.rules.max_line);
        let mut events = Events::new(response, max_event, max_line);
        let mut resumed = 0;
        loop {
            let ended = match events.next(&self.activity).await {
                Ok(Some(event)) if event.event != "message" || event.data.trim().is_empty() => {
                    continue;
                }
                Ok(Some(event)) => {
                    // An event that is no message is skipped, as rmcp skips it: the answer may
                    // still follow.
                    let message = match decode::message(event.data.as_bytes(), Some(method)) {
                        Ok(message) => message,
                        Err(e) => {
                            tracing::warn!(%id, "a message on a POST's event stream did not parse and was skipped: {e}");
                            continue;
                        }
                    };
                    if answers(&message, id) {
                        self.take(message, method).await;
                        if h1 {
                            let _ = tokio::time::timeout(DRAIN, drain(&mut events, &self.activity))
                                .await;
                        }
                        return Ok(());
                    }
                    if let Some(message) = on_stream_of(message, id) {
                        self.deliver(message).await;
                    }
                    continue;
                }
                Ok(None) => StreamableHttpError::UnexpectedEndOfStream,
                Err(broken @ Broken::Http(_)) => self.broken(broken),
                Err(broken @ Broken::Sse(_)) => return Err(self.broken(broken)),
            };
            if refuse_if_empty && !events.carried {
                let said = "answered with an event stream that ended empty";
                self.deliver(refusal::not_modern(id.clone(), said)).await;
                return Ok(());
            }
            // Lost with its stream (see the module docs): nothing to resume, never waited on.
            if modern {
                return Err(StreamLost::error(&ended));
            }
            if self.modern() || resumed >= self.rules.max_retries {
                return Err(ended);
            }
            let Some(last_id) = events.last_id().map(str::to_owned) else {
                return Err(ended);
            };
            let hint = events.retry().map(|ms| self.rules.clamp_retry(ms));
            let wait = hint.unwrap_or_default().max(self.rules.backoff(resumed));
            resumed += 1;
            tokio::time::sleep(wait).await;
            match self.open_get(Some(&last_id)).await {
                Ok(response) => events.resume(response, max_event, max_line),
                Err(error) => tracing::debug!(%id, "resuming an answer's stream failed: {error}"),
            }
        }
    }
}

/// What reading a request's event stream needs to know of the request.
pub(super) struct Reading<'a> {
    pub(super) id: &'a RequestId,
    pub(super) method: &'a str,
    /// An empty stream is the server refusing the handshake's `server/discover`.
    pub(super) refuse_if_empty: bool,
    /// A 2026-07-28 request (its `_meta` names a version without `initialize`).
    pub(super) modern: bool,
}

/// Reads what is left of an answered stream.
pub(super) async fn drain(events: &mut Events, activity: &crate::transport::Activity) {
    while let Ok(Some(_)) = events.next(activity).await {}
}

#[cfg(test)]
mod tests {
    use rmcp::{RoleClient, ServiceError, transport::DynamicTransportError};

    use super::*;
    use crate::{
        transport::http::{HttpTransport, errors::stream_lost, never_ran, verdict},
        verdict::{Phase, Verdict}};

    #[test]
    fn a_lost_2026_stream_is_one_suspect_answer_that_may_have_run() {
        let ended = StreamableHttpError::UnexpectedEndOfStream;
        let lost = StreamLost::error(&ended);
        let words = stream_lost(&lost).expect("it says it was lost").to_string();
        assert!(words.contains("unexpected end of stream"), "{words}");
        assert!(stream_lost(&ended).is_none(), "only a 2026 loss is one");
        let judged = verdict(&lost, Phase::Session, String::new());
        assert!(
            matches!(judged, Verdict::Suspect { status: None, .. }),
            "not a death by itself: {judged:?}"
        );
        assert!(!never_ran(&lost), "it left: it may have run");
        let sent = DynamicTransportError::new::<HttpTransport, RoleClient>(lost);
        let said = crate::transport::stream_lost(&ServiceError::TransportSend(sent));
        assert_eq!(
            said,
            Some(words),
            "the call path reads it through rmcp's error"
        );
    }
}
