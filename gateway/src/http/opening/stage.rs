//! One request's opening: whether its response's head and first event are out, asked for by
//! whoever is about to wait and marked out by the response's body (invariant 1 of the module).

use std::{sync::Arc, time::Duration};

use axum::http::request::Parts;
use rmcp::{RoleServer, service::RequestContext};
use tokio::sync::watch;

/// How long a call waits for its response's head to be out before it runs anyway.
pub(in crate::http) const OUT_LIMIT: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Stage {
    /// rmcp has the request; nothing asked for the head yet.
    Waiting,
    /// Asked: the head and the first event go out now.
    Asked,
    /// They were handed to the socket, or the host is gone.
    Out,
}

/// One request's opening: asked for by whoever is about to wait, done by the response's body.
#[derive(Debug)]
pub(in crate::http) struct Opening {
    pub(super) stage: watch::Sender<Stage>,
}

impl Opening {
    pub(super) fn new() -> Arc<Self> {
        Arc::new(Self {
            stage: watch::Sender::new(Stage::Waiting),
        })
    }

    /// Asks for the head and the first event to go out now (nothing more once asked).
    pub(in crate::http) fn ask(&self) {
        self.stage.send_if_modified(|stage| match *stage {
            Stage::Waiting => {
                *stage = Stage::Asked;
                true
            }
            _ => false,
        });
    }

    /// Asks, then waits until the head and the first event are out (invariant 1), at most
    /// [`OUT_LIMIT`].
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: it only asks and waits.
    pub(in crate::http) async fn open(&self) {
        self.ask();
        let mut stage = self.stage.subscribe();
        let out = stage.wait_for(|stage| *stage == Stage::Out);
        if tokio::time::timeout(OUT_LIMIT, out).await.is_err() {
            tracing::debug!("a call's response head was not out in time; the call runs anyway");
        }
    }

    pub(super) async fn asked(&self) {
        let mut stage = self.stage.subscribe();
        let _ = stage.wait_for(|stage| *stage >= Stage::Asked).await;
    }

    pub(super) fn out(&self) {
        self.stage.send_if_modified(|stage| match *stage {
            Stage::Out => false,
            _ => {
                *stage = Stage::Out;
                true
            }
        });
    }

    /// The opening of the request `context` answers, if it has one (an HTTP host's).
    pub(in crate::http) fn of(context: &RequestContext<RoleServer>) -> Option<Arc<Opening>> {
        let parts = context.extensions.get::<Parts>()?;
        let OpeningOf(opening) = parts.extensions.get::<OpeningOf>()?;
        Some(opening.clone())
    }
}

/// A request's opening, in its extensions (rmcp hands them to the handler).
#[derive(Debug, Clone)]
pub(super) struct OpeningOf(pub(super) Arc<Opening>);

/// Marks the opening out when dropped: whoever waits for it stops waiting once the host is gone.
pub(super) struct Release(pub(super) Arc<Opening>);

impl Drop for Release {
    fn drop(&mut self) {
        self.0.out();
    }
}
