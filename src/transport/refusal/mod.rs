//! How a server that does not speak 2026-07-28 says so, read as one answer.
//!
//! `protocol: auto` asks with `server/discover` and falls back to `initialize` on the same
//! transport (rmcp's `Auto` lifecycle). rmcp falls back only on a correlated JSON-RPC error that
//! is not a 2026-era rejection; servers of 2025-11-25 and earlier refuse the method in more ways
//! than that. [`DiscoverRefusals`] sits between rmcp and the transport during the handshake and
//! turns each of these answers to `server/discover` into the one rmcp falls back on, a `-32601`
//! that names what the server said ([`not_modern`]):
//!
//! 1. a result that is not a discover result (`{}`, which many simple servers answer to every
//!    method they do not know, or any other object);
//! 2. `-32022` whose `supported` list names initialize-era versions only (no version in common
//!    with `server/discover`, but one `initialize` can offer);
//! 3. an error whose id answers no request we sent (`"server-error"`): the only request
//!    outstanding is `server/discover`.
//!
//! With `protocol: 2026-07-28`, which never falls back, the same reading makes each of these a
//! rejection (a JSON-RPC error answering `server/discover`) instead of a transient failure.
//!
//! The HTTP shapes (a 4xx, an empty 2xx body) are read where the status is known, in
//! [`super::http`], into the same answer. A discover result, any other error (a 2026-era
//! rejection such as `-32022` listing 2026-07-28 keeps its meaning) and everything after the
//! answer pass unchanged.
//!
//! One answer is dropped: a late one. rmcp's `Auto` waits 10 s for the discover answer and then
//! sends `initialize` on the same transport without it; a slow server (a Python server starting
//! on a loaded machine) may still answer the discover request while `initialize` waits, and rmcp
//! would fail the handshake on it ("conflict initialized response id: expected 1, got 0"). An
//! `initialize` sent while `server/discover` is unanswered marks the discover request abandoned;
//! its answer, whenever it comes, is dropped here (logged), so the fallback's handshake is judged
//! by `initialize`'s own answer alone.

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use rmcp::{
    RoleClient,
    model::{
        ClientRequest, ErrorCode, ErrorData, JsonRpcMessage, ProtocolVersion, RequestId,
        ServerJsonRpcMessage, ServerResult,
    },
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};

/// The most of a server's answer quoted in a refusal's message.
const QUOTE: usize = 200;

/// The answer to the `server/discover` request `id` that makes rmcp fall back to `initialize`:
/// `-32601` (the server does not know the method), saying what the server did (`said`).
pub(in crate::transport) fn not_modern(id: RequestId, said: &str) -> ServerJsonRpcMessage {
    let message = format!("server/discover refused: {}", quote(said));
    ServerJsonRpcMessage::error(
        ErrorData::new(ErrorCode::METHOD_NOT_FOUND, message, None),
        Some(id),
    )
}

/// `text` cut to [`QUOTE`] characters.
fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTE) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// The request id of a client message that asks `server/discover`.
pub(in crate::transport) fn is_discover(
    message: &TxJsonRpcMessage<RoleClient>,
) -> Option<&RequestId> {
    match message {
        JsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::DiscoverRequest(_)) => {
            Some(&r.id)
        }
        _ => None,
    }
}

/// A handshake transport that reads every pre-2026 answer to `server/discover` as `-32601` (see
/// the module docs). Off (`enabled: false`) it passes everything unchanged; it turns itself off
/// when the handshake is over (something other than `server/discover` or `initialize` is sent).
pub(crate) struct DiscoverRefusals<T> {
    inner: T,
    /// Cleared (never set again) by the first send of anything but a handshake request.
    enabled: bool,
    /// The id of the `server/discover` request awaiting its answer: set by `send`, cleared when
    /// an answer arrives or an `initialize` is sent.
    probe: Option<RequestId>,
    /// The `server/discover` request still unanswered when `initialize` was sent (rmcp gave up
    /// waiting for it): set by `send`, cleared when its late answer arrives and is dropped.
    abandoned: Option<RequestId>,
    /// Set (never cleared) by `send` when `initialize` is sent: from then on the handshake is
    /// `initialize`'s, whatever rmcp's error says (see [`Self::fell_back`]).
    fell_back: Arc<AtomicBool>,
}

impl<T> DiscoverRefusals<T> {
    pub(crate) fn new(inner: T, enabled: bool) -> Self {
        DiscoverRefusals {
            inner,
            enabled,
            probe: None,
            abandoned: None,
            fell_back: Arc::default(),
        }
    }

    /// Whether `initialize` has been sent, readable after the transport went to rmcp: an `auto`
    /// handshake that fails after it failed at `initialize` (rmcp says so itself only when the
    /// discover was refused, not when it went unanswered).
    pub(crate) fn fell_back(&self) -> Arc<AtomicBool> {
        self.fell_back.clone()
    }

    /// Whether `message` is the (late) answer to the abandoned `server/discover` request.
    fn answers_abandoned(&self, message: &ServerJsonRpcMessage) -> bool {
        let Some(abandoned) = &self.abandoned else {
            return false;
        };
        match message {
            JsonRpcMessage::Response(response) => answers(abandoned, &response.id),
            JsonRpcMessage::Error(error) => {
                error.id.as_ref().is_some_and(|id| answers(abandoned, id))
            }
            _ => false,
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for DiscoverRefusals<T> {
    type Error = T::Error;

    fn name() -> std::borrow::Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if self.enabled {
            let initialize = matches!(&item, JsonRpcMessage::Request(r)
                if matches!(r.request, ClientRequest::InitializeRequest(_)));
            match is_discover(&item) {
                Some(id) => self.probe = Some(id.clone()),
                // Sent while `server/discover` waits: rmcp fell back without its answer.
                None if initialize => {
                    self.abandoned = self.probe.take();
                    self.fell_back.store(true, Ordering::Relaxed);
                }
                // The handshake is over: a later `server/discover` is a probe, judged as is.
                None => (self.enabled, self.probe) = (false, None),
            }
        }
        self.inner.send(item)
    }

    /// # Cancel safety
    ///
    /// As cancel-safe as the wrapped transport's `receive`: a message taken is judged and
    /// returned (or dropped, when it answers the abandoned discover request) in the same poll.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = loop {
            let message = self.inner.receive().await?;
            if !self.answers_abandoned(&message) {
                break message;
            }
            let id = self.abandoned.take();
            tracing::info!(
                ?id,
                "a late answer to server/discover came after the fallback to initialize; dropped"
            );
        };
        let Some(probe) = self.probe.take() else {
            return Some(message);
        };
        match judge(&probe, message) {
            Judged::Answer(message) => Some(message),
            Judged::Other(message) => {
                self.probe = Some(probe);
                Some(message)
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// A message received while `server/discover` waits for its answer.
pub(in crate::transport) enum Judged {
    /// The answer (perhaps read as a refusal).
    Answer(ServerJsonRpcMessage),
    /// Something else (a notification, a request, a response to another id).
    Other(ServerJsonRpcMessage),
}

pub(in crate::transport) fn judge(probe: &RequestId, message: ServerJsonRpcMessage) -> Judged {
    match message {
        JsonRpcMessage::Response(response) if answers(probe, &response.id) => {
            match &response.result {
                ServerResult::DiscoverResult(_) => {
                    Judged::Answer(JsonRpcMessage::Response(response))
                }
                other => {
                    let said = serde_json::to_string(other).unwrap_or_default();
                    let said =
                        format!("answered with a result that is not a discover result: {said}");
                    Judged::Answer(not_modern(probe.clone(), &said))
                }
            }
        }
        JsonRpcMessage::Error(error) => {
            let correlated = error.id.as_ref().is_none_or(|id| answers(probe, id));
            if let Some(versions) = legacy_versions(&error.error) {
                let said = format!("-32022: the server supports {versions} only");
                return Judged::Answer(not_modern(probe.clone(), &said));
            }
            if correlated {
                return Judged::Answer(JsonRpcMessage::Error(error));
            }
            let said = format!(
                "an error for another request id ({}): {}",
                error.error.code.0, error.error.message
            );
            Judged::Answer(not_modern(probe.clone(), &said))
        }
        other => Judged::Other(other),
    }
}

/// Whether a response with `id` answers the request `probe` (rmcp's rule: the same id, or the
/// number as a string).
fn answers(probe: &RequestId, id: &RequestId) -> bool {
    match (probe, id) {
        (RequestId::Number(n), RequestId::String(s)) => s.parse() == Ok(*n),
        _ => probe == id,
    }
}

/// For a `-32022` whose `data.supported` lists only versions that have `initialize`: that list.
fn legacy_versions(error: &ErrorData) -> Option<String> {
    if error.code != ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
        return None;
    }
    let supported = error.data.as_ref()?.get("supported")?;
    let versions: Vec<ProtocolVersion> = serde_json::from_value(supported.clone()).ok()?;
    let legacy = !versions.is_empty() && versions.iter().all(ProtocolVersion::has_initialize);
    legacy.then(|| supported.to_string())
}

#[cfg(test)]
mod tests;
