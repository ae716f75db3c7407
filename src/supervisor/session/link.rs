//! [`Link`]: the one way the supervisor talks to a generation's server, whichever client
//! session runs it — rmcp's (stdio, legacy SSE, and Streamable HTTP with the lean link switched
//! off) or the lean link of a Streamable HTTP session of either era
//! ([`crate::transport::http::link`]). Both speak rmcp's model types and fail with rmcp's
//! [`ServiceError`], so everything above reads them alike; a 2026-07-28 listen stream is
//! either's ([`Listening`]).

use std::sync::Arc;

use rmcp::{
    Peer, RoleClient, ServiceError,
    model::{
        ClientNotification, ClientRequest, ListToolsRequest, ListToolsResult,
        PaginatedRequestParams, ProgressToken, RequestId, ServerNotification, ServerPeerInfo,
        ServerResult, SubscriptionFilter,
    },
    service::{PeerRequestOptions, RequestHandle, Subscription, SubscriptionEnd},
};

use crate::transport::http::link as lean;

/// A generation's client session, as the supervisor uses it (cheap to clone).
#[derive(Debug, Clone)]
pub(in crate::supervisor) enum Link {
    /// rmcp's session.
    Rmcp(Peer<RoleClient>),
    /// The lean link.
    Lean(Arc<lean::Link>),
}

/// A request sent (rmcp) or about to be (lean), and then its answer.
// `allow`, not `expect`: whether the variants differ enough depends on the features rmcp is
// built with (large with `rig`'s, not with the default ones).
#[allow(
    clippy::large_enum_variant,
    reason = "one lives in one call's future, and the lean request moves into its send at once; \
              boxing it would cost every call an allocation"
)]
pub(in crate::supervisor) enum Outgoing<'a> {
    Rmcp(RequestHandle<RoleClient>),
    Lean(lean::Outgoing<'a>),
}

impl Link {
    /// What the server said of itself in the handshake.
    pub(in crate::supervisor) fn peer_info(&self) -> Option<Arc<ServerPeerInfo>> {
        match self {
            Link::Rmcp(peer) => peer.peer_info(),
            Link::Lean(link) => link.peer_info(),
        }
    }

    /// True once the session's transport ended.
    pub(in crate::supervisor) fn is_transport_closed(&self) -> bool {
        match self {
            Link::Rmcp(peer) => peer.is_transport_closed(),
            Link::Lean(link) => link.is_closed(),
        }
    }

    /// Opens a 2026-07-28 listen stream for `filter`, once the server acknowledged it.
    pub(in crate::supervisor) async fn listen(
        &self,
        filter: SubscriptionFilter,
    ) -> Result<Listening, ServiceError> {
        match self {
            Link::Rmcp(peer) => peer
                .listen(filter)
                .await
                .map(|s| Listening::Rmcp(Box::new(s))),
            Link::Lean(link) => link.listen(filter).await.map(Listening::Lean),
        }
    }

    /// Sends `request` and waits for its answer.
    pub(in crate::supervisor) async fn send_request(
        &self,
        request: ClientRequest,
    ) -> Result<ServerResult, ServiceError> {
        match self {
            Link::Rmcp(peer) => peer.send_request(request).await,
            Link::Lean(link) => link.request(request).await,
        }
    }

    /// Sends `notification`.
    pub(in crate::supervisor) async fn send_notification(
        &self,
        notification: ClientNotification,
    ) -> Result<(), ServiceError> {
        match self {
            Link::Rmcp(peer) => peer.send_notification(notification).await,
            Link::Lean(link) => link.notify(notification).await,
        }
    }

    /// One page of `tools/list`.
    pub(in crate::supervisor) async fn list_tools(
        &self,
        params: Option<PaginatedRequestParams>,
    ) -> Result<ListToolsResult, ServiceError> {
        match self {
            Link::Rmcp(peer) => peer.list_tools(params).await,
            Link::Lean(link) => {
                let request = ListToolsRequest {
                    params,
                    ..Default::default()
                };
                match link
                    .request(ClientRequest::ListToolsRequest(request))
                    .await?
                {
                    ServerResult::ListToolsResult(result) => Ok(result),
                    _ => Err(ServiceError::UnexpectedResponse),
                }
            }
        }
    }

    /// Starts `request`: rmcp's session sends it now; the lean link numbers it and sends it
    /// when its answer is awaited.
    pub(in crate::supervisor) async fn start(
        &self,
        request: ClientRequest,
    ) -> Result<Outgoing<'_>, ServiceError> {
        match self {
            Link::Rmcp(peer) => peer
                .send_request_with_option(request, PeerRequestOptions::no_options())
                .await
                .map(Outgoing::Rmcp),
            Link::Lean(link) => Ok(Outgoing::Lean(link.start(request))),
        }
    }
}

impl Outgoing<'_> {
    /// The request's id.
    pub(in crate::supervisor) fn id(&self) -> &RequestId {
        match self {
            Outgoing::Rmcp(handle) => &handle.id,
            Outgoing::Lean(outgoing) => outgoing.id(),
        }
    }

    /// The progress token the request carries.
    pub(in crate::supervisor) fn progress_token(&self) -> ProgressToken {
        match self {
            Outgoing::Rmcp(handle) => handle.progress_token.clone(),
            Outgoing::Lean(outgoing) => outgoing.progress_token(),
        }
    }

    /// Waits for the answer (the lean link sends the request first).
    pub(in crate::supervisor) async fn answer(self) -> Result<ServerResult, ServiceError> {
        match self {
            Outgoing::Rmcp(handle) => handle.await_response().await,
            Outgoing::Lean(outgoing) => outgoing.answer().await,
        }
    }
}

/// A 2026-07-28 listen stream: rmcp's subscription, or the lean link's.
#[derive(Debug)]
pub(in crate::supervisor) enum Listening {
    /// Boxed: the lean one, the default, is what an idle generation holds.
    Rmcp(Box<Subscription>),
    Lean(lean::listen::Subscription),
}

impl Listening {
    /// The next notification, or `None` once the stream ended (how: [`Self::end`]).
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe, both: what was read stays for the next call.
    pub(in crate::supervisor) async fn next(
        &mut self,
    ) -> Result<Option<ServerNotification>, ServiceError> {
        match self {
            Listening::Rmcp(subscription) => subscription.next().await,
            Listening::Lean(subscription) => subscription.next().await,
        }
    }

    /// How the stream ended, once it did.
    pub(in crate::supervisor) fn end(&self) -> Option<&SubscriptionEnd> {
        match self {
            Listening::Rmcp(subscription) => subscription.end(),
            Listening::Lean(subscription) => subscription.end(),
        }
    }

    /// Ends the stream (rmcp sends `notifications/cancelled`; the lean link drops its `POST`,
    /// which is how 2026-07-28 cancels a request).
    pub(in crate::supervisor) async fn cancel(&mut self) {
        match self {
            Listening::Rmcp(subscription) => {
                let _ = subscription.cancel().await;
            }
            Listening::Lean(subscription) => subscription.cancel(),
        }
    }
}
