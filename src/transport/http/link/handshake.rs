//! The lean link's handshake: `initialize` (a 2025 session), or `protocol: auto`'s
//! `server/discover` first, as rmcp's `Auto` lifecycle does it.
//!
//! Under `auto`, every way a server of 2025-11-25 or earlier refuses `server/discover` is read
//! as rmcp's `DiscoverRefusals` reads it ([`crate::transport::refusal`]): the discover request
//! is the link's probe until its answer came, so an error for another id, a result that is not
//! a discover result, or `-32022` naming initialize-era versions only is its answer, a `-32601`.
//! Then the link falls back to `initialize` on the same transport, as rmcp does (after 10 s
//! without an answer too; a late answer is then a stray, dropped). A server that answers with a
//! discover result, or negotiates the version (`-32022` naming 2026-07-28), speaks 2026-07-28:
//! the link says so ([`Opened::Modern`]) and the attempt opens rmcp's session instead, which
//! this link does not replace.

use std::{sync::Arc, time::Duration};

use rmcp::{
    ServiceError,
    model::{
        ClientRequest, DiscoverRequest, DiscoverRequestParams, ErrorCode, InitializeRequest,
        InitializeRequestParams, ProtocolVersion, RequestMetaObject, ServerResult,
    },
    service::ClientInitializeError,
};

use super::{Link, Outgoing};

/// How long `auto` waits for the answer to `server/discover` before it falls back (rmcp's).
const AUTO_DISCOVER_WAIT: Duration = Duration::from_secs(10);

/// How a lean handshake ended well.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Opened {
    /// A 2025 session is open on the link.
    Session,
    /// The server speaks 2026-07-28: rmcp's session must open it.
    Modern,
}

/// What `server/discover` said.
enum Discovered {
    Modern,
    /// A correlated refusal: a server of an earlier era (with its words).
    Legacy(Box<ClientInitializeError>),
}

impl Link {
    /// The `initialize` handshake of a 2025 session: the request, then
    /// `notifications/initialized` (which opens the standalone stream).
    pub(crate) async fn initialize(
        &self,
        params: InitializeRequestParams,
    ) -> Result<(), ClientInitializeError> {
        // Like rmcp's, the handshake's requests carry no progress token.
        let request = ClientRequest::InitializeRequest(InitializeRequest::new(params));
        let result = match self.bare(request).answer().await {
            Ok(ServerResult::InitializeResult(result)) => result,
            Ok(other) => return Err(ClientInitializeError::ExpectedInitResult(Some(other))),
            Err(error) => return Err(failed(error, "initialize")),
        };
        let _ = self.info.set(Arc::new(result.into()));
        self.initialized().await
    }

    /// `protocol: auto`: `server/discover`, then `initialize` if the server is of an earlier
    /// era (see the module docs). `legacy` is the version `initialize` offers.
    pub(crate) async fn open_auto(
        &self,
        mut params: InitializeRequestParams,
        legacy: ProtocolVersion,
    ) -> Result<Opened, ClientInitializeError> {
        let discovered = tokio::time::timeout(AUTO_DISCOVER_WAIT, self.discover(&params)).await;
        self.inbound.expect_discover(None);
        params.protocol_version = legacy;
        match discovered {
            Ok(Ok(Discovered::Modern)) => Ok(Opened::Modern),
            Ok(Ok(Discovered::Legacy(discover))) => match self.initialize(params).await {
                Ok(()) => Ok(Opened::Session),
                Err(fallback) => Err(ClientInitializeError::LegacyFallbackFailed {
                    discover,
                    fallback: Box::new(fallback),
                }),
            },
            Ok(Err(error)) => Err(error),
            Err(_) => self.initialize(params).await.map(|()| Opened::Session),
        }
    }

    /// Whether the initialize handshake was reached (for naming what failed).
    pub(crate) fn fell_back(&self) -> bool {
        self.info.get().is_some() || self.inbound.fell_back()
    }

    async fn discover(
        &self,
        params: &InitializeRequestParams,
    ) -> Result<Discovered, ClientInitializeError> {
        let meta = RequestMetaObject::with_client_context(
            ProtocolVersion::V_2026_07_28,
            params.client_info.clone(),
            params.capabilities.clone(),
        );
        let mut discover = DiscoverRequest::new(DiscoverRequestParams {});
        discover.extensions.insert(meta);
        let outgoing = self.bare(ClientRequest::DiscoverRequest(discover));
        self.inbound.expect_discover(Some(outgoing.id.clone()));
        match outgoing.answer().await {
            Ok(ServerResult::DiscoverResult(_)) => Ok(Discovered::Modern),
            Ok(other) => Err(ClientInitializeError::ExpectedInitResult(Some(other))),
            // The server negotiates the version: rmcp's session does that.
            Err(ServiceError::McpError(error))
                if error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION =>
            {
                Ok(Discovered::Modern)
            }
            Err(ServiceError::McpError(error))
                if !matches!(
                    error.code,
                    ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY | ErrorCode::HEADER_MISMATCH
                ) =>
            {
                Ok(Discovered::Legacy(Box::new(
                    ClientInitializeError::JsonRpcError(error),
                )))
            }
            Err(error) => Err(failed(error, "discover")),
        }
    }

    async fn initialized(&self) -> Result<(), ClientInitializeError> {
        use rmcp::model::{ClientJsonRpcMessage, ClientNotification, InitializedNotification};
        let initialized =
            ClientNotification::InitializedNotification(InitializedNotification::default());
        let message = ClientJsonRpcMessage::notification(initialized);
        let _writing = super::Writing::new(&self.core);
        self.core.clone().send(message).await.map_err(|error| {
            ClientInitializeError::TransportError {
                error: super::dynamic(error),
                context: "send initialized notification".into(),
            }
        })
    }

    /// A handshake's request: numbered, without a progress token.
    fn bare(&self, request: ClientRequest) -> Outgoing<'_> {
        Outgoing {
            link: self,
            id: self.next_id(),
            request,
        }
    }
}

/// A handshake request's failure, in the shape rmcp gives it (`what`: `initialize` or
/// `discover`).
fn failed(error: ServiceError, what: &'static str) -> ClientInitializeError {
    match error {
        ServiceError::McpError(error) => ClientInitializeError::JsonRpcError(error),
        ServiceError::TransportSend(error) => ClientInitializeError::TransportError {
            error,
            context: match what {
                "initialize" => "send initialize request".into(),
                _ => "send discover request".into(),
            },
        },
        _ => ClientInitializeError::ConnectionClosed(format!("{what} response")),
    }
}
