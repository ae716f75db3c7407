//! One connection attempt: open the transport, handshake, list the tools.
//!
//! An attempt either hands over a complete [`Connected`] generation or cleans up everything it
//! built (the child reaped) before it returns its failure. It never leaves a half-open
//! generation behind, even when cancelled by `shutdown()`. A failure carries its verdict: a
//! transient `connect_failed` (with the server's `Retry-After`, if it sent one), or a permanent
//! `unauthorized` / `rejected` (see [`crate::verdict`]).

use std::time::Duration;

mod context;
pub(crate) mod era;
pub(crate) mod handshake;
mod lean;
mod remote;
mod stdio;

pub(in crate::supervisor) use context::{Attempt, AttemptFailure, ConnectContext, Connected};

use rmcp::model::ProtocolVersion;
use tokio::time::Instant;

use super::{generation::Session, listen, listing::list_all_tools};
use crate::{
    config::TransportConfig,
    state::{Cause, Death},
    transport::{self, Stop},
};
use handshake::negotiated_of;

/// Runs one attempt.
pub(in crate::supervisor) async fn attempt(attempt: Attempt) -> Result<Connected, AttemptFailure> {
    let started = Instant::now();
    let deadline = crate::clock::after(started, attempt.config.connect_timeout);
    let (config, ct) = (attempt.config.clone(), attempt.ct.clone());
    let session = open(&attempt, deadline).await;
    let protocol = session.as_ref().ok().map(negotiated);
    let transport = crate::transport::name(&config, attempt.context.detected.get());
    let version = protocol.as_ref().map_or("", |p| p.as_str());
    let labels =
        crate::telemetry::Labels::new(&config.name, attempt.generation, transport, version, None);
    crate::telemetry::handshake(
        &labels,
        started,
        config.protocol,
        session.as_ref().err().map(|f| f.death.cause),
    );
    let (session, protocol) = (session?, protocol.unwrap_or_default());
    // Subscribe before listing, so that no change falls between the two.
    let wanted = listen::Wanted::now(&config.handlers, &attempt.context.relay);
    let link = session.running.link();
    let subscription = tokio::select! {
        listened = tokio::time::timeout_at(deadline, listen::subscribe(&link, &protocol, &wanted)) => {
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
        listed = tokio::time::timeout_at(deadline, list_all_tools(&link, &config.limits, &labels)) => {
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
/// Closes a session that never became a generation: the child, if any, is stopped at once
/// (without waiting on rmcp, which may be wedged) and reaped; then rmcp's own cleanup gets up to
/// `limit` (it can wait on a hung HTTP server).
pub(in crate::supervisor) async fn discard(session: Session, limit: Duration) {
    session.session_ct.cancel();
    let disposed = session.guard.dispose(Stop::Dead, limit).await;
    if tokio::time::timeout(limit, session.running.waiting(session.session_ct.clone()))
        .await
        .is_err()
    {
        tracing::warn!("session cleanup did not finish within {limit:?}; abandoning it");
    }
    disposed.finish().await;
}

/// Opens the transport `attempt`'s server is reached by and runs the handshake.
async fn open(attempt: &Attempt, deadline: Instant) -> Result<Session, AttemptFailure> {
    match &attempt.config.transport {
        TransportConfig::Stdio(stdio) => stdio::open(attempt, stdio, deadline).await,
        TransportConfig::Remote(remote) => {
            let context = &attempt.context;
            transport::detect::open(remote.kind, &context.detected, |protocol| {
                remote::open(protocol, attempt, remote, deadline)
            })
            .await
            .map_err(AttemptFailure::from)
        }
    }
}
