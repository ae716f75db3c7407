//! One message out, and what comes back for it.
//!
//! A request's send lasts until its answer is delivered: the `POST`, then its JSON body or its
//! event stream (the messages on it are delivered in order; a response to another request is
//! dropped, see [`super::events::answers`]). A stream that ends before the answer is resumed
//! with `Last-Event-ID` (2025 sessions, once an event id was seen, `sse_max_retries` times,
//! after the server's clamped `retry:` or a doubling delay); otherwise the send fails, and rmcp
//! fails the request with that error. A 2026-07-28 request's stream is never resumed (SEP-2575:
//! the revision has no event ids, and the server takes the closed stream as the request's
//! cancellation): its send fails at once with [`super::errors::StreamLost`], and the call path
//! decides whether to issue the request again under a new id ([`super::answer_stream`]).
//! `notifications/cancelled` stops reading the answer it names (and on a 2026-07-28
//! generation, where closing the stream is the cancellation, is not sent).

use std::{sync::Arc, time::Duration};

use bytes::Bytes;
use rmcp::{
    model::{
        ClientJsonRpcMessage, ClientNotification, ClientRequest, GetMeta, JsonRpcMessage,
        RequestId, ServerJsonRpcMessage, ServerResult,
    },
    transport::streamable_http_client::StreamableHttpError,
};

use super::{
    HttpError,
    answer::{self, Answer, Sent, expire_on_400},
    answer_stream::Reading,
    core::Core,
    delivery::{self, Departure},
    errors::redacted,
    routing,
};
use crate::transport::ledger::Delivery;

/// The most a message that awaits no answer (a notification, a response to the server) may
/// take: the server answers these at once.
const CONTROL_WAIT: Duration = Duration::from_secs(5);

impl Core {
    /// Sends `message` (see the module docs).
    pub(super) async fn send(
        self: Arc<Self>,
        message: ClientJsonRpcMessage,
    ) -> Result<(), HttpError> {
        match &message {
            JsonRpcMessage::Request(request) => {
                let id = request.id.clone();
                let stop = self.begin(&id);
                // Ends the request's entry however its send ends: finished, or dropped by the
                // lean link's caller (rmcp never drops it).
                let flight = Flight {
                    core: &self,
                    id: &id,
                    departure: Departure::default(),
                };
                // Boxed: a request's future holds its whole answer's reading, too large to be
                // moved about by value inside rmcp's handshake and serve loop.
                tokio::select! {
                    sent = Box::pin(self.request(&message, &id, &flight.departure)) => sent,
                    // Cancelled (the answer is no longer awaited), or the transport closed.
                    () = stop.cancelled() => Ok(()),
                }
            }
            // Boxed: inline, a notification's `POST` sized every request's future too (4,208
            // bytes against 880 boxed), and a request may stay pending for the whole session
            // (2026-07-28's `subscriptions/listen`) on a task rmcp sizes by it.
            _ => Box::pin(self.other(&message)).await,
        }
    }

    /// A message that is no request: a notification, or our answer to a server's request.
    async fn other(self: &Arc<Self>, message: &ClientJsonRpcMessage) -> Result<(), HttpError> {
        match message {
            JsonRpcMessage::Notification(notification) => match &notification.notification {
                ClientNotification::CancelledNotification(cancelled) => {
                    if let Some(id) = &cancelled.params.request_id {
                        self.cancel(id);
                    }
                    match self.modern() {
                        true => Ok(()),
                        false => self.control(message).await,
                    }
                }
                ClientNotification::InitializedNotification(_) => {
                    self.control(message).await?;
                    if self.session.id.get().is_some() {
                        self.start_standalone();
                    }
                    Ok(())
                }
                _ => self.control(message).await,
            },
            _ => self.control(message).await,
        }
    }

    /// A request: the `POST`, then its answer.
    async fn request(
        &self,
        message: &ClientJsonRpcMessage,
        id: &RequestId,
        departure: &Departure,
    ) -> Result<(), HttpError> {
        let JsonRpcMessage::Request(request) = message else {
            return Ok(());
        };
        let method = request.request.method();
        let version = request.request.get_meta().protocol_version();
        let modern = version.as_ref().is_some_and(|v| !v.has_initialize());
        let mut headers = self.base_headers(version.as_ref());
        routing::add_standard_headers(message, modern, &self.tool_headers, &mut headers);
        let body = encode(message)?;
        let session = self.session.id.get().is_some();
        let sent = Sent {
            request: Some((id, method)),
            session,
            max_message: self.rules.max_message,
            probe: false,
        };
        // Boxed: the `POST` (reqwest's request future, the authorizer) is done once its answer's
        // head arrives, and a request's future then reads its answer for as long as it lasts
        // (a 2026 listen: the whole session). With the JSON answer's hand-over below boxed
        // too, a request's future is 1,096 bytes, not 3,328.
        let result = Box::pin(self.exchange(&headers, body, &sent, Some(departure))).await;
        // Whether the request left (see `crate::transport::ledger`): a refused connection, or a
        // body never asked for, never reached the server; an answer of any kind did.
        let outcome = delivery::of(&result, departure.left());
        self.activity.ledger.sent(id, outcome);
        let result = match session && self.rules.treat_400_as_expired {
            true => expire_on_400(Some(id), result),
            false => result,
        };
        let result = self.opening.read(message, session, result);
        let (answer, session_id) = result?;
        self.activity.bytes_arrived();
        if let ClientRequest::InitializeRequest(_) = &request.request
            && let Some(session_id) = session_id
        {
            if let Ok(text) = session_id.to_str() {
                let _ = self.activity.session_id.set(text.into());
            }
            let _ = self.session.id.set(session_id);
            self.standalone.expect();
        }
        match answer {
            Answer::Accepted => Ok(()),
            Answer::Json(answer) => {
                // Boxed, like the `POST` above (see there).
                Box::pin(self.take(answer, method)).await;
                Ok(())
            }
            Answer::Events(response) => {
                let reading = Reading {
                    id,
                    method,
                    refuse_if_empty: self.opening.refuses_empty(message, session),
                    modern,
                };
                Box::pin(self.answer(response, reading)).await
            }
        }
    }

    /// One `POST` with the current token (renewed once if refused), and its answer read; a
    /// request's body is `departure`'s, which then says whether any of it left.
    pub(super) async fn exchange(
        &self,
        headers: &reqwest::header::HeaderMap,
        body: Bytes,
        sent: &Sent<'_>,
        departure: Option<&Departure>,
    ) -> Result<(Answer, Option<reqwest::header::HeaderValue>), HttpError> {
        let result = self
            .authorized(|token| {
                let body = &body;
                async move {
                    let make = || {
                        let body = match departure {
                            Some(departure) => departure.body(body.clone()),
                            None => body.clone().into(),
                        };
                        self.post(headers.clone(), body, token.as_deref())
                    };
                    let response = self.execute(make).await?;
                    answer::read(response, sent, &self.activity).await
                }
            })
            .await;
        redacted(result)
    }

    /// A message that awaits no answer: a notification, or our answer to a server's request.
    async fn control(&self, message: &ClientJsonRpcMessage) -> Result<(), HttpError> {
        let mut headers = self.base_headers(None);
        routing::add_standard_headers(message, self.modern(), &self.tool_headers, &mut headers);
        let body = encode(message)?;
        let sent = Sent {
            request: None,
            session: self.session.id.get().is_some(),
            max_message: self.rules.max_message,
            probe: false,
        };
        match tokio::time::timeout(CONTROL_WAIT, self.exchange(&headers, body, &sent, None)).await {
            Ok(answered) => answered.map(drop),
            Err(_) => Err(StreamableHttpError::ControlRequestTimeout),
        }
    }

    /// Delivers the answer to a `method` request, after noting what it tells the transport:
    /// the version `initialize` negotiated, the `Mcp-Param-*` annotations of listed tools.
    pub(super) async fn take(&self, mut answer: ServerJsonRpcMessage, method: &str) {
        if let JsonRpcMessage::Response(response) = &mut answer {
            match &mut response.result {
                ServerResult::InitializeResult(result) => {
                    let _ = self.session.version.set(result.protocol_version.clone());
                }
                ServerResult::ListToolsResult(list) if method == "tools/list" && self.modern() => {
                    self.tool_headers.learn(&mut list.tools);
                }
                _ => {}
            }
        }
        self.deliver(answer).await;
    }
}

/// One request in flight; when dropped, its entry ends and, if it was given up (or failed)
/// before its POST was answered, whether it left is what its body says. Nothing else writes
/// this id's ledger entry meanwhile.
struct Flight<'a> {
    core: &'a Core,
    id: &'a RequestId,
    departure: Departure,
}

impl Drop for Flight<'_> {
    fn drop(&mut self) {
        self.core.end(self.id);
        if self.core.activity.ledger.delivery(self.id) == Delivery::Pending {
            let outcome = delivery::abandoned(self.departure.left());
            self.core.activity.ledger.sent(self.id, outcome);
        }
    }
}

/// The message as JSON (our own types always encode).
fn encode(message: &ClientJsonRpcMessage) -> Result<Bytes, HttpError> {
    serde_json::to_vec(message)
        .map(Bytes::from)
        .map_err(StreamableHttpError::Deserialize)
}
