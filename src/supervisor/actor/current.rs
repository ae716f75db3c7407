//! Making a connected attempt the current generation, in the order actor invariant 2 asks:
//! the fence, then the permit, then the watchers, the tools and the state; and publishing its
//! tools, announced only when they changed.

use super::Actor;
use crate::{
    registry::Publish,
    state::{ConnectionState, Event, Generation},
    supervisor::{
        connect::Connected,
        generation::{self, Running},
        heartbeat::Heartbeat,
    },
};

impl Actor {
    /// Makes `connected` the current generation: fence, permit, watchers, tools, state.
    pub(super) fn become_current(&mut self, generation: Generation, connected: Connected) {
        let Connected {
            session,
            tools,
            ttl,
            subscription,
            wanted,
            protocol,
            elapsed,
        } = connected;
        // Fence first, then free the permit, then start the watchers (invariant 2): a late report
        // about the old generation finds it stale; a report about this one finds the permit free.
        self.link.guard.set_current(Some(generation));
        self.last_current = Some(generation);
        self.permit = None;
        let live = generation::live(
            self.server().clone(),
            generation,
            &session,
            protocol.clone(),
            self.link.guard.clone(),
            self.link.tx.clone(),
            crate::telemetry::transport(&self.config, self.context.detected.get()),
        );
        let heartbeat = self.config.heartbeat.enabled.then(|| Heartbeat {
            interval: self.config.heartbeat.interval,
            timeout: self.config.heartbeat.timeout,
            failures: self.config.heartbeat.failures,
            events: self.link.board.event_sender(),
        });
        // The tools go into the registry now (a reader that sees `ready` finds them), and are
        // announced once the status says the generation takes calls.
        let published = self.publish(generation, tools);
        let listen = crate::supervisor::listen::Listener {
            subscription,
            wanted,
            tx: self.link.tx.clone(),
            relay: self.link.relay.clone(),
            handlers: self.config.handlers.clone(),
        };
        let running = Running::start(
            live.clone(),
            session,
            heartbeat,
            listen,
            self.config.close_timeout,
        );
        self.refresh_after(ttl);
        let outage = self.outage.as_ref().map(|o| o.started.elapsed());
        crate::telemetry::ready(&live.telemetry, outage);
        self.running = Some(running);
        self.stable = false;
        self.stability = Some(Box::pin(tokio::time::sleep(self.budget.stability_window())));
        let handshake_ms = elapsed.as_millis() as u64;
        match self.outage.take() {
            Some(outage) => tracing::info!(
                server = %self.server(), %generation, handshake_ms, %protocol,
                downtime_ms = outage.started.elapsed().as_millis() as u64, "recovered"
            ),
            None => {
                tracing::info!(server = %self.server(), %generation, handshake_ms, %protocol, "connected")
            }
        }
        let protocol = protocol.to_string();
        let ready = ConnectionState::Ready {
            generation,
            protocol,
        };
        self.link.board.publish(ready, Some(generation), Some(live));
        if let Some(published) = published {
            self.announce(&published);
        }
        if self.sync.take_pending(generation) {
            self.on_list_changed(generation);
        }
    }

    /// Registers a new generation's tools, to be announced ([`announce`](Self::announce)) when
    /// something changed (or on this supervisor's first publish), so a reconnect to an
    /// unchanged server is silent.
    fn publish(
        &mut self,
        generation: Generation,
        tools: Vec<rmcp::model::Tool>,
    ) -> Option<Publish> {
        match self.registry.publish(self.server(), generation, tools) {
            Ok(published) if published.change.is_empty() && self.published => None,
            Ok(published) => {
                self.published = true;
                Some(published)
            }
            Err(e) => {
                tracing::error!(server = %self.server(), %generation, "tool list rejected, keeping the previous set: {e}");
                None
            }
        }
    }

    /// Tells the registry's `changes` and this server's events of a tool set now published.
    pub(super) fn announce(&self, published: &Publish) {
        self.registry.announce(published);
        crate::telemetry::tools(&published.change);
        self.link
            .board
            .event(Event::Tools(published.change.clone()));
    }
}
