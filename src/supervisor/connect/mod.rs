//! One connection attempt: open the transport, handshake, list the tools.
//!
//! An attempt either hands over a complete [`Connected`] generation or cleans up everything it
//! built (the child reaped) before it returns its failure. It never leaves a half-open
//! generation behind, even when cancelled by `shutdown()`. A failure carries its verdict: a
//! transient `connect_failed` (with the server's `Retry-After`, if it sent one), or a permanent
//! `unauthorized` / `rejected` (see [`crate::verdict`]).

use std::{sync::Arc, time::Duration};

pub(crate) mod era;
pub(crate) mod handshake;
mod remote;

use rmcp::{
    model::{ProtocolVersion, Tool},
    transport::async_rw::AsyncRwTransport,
};
use tokio::{sync::mpsc, time::Instant};
use tokio_util::sync::CancellationToken;

use super::{
    generation::Session, handler::GenerationHandler, listen, msg::Msg, relay::Relay,
    sync::list_all_tools,
};
use crate::{
    config::{ServerConfig, TransportConfig},
    state::{Cause, Death, Generation},
    transport::{
        self, Activity, DeathSlot, Guard, Stop,
        detect::{Failure, KindMemory},
    },
};
use handshake::{Handshake, handshake};

/// Why an attempt produced no generation.
#[derive(Debug)]
pub(crate) struct AttemptFailure {
    /// Cause `connect_failed`, `unauthorized` or `rejected`.
    pub(crate) death: Death,
    /// The wait the server asked for (HTTP 429 or 503 with `Retry-After`).
    pub(crate) retry_after: Option<Duration>,
}

impl From<Death> for AttemptFailure {
    fn from(death: Death) -> Self {
        AttemptFailure {
            death,
            retry_after: None,
        }
    }
}

impl From<Failure> for AttemptFailure {
    fn from(failure: Failure) -> Self {
        AttemptFailure {
            death: failure.death,
            retry_after: failure.retry_after,
        }
    }
}

/// A generation that completed its handshake and its first tool listing.
pub(crate) struct Connected {
    pub(crate) session: Session,
    pub(crate) tools: Vec<Tool>,
    /// The listing's `ttlMs`: when to list again even without a change notification.
    pub(crate) ttl: Option<Duration>,
    /// The `subscriptions/listen` stream of a 2026-07-28 server that can change its lists.
    pub(crate) subscription: Option<rmcp::service::Subscription>,
    /// What that stream asked for.
    pub(crate) wanted: listen::Wanted,
    /// The protocol version the handshake negotiated.
    pub(crate) protocol: ProtocolVersion,
    /// How long the handshake and the listing took.
    pub(crate) elapsed: Duration,
}

/// What every attempt of one supervisor shares: built once in `Supervisor::start`.
#[derive(Debug, Clone)]
pub(crate) struct ConnectContext {
    /// The HTTP client of the remote transports (shared, so connections are pooled).
    pub(crate) http: reqwest::Client,
    /// The transport `auto` found; written by the remote arm of [`open`] after a handshake.
    pub(crate) detected: Arc<KindMemory>,
    /// The protocol era `auto` found; written after each handshake.
    pub(crate) era: Arc<era::EraMemory>,
    /// Progress routes and resource subscriptions, shared with the call path.
    pub(crate) relay: Arc<Relay>,
    /// The server's authorization (remote servers with `auth` set); shared by every generation,
    /// so a token outlives the session it was first sent on.
    pub(crate) auth: Option<Arc<crate::auth::Authorizer>>,
}

impl ConnectContext {
    pub(crate) fn new(
        http: reqwest::Client,
        relay: Arc<Relay>,
        auth: Option<Arc<crate::auth::Authorizer>>,
    ) -> Self {
        ConnectContext {
            http,
            detected: Arc::default(),
            era: Arc::default(),
            relay,
            auth,
        }
    }
}

/// Everything one attempt works with, passed down once.
pub(crate) struct Attempt {
    pub(crate) config: Arc<ServerConfig>,
    pub(crate) context: ConnectContext,
    pub(crate) generation: Generation,
    pub(crate) tx: mpsc::UnboundedSender<Msg>,
    /// Cancels the attempt (the result is then an error and everything is cleaned up).
    pub(crate) ct: CancellationToken,
    /// Stamped by every step that gets an answer (an SSE stream's headers and `endpoint`, any
    /// message received): the supervisor tells a stuck attempt from a slow one by it. It becomes
    /// the generation's activity.
    pub(crate) activity: Arc<Activity>,
}

impl Attempt {
    /// The rmcp client handler of this attempt's generation, offering `version` to `initialize`.
    fn handler(&self, version: ProtocolVersion) -> GenerationHandler {
        GenerationHandler::new(
            self.generation,
            Arc::from(self.config.name.as_str()),
            self.tx.clone(),
            self.config.handlers.clone(),
            self.context.relay.clone(),
            version,
        )
    }
}

/// Runs one attempt.
pub(crate) async fn attempt(attempt: Attempt) -> Result<Connected, AttemptFailure> {
    let started = Instant::now();
    let deadline = crate::clock::after(started, attempt.config.connect_timeout);
    let (config, ct) = (attempt.config.clone(), attempt.ct.clone());
    let session = open(&attempt, deadline).await;
    let protocol = session.as_ref().ok().map(negotiated);
    let transport = crate::telemetry::transport(&config, attempt.context.detected.get());
    let version = protocol.as_ref().map_or("", |p| p.as_str());
    let labels =
        crate::telemetry::Labels::new(&config.name, attempt.generation, transport, version);
    crate::telemetry::handshake(
        &labels,
        started,
        config.protocol,
        session.as_ref().err().map(|f| f.death.cause),
    );
    let (session, protocol) = (session?, protocol.unwrap_or_default());
    // Subscribe before listing, so that no change falls between the two.
    let wanted = listen::Wanted::now(&config.handlers, &attempt.context.relay);
    let subscription = tokio::select! {
        listened = tokio::time::timeout_at(deadline, listen::subscribe(session.running.peer(), &protocol, &wanted)) => {
            listened.unwrap_or_else(|_| Err(format!("subscriptions/listen timed out (connect timeout {:?})", config.connect_timeout)))
        }
        _ = ct.cancelled() => Err("attempt cancelled".to_owned()),
    };
    let subscription = match subscription {
        Ok(subscription) => subscription,
        Err(detail) => {
            discard(session, config.close_timeout).await;
            return Err(Death::new(Cause::ConnectFailed, detail).into());
        }
    };
    let listed = tokio::select! {
        listed = tokio::time::timeout_at(deadline, list_all_tools(session.running.peer(), &config.limits, &labels)) => {
            listed.unwrap_or_else(|_| Err(Death::new(Cause::ConnectFailed, format!("tools/list timed out (connect timeout {:?})", config.connect_timeout))))
        }
        _ = ct.cancelled() => Err(Death::new(Cause::ConnectFailed, "attempt cancelled")),
    };
    match listed {
        Ok(listing) => Ok(Connected {
            session,
            tools: listing.tools,
            ttl: listing.ttl,
            subscription,
            wanted,
            protocol,
            elapsed: started.elapsed(),
        }),
        Err(death) => {
            // What the transport saw (a stdio line over the message bound) says more than the
            // closed session it caused.
            let death = session.slot.get().cloned().unwrap_or(death);
            discard(session, config.close_timeout).await;
            Err(death.into())
        }
    }
}

/// The version the session's handshake negotiated (2025-11-25 if the server did not say).
fn negotiated(session: &Session) -> ProtocolVersion {
    negotiated_of(&session.running)
}

fn negotiated_of(
    running: &rmcp::service::RunningService<rmcp::RoleClient, GenerationHandler>,
) -> ProtocolVersion {
    running
        .peer()
        .peer_info()
        .map(|info| info.protocol_version.clone())
        .unwrap_or(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// The cause (and `Retry-After`) of a failed handshake. Under `protocol: auto`, a server that
/// refused the remembered era's version (`-32022`) but speaks one we know was upgraded (or
/// downgraded): the memory is dropped and the failure is transient, so the next attempt asks
/// again instead of giving up.
fn judge_refusal(
    failed: &Handshake,
    config: &ServerConfig,
    context: &ConnectContext,
) -> (Cause, Option<Duration>) {
    if config.protocol == crate::config::ProtocolChoice::Auto && failed.refused_version() {
        context.era.forget();
        return (Cause::ConnectFailed, None);
    }
    failed.verdict()
}

/// Closes a session that never became a generation: the child, if any, is stopped at once
/// (without waiting on rmcp, which may be wedged) and reaped; then rmcp's own cleanup gets up to
/// `limit` (it can wait on a hung HTTP server).
pub(crate) async fn discard(session: Session, limit: Duration) {
    session.session_ct.cancel();
    let disposed = session.guard.dispose(Stop::Dead, limit).await;
    if tokio::time::timeout(limit, session.running.waiting())
        .await
        .is_err()
    {
        tracing::warn!("session cleanup did not finish within {limit:?}; abandoning it");
    }
    disposed.finish().await;
}

async fn open(attempt: &Attempt, deadline: Instant) -> Result<Session, AttemptFailure> {
    let Attempt {
        config,
        context,
        generation,
        ct,
        activity,
        ..
    } = attempt;
    let generation = *generation;
    match &config.transport {
        TransportConfig::Stdio(stdio) => {
            let (stdout, stdin, child) = transport::stdio::spawn(stdio, &config.name, generation)
                .await
                .map_err(|e| {
                    Death::new(
                        Cause::ConnectFailed,
                        format!("could not spawn '{}': {e}", stdio.command),
                    )
                })?;
            let mut guard = Guard::Stdio(Box::new(child));
            let handler = attempt.handler(ProtocolVersion::LATEST_WITH_INITIALIZE);
            let (slot, session_ct) = (DeathSlot::default(), CancellationToken::new());
            let max = config.limits.max_message_bytes;
            let stdout = transport::stdio::BoundedLines::new(stdout, max, slot.clone());
            // Ours ends the stream at the bound; rmcp's (which would drop the line and read on)
            // is set past it, as a second fence.
            let io = AsyncRwTransport::new_client(stdout, stdin)
                .with_max_line_length(max.saturating_add(2));
            let lifecycle = era::lifecycle(config.protocol, &context.era, false);
            let opened = handshake(io, handler, lifecycle, activity, &session_ct, ct, deadline);
            let running = match opened.await {
                Ok(running) => running,
                Err(failed) => {
                    let exit = match failed {
                        Handshake::Cancelled => None,
                        _ => guard.exit_detail(Duration::from_millis(50)).await,
                    };
                    guard
                        .dispose(Stop::Dead, config.close_timeout)
                        .await
                        .finish()
                        .await;
                    if let Some(death) = slot.get() {
                        return Err(death.clone().into());
                    }
                    let (cause, _) = judge_refusal(&failed, config, context);
                    let mut detail = failed.detail(config.connect_timeout);
                    if let Some(exit) = exit {
                        detail.push_str(&format!("; child {exit}"));
                    }
                    return Err(Death::new(cause, detail).into());
                }
            };
            context.era.remember(&negotiated_of(&running));
            Ok(Session {
                running,
                guard,
                slot,
                activity: activity.clone(),
                session_ct,
            })
        }
        TransportConfig::Remote(remote) => {
            transport::detect::open(remote.kind, &context.detected, |protocol| {
                remote::open(protocol, attempt, remote, deadline)
            })
            .await
            .map_err(AttemptFailure::from)
        }
    }
}
