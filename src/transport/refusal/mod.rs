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
pub(crate) fn not_modern(id: RequestId, said: &str) -> ServerJsonRpcMessage {
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
pub(crate) fn is_discover(message: &TxJsonRpcMessage<RoleClient>) -> Option<&RequestId> {
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
}

impl<T> DiscoverRefusals<T> {
    pub(crate) fn new(inner: T, enabled: bool) -> Self {
        DiscoverRefusals {
            inner,
            enabled,
            probe: None,
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
                None if initialize => self.probe = None,
                // The handshake is over: a later `server/discover` is a probe, judged as is.
                None => (self.enabled, self.probe) = (false, None),
            }
        }
        self.inner.send(item)
    }

    /// # Cancel safety
    ///
    /// As cancel-safe as the wrapped transport's `receive`: a message taken is judged and
    /// returned in the same poll.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
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
enum Judged {
    /// The answer (perhaps read as a refusal).
    Answer(ServerJsonRpcMessage),
    /// Something else (a notification, a request, a response to another id).
    Other(ServerJsonRpcMessage),
}

fn judge(probe: &RequestId, message: ServerJsonRpcMessage) -> Judged {
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
mod tests {
    use std::collections::VecDeque;

    use super::*;
    use rmcp::model::{
        CustomResult, DiscoverRequest, DiscoverRequestParams, EmptyResult, ListToolsRequest,
    };
    use serde_json::json;

    /// A transport that answers from a script.
    struct Scripted(VecDeque<ServerJsonRpcMessage>);

    impl Transport<RoleClient> for Scripted {
        type Error = std::io::Error;

        fn send(
            &mut self,
            _: TxJsonRpcMessage<RoleClient>,
        ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
            std::future::ready(Ok(()))
        }

        async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
            self.0.pop_front()
        }

        async fn close(&mut self) -> Result<(), Self::Error> {
            Ok(())
        }
    }

    fn discover(id: i64) -> TxJsonRpcMessage<RoleClient> {
        let request = DiscoverRequest::new(DiscoverRequestParams {});
        TxJsonRpcMessage::<RoleClient>::request(
            ClientRequest::DiscoverRequest(request),
            RequestId::Number(id),
        )
    }

    #[tokio::test]
    async fn only_the_handshakes_discover_is_read_and_a_later_probe_is_answered_as_is() {
        let empty =
            |id| ServerJsonRpcMessage::response(ServerResult::empty(()), RequestId::Number(id));
        let script = VecDeque::from([empty(1), empty(3)]);
        let mut io = DiscoverRefusals::new(Scripted(script), true);
        io.send(discover(1)).await.expect("sent");
        let answer = io.receive().await.expect("an answer");
        assert!(
            matches!(&answer, JsonRpcMessage::Error(e) if e.error.code == ErrorCode::METHOD_NOT_FOUND)
        );
        let list = ClientRequest::ListToolsRequest(ListToolsRequest::default());
        io.send(TxJsonRpcMessage::<RoleClient>::request(
            list,
            RequestId::Number(2),
        ))
        .await
        .expect("sent");
        io.send(discover(3)).await.expect("sent");
        let probe = io.receive().await.expect("an answer");
        assert!(matches!(probe, JsonRpcMessage::Response(_)), "{probe:?}");
    }

    fn probe() -> RequestId {
        RequestId::Number(1)
    }

    fn refused(judged: Judged) -> Option<String> {
        match judged {
            Judged::Answer(JsonRpcMessage::Error(e))
                if e.error.code == ErrorCode::METHOD_NOT_FOUND =>
            {
                assert_eq!(e.id, Some(probe()));
                Some(e.error.message.to_string())
            }
            _ => None,
        }
    }

    #[test]
    fn a_result_that_is_not_a_discover_result_is_a_refusal() {
        for result in [
            ServerResult::EmptyResult(EmptyResult {}),
            ServerResult::CustomResult(CustomResult::new(json!({"ok": true}))),
        ] {
            let message = ServerJsonRpcMessage::response(result, probe());
            let said = refused(judge(&probe(), message)).expect("a refusal");
            assert!(said.contains("not a discover result"), "{said}");
        }
    }

    #[test]
    fn a_version_refusal_is_a_refusal_only_when_it_names_initialize_era_versions_alone() {
        let refusal = |supported: &[ProtocolVersion]| {
            let error =
                ErrorData::unsupported_protocol_version(ProtocolVersion::V_2026_07_28, supported);
            judge(&probe(), ServerJsonRpcMessage::error(error, Some(probe())))
        };
        let said = refused(refusal(&[ProtocolVersion::V_2025_11_25])).expect("a refusal");
        assert!(said.contains("2025-11-25"), "{said}");
        let modern = refusal(&[ProtocolVersion::V_2026_07_28, ProtocolVersion::V_2025_11_25]);
        assert!(matches!(modern, Judged::Answer(JsonRpcMessage::Error(e))
            if e.error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION));
        assert!(refused(refusal(&[])).is_none());
    }

    #[test]
    fn an_error_for_an_id_never_sent_answers_the_probe_and_others_pass() {
        let stray = ErrorData::invalid_request("bad", None);
        let stray =
            ServerJsonRpcMessage::error(stray, Some(RequestId::String("server-error".into())));
        assert!(refused(judge(&probe(), stray)).is_some());
        let plain = ServerJsonRpcMessage::error(ErrorData::invalid_params("x", None), None);
        assert!(
            matches!(judge(&probe(), plain), Judged::Answer(JsonRpcMessage::Error(e))
            if e.error.code == ErrorCode::INVALID_PARAMS)
        );
        let late = ServerJsonRpcMessage::response(ServerResult::empty(()), RequestId::Number(9));
        assert!(matches!(judge(&probe(), late), Judged::Other(_)));
    }
}
