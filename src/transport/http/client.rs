//! [`HttpClient`]: rmcp's reqwest backend for one generation, with our policies on every request
//! (items 1-6 of the module docs of `transport::http`): a 400 on a session read as its expiry,
//! `retry:` hints clamped, the handshake's refusals recognised, the `DELETE` bounded, the token
//! supplied, the URL redacted from errors.

use std::{collections::HashMap, sync::Arc, time::Duration};

use futures::StreamExt;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::{
    model::{ClientJsonRpcMessage, ClientRequest, RequestId, ServerJsonRpcMessage},
    transport::{
        common::client_side_sse::BoxedSseResponse,
        streamable_http_client::{
            StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
            StreamableHttpResponseLimits,
        },
    },
};

use super::{
    HttpError, Standalone, delivery, discover, errors::redacted, own_answer, routing, status_of,
};
use crate::{auth::Authorizer, config::RemoteConfig, transport::Activity};

/// rmcp's reqwest backend, with session-expiry and `retry:` policy applied (see module docs).
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub struct HttpClient {
    pub(super) inner: reqwest::Client,
    pub(super) treat_400_as_expired: bool,
    pub(super) retry_min: Duration,
    pub(super) retry_max: Duration,
    /// The server's authorization, if configured: it supplies every request's token.
    pub(super) auth: Option<Arc<Authorizer>>,
    /// Told when `initialize` got a session id and when the standalone `GET` was answered.
    pub(super) standalone: Standalone,
    /// Whether the handshake is over (see [`discover`]).
    pub(super) opening: discover::Opening,
    /// Stamped when an answer's headers and each event of a stream arrive. Comment lines (SSE
    /// keep-alives) are not seen: rmcp's SSE parser drops them before yielding an event.
    pub(super) activity: Arc<Activity>,
}

type SseStream = BoxedSseResponse;

impl HttpClient {
    /// The client of one generation, on the shared `inner` client.
    pub(super) fn new(
        inner: reqwest::Client,
        config: &RemoteConfig,
        auth: Option<Arc<Authorizer>>,
        standalone: Standalone,
        activity: Arc<Activity>,
    ) -> Self {
        HttpClient {
            activity,
            inner,
            treat_400_as_expired: config.treat_400_as_expired,
            retry_min: config.sse_retry_min,
            retry_max: config.sse_retry_max,
            auth,
            standalone,
            opening: discover::Opening::default(),
        }
    }

    /// Clamps every `retry:` hint of `stream` to the configured bounds, and stamps each item's
    /// arrival on the generation's activity.
    fn clamp_retry(&self, stream: SseStream) -> SseStream {
        let (min, max) = (
            self.retry_min.as_millis() as u64,
            self.retry_max.as_millis() as u64,
        );
        let activity = self.activity.clone();
        stream
            .map(move |event| {
                activity.bytes_arrived();
                event.map(|mut sse| {
                    sse.retry = sse.retry.map(|ms| ms.clamp(min, max.max(min)));
                    sse
                })
            })
            .boxed()
    }

    /// Maps a 400 on a request that carried a session id to `SessionExpired`, as well as a
    /// JSON-RPC error that answers some other id (servers that say "no valid session" answer
    /// 400 with an error whose id is `null` or `"server-error"`: rmcp could not route it and
    /// the request would wait for its timeout).
    #[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
    pub fn expire_on_400(
        request_id: Option<RequestId>,
        result: Result<StreamableHttpPostResponse, HttpError>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        match result {
            Err(e) if status_of(&e) == Some(400) => Err(StreamableHttpError::SessionExpired),
            Ok(StreamableHttpPostResponse::Json(ServerJsonRpcMessage::Error(error), _))
                if request_id.is_some() && request_id != error.id =>
            {
                Err(StreamableHttpError::SessionExpired)
            }
            other => other,
        }
    }
}

impl StreamableHttpClient for HttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let expires = session_id.is_some() && self.treat_400_as_expired;
        let request_id = match &message {
            ClientJsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        let initialize = matches!(&message, ClientJsonRpcMessage::Request(r)
            if matches!(r.request, ClientRequest::InitializeRequest(_)));
        let mut custom_headers = custom_headers;
        routing::add_standard_headers(&message, &mut custom_headers);
        let result = self
            .authorized(|token| {
                self.inner.post_message_with_response_limits(
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    token.or_else(|| auth_header.clone()),
                    custom_headers.clone(),
                    limits,
                )
            })
            .await;
        if result.is_ok() {
            self.activity.bytes_arrived();
        }
        if let Some(id) = &request_id {
            self.activity.ledger.sent(id, delivery::of(&result));
        }
        let result = redacted(result);
        let result = match expires {
            true => Self::expire_on_400(request_id.clone(), result),
            false => result,
        };
        let result = self.opening.read(&message, session_id.is_some(), result);
        if initialize
            && matches!(
                &result,
                Ok(StreamableHttpPostResponse::Json(_, Some(_))
                    | StreamableHttpPostResponse::Sse(_, Some(_)))
            )
        {
            self.standalone.expect();
        }
        match result {
            Ok(StreamableHttpPostResponse::Sse(stream, id)) => {
                let stream = match request_id {
                    Some(request) => own_answer::only_own_answers(stream, request),
                    None => stream,
                };
                Ok(StreamableHttpPostResponse::Sse(
                    self.clamp_retry(stream),
                    id,
                ))
            }
            other => other,
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        self.delete_bounded(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<SseStream, HttpError> {
        let stream = self
            .authorized(|token| {
                self.inner.get_stream(
                    uri.clone(),
                    session_id.clone(),
                    last_event_id.clone(),
                    token.or_else(|| auth_header.clone()),
                    custom_headers.clone(),
                )
            })
            .await;
        if last_event_id.is_none() {
            self.standalone.answered();
        }
        Ok(self.clamp_retry(redacted(stream)?))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseStream, HttpError> {
        let stream = self
            .authorized(|token| {
                self.inner.get_stream_with_max_sse_event_size(
                    uri.clone(),
                    session_id.clone(),
                    last_event_id.clone(),
                    token.or_else(|| auth_header.clone()),
                    custom_headers.clone(),
                    max_sse_event_size,
                )
            })
            .await;
        if last_event_id.is_none() {
            self.standalone.answered();
        }
        Ok(self.clamp_retry(redacted(stream)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_400_or_an_unroutable_error_on_a_session_means_expiry() {
        let id = Some(RequestId::Number(7));
        let bad = Err(StreamableHttpError::UnexpectedServerResponse(
            "HTTP 400 Bad Request: x".into(),
        ));
        assert!(matches!(
            HttpClient::expire_on_400(id.clone(), bad),
            Err(StreamableHttpError::SessionExpired)
        ));
        let stray = ServerJsonRpcMessage::error(
            rmcp::model::ErrorData::invalid_request("no session", None),
            None,
        );
        let stray = Ok(StreamableHttpPostResponse::Json(stray, None));
        assert!(matches!(
            HttpClient::expire_on_400(id.clone(), stray),
            Err(StreamableHttpError::SessionExpired)
        ));
        let answer = ServerJsonRpcMessage::error(
            rmcp::model::ErrorData::invalid_request("no", None),
            id.clone(),
        );
        let answer = Ok(StreamableHttpPostResponse::Json(answer, None));
        assert!(HttpClient::expire_on_400(id, answer).is_ok());
    }
}
