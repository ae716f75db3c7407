//! The lean link's handshake: `initialize` (a 2025 session), `server/discover` (a 2026-07-28
//! session), or under `protocol: auto` `server/discover` first, as rmcp's lifecycles do them.
//!
//! `server/discover` negotiates as rmcp's `discover_startup` does: the first preferred version
//! is offered; a `-32022` naming versions we prefer offers the next of them (the same one once
//! more at most); a discover result picks the first preferred version the server supports, or
//! fails with `NoCompatibleProtocolVersion`. The session is then open: the server's answer is its
//! peer info, and every later request carries the version, the client and its capabilities in
//! its `_meta` (see [`Link::start`]).
//!
//! Every way a server of 2025-11-25 or earlier refuses `server/discover` is read as rmcp's
//! `DiscoverRefusals` reads it ([`crate::transport::refusal`]): the discover request is the
//! link's probe until its answer came, so an error for another id, a result that is not a
//! discover result, or `-32022` naming initialize-era versions only is its answer, a `-32601`.
//! Pinned to 2026-07-28, that is the handshake's error. Under `auto` the link falls back to
//! `initialize` on the same transport, as rmcp does (after 10 s without an answer too; a late
//! answer is then a stray, dropped).

use std::{sync::Arc, time::Duration};

use rmcp::{
    ServiceError,
    model::{
        ClientRequest, DiscoverRequest, DiscoverRequestParams, DiscoverResult, ErrorCode,
        ErrorData, InitializeRequest, InitializeRequestParams, ProtocolVersion, RequestMetaObject,
        ServerPeerInfo, ServerResult,
    },
    service::ClientInitializeError,
};

use super::{Link, Outgoing};

/// How long `auto` waits for the answer to `server/discover` before it falls back (rmcp's).
const AUTO_DISCOVER_WAIT: Duration = Duration::from_secs(10);

/// What every request of a 2026-07-28 session carries in its `_meta`, as rmcp's session stamps
/// it once `server/discover` chose the version: the version, the client and its capabilities.
#[derive(Debug)]
pub(super) struct Stamp {
    pub(super) version: ProtocolVersion,
    pub(super) client: rmcp::model::Implementation,
    pub(super) capabilities: rmcp::model::ClientCapabilities,
}

impl Stamp {
    pub(super) fn on(&self, meta: &mut RequestMetaObject) {
        meta.set_protocol_version(self.version.clone());
        meta.set_client_info(self.client.clone());
        meta.set_client_capabilities(self.capabilities.clone());
    }
}

/// What `server/discover` said.
enum Discovered {
    /// A 2026-07-28 session is open on the link.
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

    /// `protocol: 2026-07-28`: `server/discover`, offering `preferred` (see the module docs); a
    /// server of an earlier era is an error.
    pub(crate) async fn open_discover(
        &self,
        params: &InitializeRequestParams,
        preferred: &[ProtocolVersion],
    ) -> Result<(), ClientInitializeError> {
        let discovered = self.discover(params, preferred).await;
        self.inbound.expect_discover(None);
        match discovered? {
            Discovered::Modern => Ok(()),
            Discovered::Legacy(error) => Err(*error),
        }
    }

    /// `protocol: auto`: `server/discover`, then `initialize` if the server is of an earlier
    /// era (see the module docs). `legacy` is the version `initialize` offers.
    pub(crate) async fn open_auto(
        &self,
        mut params: InitializeRequestParams,
        preferred: &[ProtocolVersion],
        legacy: ProtocolVersion,
    ) -> Result<(), ClientInitializeError> {
        let discovered =
            tokio::time::timeout(AUTO_DISCOVER_WAIT, self.discover(&params, preferred)).await;
        self.inbound.expect_discover(None);
        params.protocol_version = legacy;
        match discovered {
            Ok(Ok(Discovered::Modern)) => Ok(()),
            Ok(Ok(Discovered::Legacy(discover))) => match self.initialize(params).await {
                Ok(()) => Ok(()),
                Err(fallback) => Err(ClientInitializeError::LegacyFallbackFailed {
                    discover,
                    fallback: Box::new(fallback),
                }),
            },
            Ok(Err(error)) => Err(error),
            Err(_) => self.initialize(params).await,
        }
    }

    /// Whether the initialize handshake was reached (for naming what failed).
    pub(crate) fn fell_back(&self) -> bool {
        self.info.get().is_some() || self.inbound.fell_back()
    }

    /// `server/discover` until the server chose a version or refused (see the module docs).
    async fn discover(
        &self,
        params: &InitializeRequestParams,
        preferred: &[ProtocolVersion],
    ) -> Result<Discovered, ClientInitializeError> {
        let Some(mut offered) = preferred.first().cloned() else {
            return Err(ClientInitializeError::NoPreferredProtocolVersion);
        };
        let mut asked = Vec::new();
        loop {
            asked.push(offered.clone());
            let meta = RequestMetaObject::with_client_context(
                offered.clone(),
                params.client_info.clone(),
                params.capabilities.clone(),
            );
            let mut discover = DiscoverRequest::new(DiscoverRequestParams {});
            discover.extensions.insert(meta);
            let outgoing = self.bare(ClientRequest::DiscoverRequest(discover));
            self.inbound.expect_discover(Some(outgoing.id.clone()));
            match outgoing.answer().await {
                Ok(ServerResult::DiscoverResult(result)) => {
                    let opened = self.opened(params, preferred, result);
                    return opened.map(|()| Discovered::Modern).map_err(|e| *e);
                }
                Ok(other) => return Err(ClientInitializeError::ExpectedInitResult(Some(other))),
                Err(ServiceError::McpError(error))
                    if error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION =>
                {
                    offered = again(preferred, &asked, &offered, &error).map_err(|e| *e)?;
                }
                Err(ServiceError::McpError(error))
                    if !matches!(
                        error.code,
                        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY | ErrorCode::HEADER_MISMATCH
                    ) =>
                {
                    let refused = ClientInitializeError::JsonRpcError(error);
                    return Ok(Discovered::Legacy(Box::new(refused)));
                }
                Err(error) => return Err(failed(error, "discover")),
            }
        }
    }

    /// The server's discover result: the version both speak, the server's peer info, and the
    /// stamp on every later request.
    fn opened(
        &self,
        params: &InitializeRequestParams,
        preferred: &[ProtocolVersion],
        result: DiscoverResult,
    ) -> Result<(), Box<ClientInitializeError>> {
        let Some(version) = preferred
            .iter()
            .find(|v| result.supported_versions.contains(v))
            .cloned()
        else {
            return Err(Box::new(
                ClientInitializeError::NoCompatibleProtocolVersion {
                    client_supported: preferred.to_vec(),
                    server_supported: result.supported_versions,
                },
            ));
        };
        let info = ServerPeerInfo::from_discover_result(version.clone(), result);
        let _ = self.info.set(Arc::new(info));
        let _ = self.modern.set(Stamp {
            version,
            client: params.client_info.clone(),
            capabilities: params.capabilities.clone(),
        });
        self.inbound.go_modern();
        Ok(())
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

/// The version to offer after the server refused `offered` with `-32022` (`error`), as rmcp
/// picks it: the first preferred one the server names that was not asked yet, or `offered` once
/// more if it was asked once; none is `NoCompatibleProtocolVersion`.
fn again(
    preferred: &[ProtocolVersion],
    asked: &[ProtocolVersion],
    offered: &ProtocolVersion,
    error: &ErrorData,
) -> Result<ProtocolVersion, Box<ClientInitializeError>> {
    let supported: Vec<ProtocolVersion> = error
        .data
        .as_ref()
        .and_then(|data| data.get("supported"))
        .cloned()
        .and_then(|value| serde_json::from_value(value).ok())
        .unwrap_or_default();
    let once = asked.iter().filter(|v| *v == offered).count() == 1;
    preferred
        .iter()
        .find(|v| supported.contains(v) && (!asked.contains(v) || (once && *v == offered)))
        .cloned()
        .ok_or_else(|| {
            Box::new(ClientInitializeError::NoCompatibleProtocolVersion {
                client_supported: preferred.to_vec(),
                server_supported: supported,
            })
        })
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
