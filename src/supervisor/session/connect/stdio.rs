//! Opening one stdio session: the child spawned (death signal, environment allowlist), its
//! stdout bounded by `max_message_bytes`, and the handshake; a failed handshake reaps the child
//! before it returns, and says how the child exited.

use std::time::Duration;

use rmcp::model::ProtocolVersion;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{
    Attempt, AttemptFailure, era,
    handshake::{Handshake, handshake, judge_refusal, negotiated_of},
};
use crate::{
    config::StdioConfig,
    state::{Cause, Death},
    supervisor::session::generation::Session,
    transport::{self, DeathSlot, Guard, Stop},
};

/// Opens one stdio session for `attempt`.
pub(super) async fn open(
    attempt: &Attempt,
    stdio: &StdioConfig,
    deadline: Instant,
) -> Result<Session, AttemptFailure> {
    let Attempt {
        config,
        context,
        generation,
        ct,
        activity,
        ..
    } = attempt;
    let generation = *generation;
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
    // The bounded stdout ends the stream at the bound; the transport's own (which drops the
    // line and reads on) is set past it, as a second fence.
    let io = transport::stdio::StdioTransport::new(
        stdout,
        stdin,
        max.saturating_add(2),
        activity.clone(),
    );
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
