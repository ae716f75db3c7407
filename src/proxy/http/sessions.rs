//! rmcp's in-memory session manager, with the gateway's hooks: the core learns which session
//! an `initialize` opens, and a session that closes (idle, `DELETE`, the end) leaves the hosts'
//! table, shuts its own upstreams down and gives its slot back.
//!
//! # Invariants
//!
//! 1. Every way a session ends goes through [`Sessions::close_session`] (rmcp calls it after a
//!    `DELETE` and when a session's worker ends, idle included), and closing twice does nothing
//!    more than closing once.

use std::{sync::Arc, time::Duration};

use futures::Stream;
use rmcp::{
    model::{ClientJsonRpcMessage, ServerJsonRpcMessage},
    transport::streamable_http_server::session::{
        EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
        local::{LocalSessionManager, LocalSessionManagerError},
    },
};

use super::{admit::Admission, hub::Hosts};

/// The id of the session an `initialize` opens, carried in that request's extensions.
#[derive(Debug, Clone)]
pub(crate) struct SessionKey(pub(crate) String);

/// The gateway's session manager.
#[derive(Debug)]
pub(crate) struct Sessions {
    inner: LocalSessionManager,
    hosts: Arc<Hosts>,
    admission: Admission,
}

impl Sessions {
    /// Sessions closed after `idle` without a request.
    pub(crate) fn new(hosts: Arc<Hosts>, admission: Admission, idle: Duration) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle);
        Self {
            inner,
            hosts,
            admission,
        }
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.inner.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        mut message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        message.insert_extension(SessionKey(id.to_string()));
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let closed = self.inner.close_session(id).await;
        self.hosts.close(id);
        self.admission.closed(id);
        closed
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        _id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        Ok(RestoreOutcome::NotSupported)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}
