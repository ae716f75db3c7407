//! Transports: how one generation reaches its server.
//!
//! Each transport opens a fresh connection (a child process, an SSE stream, an HTTP session)
//! and hands rmcp a [`Transport`] wrapped in [`Observed`], which stamps the time of every message
//! received — the heartbeat measures idleness from there. What a transport knows about *why* it
//! ended (an exit status, an HTTP 404) goes into the generation's [`DeathSlot`].

pub(crate) mod detect;
pub(crate) mod http;
pub(crate) mod sse;
pub(crate) mod stdio;

use std::{
    sync::{
        Arc, OnceLock,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use rmcp::{
    RoleClient,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use tokio::time::Instant;

use crate::state::Death;

/// When the last message arrived on a generation's transport.
#[derive(Debug)]
pub(crate) struct Activity {
    base: Instant,
    /// Milliseconds from `base` to the last message received; written by the transport only.
    last_rx_ms: AtomicU64,
}

impl Activity {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Activity {
            base: Instant::now(),
            last_rx_ms: AtomicU64::new(0),
        })
    }

    /// Records that a message arrived now.
    pub(crate) fn touch(&self) {
        let ms = self.base.elapsed().as_millis() as u64;
        self.last_rx_ms.fetch_max(ms, Ordering::Relaxed);
    }

    /// How long since the last message (or since the generation began).
    pub(crate) fn idle(&self) -> Duration {
        let since_base = self.base.elapsed();
        since_base.saturating_sub(Duration::from_millis(
            self.last_rx_ms.load(Ordering::Relaxed),
        ))
    }
}

/// The first fatal condition a transport observed; later ones are ignored.
pub(crate) type DeathSlot = Arc<OnceLock<Death>>;

/// A transport that stamps [`Activity`] on every received message.
pub(crate) struct Observed<T> {
    inner: T,
    activity: Arc<Activity>,
}

impl<T> Observed<T> {
    pub(crate) fn new(inner: T, activity: Arc<Activity>) -> Self {
        Observed { inner, activity }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Observed<T> {
    type Error = T::Error;

    /// The wrapped transport's short type name (rmcp prints it in every transport error).
    fn name() -> std::borrow::Cow<'static, str> {
        let full = T::name();
        let head = full.split('<').next().unwrap_or(&full);
        head.rsplit("::").next().unwrap_or(head).to_owned().into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    /// # Cancel safety
    ///
    /// As cancel-safe as the wrapped transport's `receive`: the stamp happens after a message
    /// has been taken, in the same poll.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await;
        if message.is_some() {
            self.activity.touch();
        }
        message
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// What a generation must release when it ends, beyond the rmcp session itself.
#[derive(Debug)]
pub(crate) enum Guard {
    /// The child process (and its process group).
    Stdio(Box<stdio::ChildGuard>),
    /// Nothing beyond the session (remote transports end with their session task).
    Nothing,
}

impl Guard {
    /// The exit status, if the process already ended or ends within `within`.
    pub(crate) async fn exit_detail(&mut self, within: Duration) -> Option<String> {
        match self {
            Guard::Stdio(child) => child.exit_detail(within).await,
            Guard::Nothing => None,
        }
    }

    /// Releases everything; for stdio, returns once the whole process group is gone and reaped.
    pub(crate) async fn dispose(self) {
        match self {
            Guard::Stdio(child) => child.dispose().await,
            Guard::Nothing => {}
        }
    }
}
