//! Closing on the supervisor's own initiative: `restart()` and `shutdown()`.

use super::Actor;
use crate::supervisor::actor::transition::Note;
use crate::{
    state::{Cause, ConnectionState, Death},
    transport::Stop,
};

impl Actor {
    /// Closes the current generation (restart, shutdown); true when the barrier confirmed it.
    /// `closing` is the status shown meanwhile (none: the caller published one), published
    /// before anything is closed: a generation being closed takes no calls, so it is never
    /// shown `ready`.
    async fn close_current(&mut self, closing: Option<ConnectionState>) -> bool {
        self.stability = None;
        self.stable = false;
        if let Some(running) = &self.running {
            // Reports about a generation we close ourselves are not deaths.
            self.guard.set_current(None);
            running.live.dead.cancel();
            if let Some(closing) = closing {
                self.transition(closing, None, Note::Plain);
            }
        }
        self.stop_sync().await;
        let Some(running) = self.running.take() else {
            return true;
        };
        let generation = running.live.generation;
        crate::telemetry::closed(&running.live.telemetry);
        let closed = running
            .close(Stop::Graceful, self.config.close_timeout)
            .await;
        self.lingering.push(closed.monitor);
        if !closed.confirmed {
            tracing::error!(server = %self.server(), %generation, "could not confirm generation {generation} closed within {:?}", self.config.close_timeout);
        }
        closed.confirmed
    }

    pub(super) async fn on_restart(&mut self) {
        self.stop_attempts().await;
        let connecting = ConnectionState::Connecting { attempt: 1 };
        if !self.close_current(Some(connecting)).await {
            let death = Death::new(Cause::ConnectFailed, "restart requested");
            return self.fail_closed(self.last_current, death);
        }
        // A close that was never confirmed may still have a process of this server alive: it
        // must be gone before anything new starts (never two children).
        if self.unconfirmed {
            if !self.await_lingering().await {
                let death = Death::new(
                    Cause::ConnectFailed,
                    "restart requested, but an earlier generation is still not confirmed closed",
                );
                return self.fail_closed(self.last_current, death);
            }
            self.unconfirmed = false;
        }
        tracing::info!(server = %self.server(), "restart requested");
        self.budget.refill();
        self.outage = None;
        self.begin_attempt();
    }

    pub(super) async fn on_shutdown(&mut self) {
        self.stopping = true;
        self.guard.close();
        if let Some(auth) = &self.context.auth {
            auth.close();
        }
        self.transition(ConnectionState::Stopping, self.last_current, Note::Plain);
        self.stop_attempts().await;
        self.close_current(None).await;
        self.unregister();
        self.registry.detach(self.server());
        self.permit = None;
        let _ = self.await_lingering().await;
        self.transition(ConnectionState::Stopped, self.last_current, Note::Plain);
    }

    /// Waits for every closed generation's and abandoned attempt's cleanup, at most
    /// `close_timeout` in all; what is still running then is aborted (its child, if any, is
    /// killed on drop). True when everything finished in time.
    async fn await_lingering(&mut self) -> bool {
        let deadline = crate::clock::deadline_in(self.config.close_timeout);
        let mut finished = true;
        for mut task in std::mem::take(&mut self.lingering) {
            if tokio::time::timeout_at(deadline, &mut task).await.is_err() {
                tracing::warn!(server = %self.server(), "session cleanup still running after {:?}; aborting it", self.config.close_timeout);
                finished = false;
                task.abort();
                let _ = task.await;
            }
        }
        finished
    }
}

impl Drop for Actor {
    /// The actor ends after publishing `stopped`; if it ended otherwise (a panic), say so, so
    /// that nobody waits for a server that no task runs any more.
    fn drop(&mut self) {
        if !matches!(self.board.status().state, ConnectionState::Stopped) {
            self.guard.close();
            self.transition(ConnectionState::Stopped, self.last_current, Note::Plain);
        }
    }
}
