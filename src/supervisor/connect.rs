//! One connection attempt: open the transport, handshake, list the tools.
//!
//! An attempt either hands over a complete [`Connected`] generation or cleans up everything it
//! built (the child reaped) before it returns its failure. It never leaves a half-open
//! generation behind, even when cancelled by `shutdown()`.

use std::{sync::Arc, time::Duration};

use rmcp::{
    ServiceExt,
    model::{ProtocolVersion, Tool},
    service::ClientCacheConfig,
    transport::async_rw::AsyncRwTransport,
};
use tokio::{sync::mpsc, time::Instant};
use tokio_util::sync::CancellationToken;

use super::{actor::Msg, generation::Session, handler::GenerationHandler, sync::list_all_tools};
use crate::{
    config::{ServerConfig, TransportConfig},
    state::{Cause, Death, Generation},
    transport::{self, Activity, Guard, Observed},
};

/// A generation that completed its handshake and its first tool listing.
pub(crate) struct Connected {
    pub(crate) session: Session,
    pub(crate) tools: Vec<Tool>,
    /// How long the handshake and the listing took.
    pub(crate) elapsed: Duration,
}

/// What every attempt of one supervisor shares: built once in `Supervisor::start`.
#[derive(Debug, Clone)]
pub(crate) struct ConnectContext {
    /// The HTTP client of the remote transports (shared, so connections are pooled).
    pub(crate) http: reqwest::Client,
}

impl ConnectContext {
    pub(crate) fn new(http: reqwest::Client) -> Self {
        ConnectContext { http }
    }
}

/// Runs one attempt. `ct` cancels it (the result is then an error and everything is cleaned up).
pub(crate) async fn attempt(
    config: Arc<ServerConfig>,
    context: ConnectContext,
    generation: Generation,
    tx: mpsc::UnboundedSender<Msg>,
    ct: CancellationToken,
) -> Result<Connected, Death> {
    let started = Instant::now();
    let deadline = started + config.connect_timeout;
    let session = open(&config, &context, generation, tx, &ct, deadline).await?;
    let listed = tokio::select! {
        listed = tokio::time::timeout_at(deadline, list_all_tools(session.running.peer(), config.max_tool_pages)) => {
            listed.unwrap_or_else(|_| Err(format!("tools/list timed out (connect timeout {:?})", config.connect_timeout)))
        }
        _ = ct.cancelled() => Err("attempt cancelled".to_owned()),
    };
    match listed {
        Ok(tools) => Ok(Connected { session, tools, elapsed: started.elapsed() }),
        Err(detail) => {
            discard(session).await;
            Err(Death::new(Cause::ConnectFailed, detail))
        }
    }
}

/// Closes a session that never became a generation.
pub(crate) async fn discard(session: Session) {
    session.session_ct.cancel();
    let _ = session.running.waiting().await;
    session.guard.dispose().await;
}

async fn open(
    config: &ServerConfig,
    _context: &ConnectContext,
    generation: Generation,
    tx: mpsc::UnboundedSender<Msg>,
    ct: &CancellationToken,
    deadline: Instant,
) -> Result<Session, Death> {
    let activity = Activity::new();
    let slot = transport::DeathSlot::default();
    let session_ct = CancellationToken::new();
    match &config.transport {
        TransportConfig::Stdio(stdio) => {
            let (stdout, stdin, child) = transport::stdio::spawn(stdio, &config.name, generation)
                .map_err(|e| {
                    Death::new(Cause::ConnectFailed, format!("could not spawn '{}': {e}", stdio.command))
                })?;
            let mut guard = Guard::Stdio(child);
            let handler =
                GenerationHandler::new(generation, tx, ProtocolVersion::LATEST_WITH_INITIALIZE);
            let io = Observed::new(AsyncRwTransport::new_client(stdout, stdin), activity.clone());
            let served = tokio::select! {
                served = tokio::time::timeout_at(deadline, handler.serve_with_ct(io, session_ct.clone())) => served,
                _ = ct.cancelled() => {
                    session_ct.cancel();
                    guard.dispose().await;
                    return Err(Death::new(Cause::ConnectFailed, "attempt cancelled"));
                }
            };
            let running = match served {
                Ok(Ok(running)) => running,
                failed => {
                    let exit = guard.exit_detail(Duration::from_millis(50)).await;
                    guard.dispose().await;
                    let mut detail = match failed {
                        Ok(Err(e)) => format!("initialize failed: {e}"),
                        _ => format!("initialize timed out (connect timeout {:?})", config.connect_timeout),
                    };
                    if let Some(exit) = exit {
                        detail.push_str(&format!("; child {exit}"));
                    }
                    return Err(Death::new(Cause::ConnectFailed, detail));
                }
            };
            running.peer().set_response_cache_config(ClientCacheConfig::disabled()).await;
            Ok(Session { running, guard, slot, activity, session_ct })
        }
        TransportConfig::Remote(remote) => Err(Death::new(
            Cause::ConnectFailed,
            format!("remote transport to {} is not available in this build", remote.url),
        )),
    }
}
