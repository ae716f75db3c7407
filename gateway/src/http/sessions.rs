//! rmcp's in-memory session manager, with the gateway's hooks: the core learns which session
//! an `initialize` opens, and a session that closes (idle, `DELETE`, the end) leaves the hosts'
//! table, shuts its own upstreams down and gives its slot back.
//!
//! # Invariants
//!
//! 1. Every way a session ends goes through [`Sessions::close_session`] (rmcp calls it after a
//!    `DELETE` and when a session's worker ends, idle included), and closing twice does nothing
//!    more than closing once.
//! 2. A session this gateway no longer owns in the host-session store (another replica claimed
//!    it) is closed here before a request is served on it: the request then restores it from the
//!    store (`gateway/src/http/restore.rs`), as if it had never been here.
//! 3. A request's stream is resumable from any process that serves its session: its event ids
//!    carry this process and the request (`gateway/src/http/lost/mod.rs`), and a request asked for
//!    again whose stream is not here is answered as lost ("may have run"), never left to hang.
//! 4. A session being restored is not here until the replayed `notifications/initialized` has
//!    been handed to it: rmcp puts a restored session in its table before it sends it the
//!    replayed `initialize`, and a request that found it there in between would reach its worker
//!    first and end it ("unexpected message", seen under a fleet's kills). Not here, such a
//!    request waits for the restore in progress, as rmcp has every other request do.

use std::{
    collections::HashSet,
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use futures::{Stream, StreamExt};
use rmcp::{
    model::{ClientJsonRpcMessage, ClientNotification, ServerJsonRpcMessage},
    transport::streamable_http_server::session::{
        EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
        local::{LocalSessionManager, LocalSessionManagerError},
    },
};

use super::{
    admit::Admission,
    hub::Hosts,
    lost::{self, Tag},
};
use crate::state::HostStore;

/// How long a host waits before it asks again for a stream that broke (SSE `retry:`, sent first
/// on every stream): a request whose gateway process died is answered as lost that long after
/// the break (invariant 3). rmcp's default is 3 s.
pub(in crate::http) const RESUME_AFTER: Duration = Duration::from_secs(1);

/// The id of the session an `initialize` opens, carried in that request's extensions.
#[derive(Debug, Clone)]
pub(in crate::http) struct SessionKey(pub(in crate::http) String);

/// The gateway's session manager.
#[derive(Debug)]
pub(in crate::http) struct Sessions {
    inner: LocalSessionManager,
    hosts: Arc<Hosts>,
    admission: Admission,
    store: Arc<dyn HostStore>,
    /// Sessions restored here whose replayed `initialized` has not been handed to them yet
    /// (invariant 4): added by `restore_session`, taken out by that notification or the close.
    restoring: Mutex<HashSet<SessionId>>,
}

impl Sessions {
    /// Sessions closed after `idle` without a request, whose state `store` keeps.
    pub(in crate::http) fn new(
        hosts: Arc<Hosts>,
        admission: Admission,
        idle: Duration,
        store: Arc<dyn HostStore>,
    ) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle);
        inner.session_config.sse_retry = Some(RESUME_AFTER);
        Self {
            inner,
            hosts,
            admission,
            store,
            restoring: Mutex::default(),
        }
    }

    fn restoring(&self) -> std::sync::MutexGuard<'_, HashSet<SessionId>> {
        self.restoring
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Whether `message` is a `notifications/initialized`: to a session being restored, the one
/// rmcp replays (its host sent its own long ago, to the replica that made the session).
fn initialized(message: &ClientJsonRpcMessage) -> bool {
    matches!(
        message,
        ClientJsonRpcMessage::Notification(n)
            if matches!(n.notification, ClientNotification::InitializedNotification(_))
    )
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
        let answered = self.inner.initialize_session(id, message).await;
        if answered.is_err() {
            // A restore that failed here ends with its session: nothing to wait for.
            self.restoring().remove(id);
        }
        answered
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        if self.restoring().contains(id) {
            // Invariant 4: being restored; the request waits for it.
            return Ok(false);
        }
        let here = self.inner.has_session(id).await?;
        if here && !self.store.holds(id) {
            // Invariant 2: claimed by another replica; let it go, and restore it.
            tracing::info!("a host session claimed by another replica is let go here");
            self.close_session(id).await?;
            return Ok(false);
        }
        Ok(here)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.restoring().remove(id);
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
        // Invariant 3: the stream's event ids name this process and the request they answer.
        let tag = Tag::of(&message);
        let stream = self.inner.create_stream(id, message).await?;
        Ok(stream.map(move |event| lost::tagged(event, tag.as_deref())))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        let replayed = initialized(&message);
        let accepted = self.inner.accept_message(id, message).await;
        if replayed {
            // Invariant 4: requests from now on reach the worker after it.
            self.restoring().remove(id);
        }
        accepted
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
        let (rmcp_id, tag) = Tag::split(&last_event_id);
        let Some(tag) = tag else {
            // Not a request's stream of ours (the standalone stream, or no tag): rmcp's.
            let stream = self.inner.resume(id, last_event_id.clone()).await?;
            return Ok(stream.left_stream().left_stream());
        };
        if tag.here() {
            match self.inner.resume(id, rmcp_id.to_owned()).await {
                Ok(stream) => {
                    let again = last_event_id.rsplit_once('~').map(|(_, t)| t.to_owned());
                    let stream = stream.map(move |event| lost::tagged(event, again.as_deref()));
                    return Ok(stream.right_stream().left_stream());
                }
                Err(error) => {
                    tracing::info!(%error, "a request's stream asked for again is gone; answered as lost")
                }
            }
        } else {
            tracing::info!(
                "a request begun by another gateway process is asked for; answered as lost"
            );
        }
        Ok(futures::stream::iter([tag.answer()]).right_stream())
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        let outcome = self.inner.restore_session(id.clone()).await?;
        if matches!(outcome, RestoreOutcome::Restored(_)) {
            self.restoring().insert(id);
        }
        Ok(outcome)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::InitializedNotification;

    use super::*;
    use crate::{Mode, http::FrontLimits, state::MemoryHostStore};

    fn sessions() -> Sessions {
        Sessions::new(
            Arc::new(Hosts::new(Mode::Transparent)),
            Admission::new(FrontLimits::default()),
            Duration::from_secs(60),
            Arc::new(MemoryHostStore::new()),
        )
    }

    fn initialized() -> ClientJsonRpcMessage {
        ClientJsonRpcMessage::notification(ClientNotification::InitializedNotification(
            InitializedNotification::default(),
        ))
    }

    #[tokio::test]
    async fn a_session_being_restored_is_not_here_until_its_replayed_initialized_is_handed_over() {
        let sessions = sessions();
        let id: SessionId = "restored".into();
        let outcome = sessions
            .restore_session(id.clone())
            .await
            .expect("restored");
        assert!(matches!(outcome, RestoreOutcome::Restored(_)));
        assert!(
            !sessions.has_session(&id).await.expect("asked"),
            "a request would reach the session's worker before its initialize"
        );
        // Anything else handed to it is not the replay.
        let ping = ClientJsonRpcMessage::notification(
            ClientNotification::RootsListChangedNotification(Default::default()),
        );
        let _ = sessions.accept_message(&id, ping).await;
        assert!(!sessions.has_session(&id).await.expect("asked"));
        let _ = sessions.accept_message(&id, initialized()).await;
        assert!(sessions.has_session(&id).await.expect("asked"));
    }

    #[tokio::test]
    async fn a_restored_session_closed_before_its_replay_leaves_nothing_waiting() {
        let sessions = sessions();
        let id: SessionId = "closed".into();
        let _outcome = sessions
            .restore_session(id.clone())
            .await
            .expect("restored");
        sessions.close_session(&id).await.expect("closed");
        assert!(sessions.restoring().is_empty());
        assert!(!sessions.has_session(&id).await.expect("asked"));
    }
}
