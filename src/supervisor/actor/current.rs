//! Making a connected attempt the current generation, in the order actor invariant 2 asks:
//! the fence, then the permit, then the watchers, the tools and the state; and publishing its
//! tools, announced only when they changed.

use super::Actor;
use crate::config::HeartbeatScope;
use crate::supervisor::actor::transition::Note;
use crate::{
    registry::Publish,
    state::{ConnectionState, Event, Generation},
    supervisor::session::{
        connect::Connected,
        generation::{self, Running},
        heartbeat::Heartbeat,
        live::ProbeRules,
        origin::{self, OriginBeat},
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
        self.guard.set_current(Some(generation));
        self.last_current = Some(generation);
        self.permit = None;
        let live = generation::live(
            self.server().clone(),
            generation,
            &session,
            protocol.clone(),
            self.guard.clone(),
            self.tx.clone(),
            crate::transport::name(&self.config, self.context.detected.get()),
            self.config.heartbeat.enabled.then(|| ProbeRules {
                timeout: self.config.heartbeat.timeout,
                failures: self.config.heartbeat.failures,
                events: self.board.event_sender(),
            }),
        );
        let heartbeat = self.config.heartbeat.enabled.then(|| Heartbeat {
            interval: self.config.heartbeat.interval,
            origin: self.origin_beat(),
        });
        // The tools go into the registry now (a reader that sees `ready` finds them), and are
        // announced once the status says the generation takes calls.
        live.set_tools(&tools);
        let published = self.publish(generation, tools);
        let listen = crate::supervisor::session::listen::Listener {
            subscription,
            wanted,
            tx: self.tx.clone(),
            relay: self.relay.clone(),
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
        let outage = self.outage.take().map(|o| o.started.elapsed());
        self.running = Some(running);
        self.stable = false;
        self.stability = Some(Box::pin(tokio::time::sleep(self.budget.stability_window())));
        let ready = ConnectionState::Ready {
            generation,
            protocol: protocol.to_string(),
        };
        let note = Note::Ready {
            live,
            handshake: elapsed,
            outage,
        };
        self.transition(ready, generation, note);
        if let Some(published) = published {
            self.announce(&published);
        }
        if self.sync.take_pending(generation) {
            self.on_list_changed(generation);
        }
    }

    /// The group whose answers stand in for this server's own probes: with the origin scope, on
    /// a remote transport ([`crate::supervisor::session::origin`]).
    fn origin_beat(&self) -> Option<OriginBeat> {
        let heartbeat = &self.config.heartbeat;
        let crate::config::TransportConfig::Remote(remote) = &self.config.transport else {
            return None;
        };
        if heartbeat.scope != HeartbeatScope::Origin {
            return None;
        }
        origin::join(
            &remote.url,
            heartbeat.interval,
            heartbeat.timeout,
            heartbeat.session_check_every,
        )
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
        self.board.event(Event::Tools(published.change.clone()));
    }
}
