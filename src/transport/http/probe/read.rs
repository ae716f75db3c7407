//! Reading a direct probe's answer (see the parent module): its `POST`, then its JSON body or
//! its event stream until the answer; what else the stream carries goes to rmcp's session.

use bytes::Bytes;
use rmcp::{
    model::{JsonRpcMessage, RequestId},
    transport::streamable_http_client::StreamableHttpError,
};

use super::Template;
use crate::transport::decode;
use crate::transport::http::{
    HttpError,
    answer::{Answer, Sent, expire_on_400},
    answer_stream::{DRAIN, drain},
    core::Core,
    events::{Events, answers, on_stream_of},
};
use crate::transport::probe_wire::Answered;

impl Core {
    /// One probe's `POST` and its answer (see the module docs).
    pub(super) async fn probe(
        &self,
        template: &Template,
        body: Bytes,
        id: &RequestId,
    ) -> Result<Answered, HttpError> {
        let session = self.session.id.get().is_some();
        let sent = Sent {
            request: Some((id, template.method)),
            session,
            max_message: self.rules.max_message,
            probe: true,
        };
        let result = self.exchange(&template.headers, body, &sent, None).await;
        let result = match session && self.rules.treat_400_as_expired {
            true => expire_on_400(Some(id), result),
            false => result,
        };
        let (answer, _) = result?;
        self.activity.bytes_arrived();
        match answer {
            Answer::Accepted => Ok(Answered::Result),
            Answer::Json(message) => Ok(self.answered(message, id).await),
            Answer::Events(response) => self.probe_stream(response, id).await,
        }
    }

    /// What an answer says; one that is not the probe's goes to rmcp's session.
    async fn answered(
        &self,
        message: rmcp::model::ServerJsonRpcMessage,
        id: &RequestId,
    ) -> Answered {
        self.activity.touch();
        if !answers(&message, id) {
            if let Some(message) = on_stream_of(message, id) {
                self.deliver(message).await;
            }
            return Answered::Result;
        }
        match message {
            JsonRpcMessage::Error(error) => Answered::Error(error.error),
            _ => Answered::Result,
        }
    }

    /// Reads the probe's event stream until its answer.
    async fn probe_stream(
        &self,
        response: reqwest::Response,
        id: &RequestId,
    ) -> Result<Answered, HttpError> {
        let h1 = response.version() < reqwest::Version::HTTP_2;
        let mut events = Events::new(response, self.rules.max_event, self.rules.max_line);
        loop {
            match events.next(&self.activity).await {
                Ok(Some(event)) if event.event != "message" || event.data.trim().is_empty() => {}
                Ok(Some(event)) => {
                    let message = match decode::probe_answer(event.data.as_bytes(), id) {
                        Ok(message) => message,
                        Err(e) => {
                            tracing::warn!(%id, "a message on a probe's event stream did not parse and was skipped: {e}");
                            continue;
                        }
                    };
                    if answers(&message, id) {
                        let answered = self.answered(message, id).await;
                        if h1 {
                            let _ = tokio::time::timeout(DRAIN, drain(&mut events, &self.activity))
                                .await;
                        }
                        return Ok(answered);
                    }
                    self.activity.touch();
                    if let Some(message) = on_stream_of(message, id) {
                        self.deliver(message).await;
                    }
                }
                Ok(None) => return Err(StreamableHttpError::UnexpectedEndOfStream),
                Err(broken) => return Err(self.broken(broken)),
            }
        }
    }
}
