//! Making a connected attempt the current generation, in the order actor invariant 2 asks:
//! the fence, then the permit, then the watchers, the tools and the state; and publishing its
//! tools, announced only when they changed.

use super::Actor;
use crate::{
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
        self.link.guard.set_current(generation);
        self.last_current = generation;
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
            events: self.link.events.clone(),
        });
        self.publish(generation, tools);
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
        self.link.live.send_replace(Some(live));
        self.running = Some(running);
        self.stable = false;
        self.stability = Some(Box::pin(tokio::time::sleep(self.budget.stability_window())));
        let handshake_ms = elapsed.as_millis() as u64;
        match self.outage.take() {
            Some(outage) => tracing::info!(
                server = %self.server(), generation, handshake_ms, %protocol,
                downtime_ms = outage.started.elapsed().as_millis() as u64, "recovered"
            ),
            None => {
                tracing::info!(server = %self.server(), generation, handshake_ms, %protocol, "connected")
            }
        }
        let protocol = protocol.to_string();
        self.set_state(
            ConnectionState::Ready {
                generation,
                protocol,
            },
            generation,
        );
        if self.sync.take_pending(generation) {
            self.on_list_changed(generation);
        }
    }

    /// Registers a new generation's tools; announces them only when something changed (or on
    /// this supervisor's first publish), so a reconnect to an unchanged server is silent.
    fn publish(&mut self, generation: Generation, tools: Vec<rmcp::model::Tool>) {
        match self.registry.publish(self.server(), generation, tools) {
            Ok(change) if change.is_empty() && self.published => {}
            Ok(change) => {
                self.published = true;
                crate::telemetry::tools(&change);
                let _ = self.link.events.send(Event::Tools(change));
            }
            Err(e) => {
                tracing::error!(server = %self.server(), generation, "tool list rejected, keeping the previous set: {e}")
            }
        }
    }
}
