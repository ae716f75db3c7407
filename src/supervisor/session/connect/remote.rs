//! Opening one remote session: legacy SSE or Streamable HTTP, and what its failure means for
//! `auto` (the other protocol, or a wrong URL) and for the outage (transient or permanent).

use std::time::Duration;

use rmcp::{model::ProtocolVersion, service::ClientLifecycleMode};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{
    Attempt, era,
    handshake::{Handshake, handshake, judge_refusal, negotiated_of},
    lean::open_lean,
};
use crate::{
    config::RemoteConfig,
    state::{Cause, Death},
    supervisor::session::generation::{Served, Session},
    transport::{
        self, DeathSlot, Guard,
        detect::{Failure, Protocol},
    },
    verdict::Verdict,
};

/// The most a connect waits for the session's standalone `GET` stream to be answered before it
/// lists the tools (see [`transport::http::Standalone`]). One round trip is the usual cost.
const STANDALONE_WAIT: Duration = Duration::from_secs(1);

/// What a handshake ended with.
type Opened = Result<Served, Handshake>;

/// Opens one remote session speaking `protocol`.
pub(super) async fn open(
    protocol: Protocol,
    attempt: &Attempt,
    remote: &RemoteConfig,
    deadline: Instant,
) -> Result<Session, Failure> {
    let Attempt {
        config,
        context,
        activity,
        ..
    } = attempt;
    let (slot, session_ct) = (DeathSlot::default(), CancellationToken::new());
    if let Some(auth) = &context.auth {
        let _ = activity.authorizer.set(auth.clone());
    }
    let served = match protocol {
        Protocol::Sse => serve_sse(attempt, remote, deadline, &slot, &session_ct).await?,
        Protocol::Http => serve_http(attempt, remote, deadline, &slot, &session_ct).await?,
    };
    match served {
        Ok(running) => {
            context.era.remember(&negotiated_of(&running));
            Ok(Session {
                running,
                guard: Guard::Nothing,
                slot,
                activity: activity.clone(),
                session_ct,
            })
        }
        Err(handshake) => {
            let status = match &handshake {
                Handshake::Failed { error, .. } => transport::http::initialize_status(error),
                _ => None,
            };
            let mut detail = handshake.detail(config.connect_timeout);
            if let Some(death) = slot.get() {
                detail.push_str(&format!("; {}", death.detail));
            }
            if protocol == Protocol::Http && protocol.is_wrong(status) {
                return Err(failed(detail, status));
            }
            let (cause, retry_after) = judge_refusal(&handshake, config, context);
            Err(Failure {
                death: Death::new(cause, detail),
                wrong_protocol: None,
                retry_after,
                speaks_other: false,
            })
        }
    }
}

/// Legacy SSE: the stream and its `endpoint` (a failure there is the attempt's), then the
/// handshake.
async fn serve_sse(
    attempt: &Attempt,
    remote: &RemoteConfig,
    deadline: Instant,
    slot: &DeathSlot,
    session_ct: &CancellationToken,
) -> Result<Opened, Failure> {
    let Attempt {
        config,
        context,
        ct,
        activity,
        ..
    } = attempt;
    let opened = tokio::select! {
        opened = tokio::time::timeout_at(deadline, transport::sse::connect(&context.http, remote, &config.limits, context.auth.clone(), slot.clone(), activity)) => opened,
        _ = ct.cancelled() => return Err(failed("attempt cancelled".to_owned(), None)),
    };
    let mut sse = match opened {
        Ok(Ok(sse)) => sse,
        Ok(Err(e)) if Protocol::Sse.is_wrong(e.status) => {
            return Err(Failure {
                speaks_other: e.streamable,
                ..failed(e.detail, e.status)
            });
        }
        Ok(Err(e)) => return Err(judged(e.verdict(), e.detail)),
        Err(_) => {
            return Err(failed(
                format!(
                    "SSE connect timed out (connect timeout {:?})",
                    config.connect_timeout
                ),
                None,
            ));
        }
    };
    if let Some(probe) = sse.probe() {
        let _ = activity
            .direct_probe
            .set(transport::direct::DirectProbe::Sse(probe));
    }
    let handler = attempt.handler(ProtocolVersion::V_2024_11_05);
    let lifecycle = era::lifecycle(config.protocol, &context.era, true);
    Ok(handshake(sse, handler, lifecycle, activity, session_ct, ct, deadline).await)
}

/// Streamable HTTP: the transport (nothing is sent yet), the handshake, and a short wait for
/// the standalone `GET` stream. Every handshake (`initialize`, `server/discover`, `auto`) runs
/// on the lean link, unless it is switched off ([`transport::http::link::enabled`]): then on
/// rmcp's session.
async fn serve_http(
    attempt: &Attempt,
    remote: &RemoteConfig,
    deadline: Instant,
    slot: &DeathSlot,
    session_ct: &CancellationToken,
) -> Result<Opened, Failure> {
    let Attempt {
        config,
        context,
        ct,
        activity,
        ..
    } = attempt;
    let standalone = transport::http::Standalone::default();
    // With liveness per origin, each shared HTTP/2 connection keeps itself alive.
    let heartbeat = &config.heartbeat;
    let ping = (heartbeat.enabled && heartbeat.scope == crate::config::HeartbeatScope::Origin)
        .then_some(transport::http2::Ping {
            interval: heartbeat.interval,
            timeout: heartbeat.timeout,
        });
    let build = transport::http::Build {
        http: &context.http,
        config: remote,
        ping,
        limits: &config.limits,
        auth: context.auth.clone(),
        standalone: standalone.clone(),
        activity: activity.clone(),
        slot: slot.clone(),
    };
    let handler = attempt.handler(ProtocolVersion::LATEST_WITH_INITIALIZE);
    let meta = handler.client_meta();
    let lifecycle = era::lifecycle(config.protocol, &context.era, false);
    let served = match transport::http::link::enabled() {
        true => {
            let params = rmcp::ClientHandler::get_info(&handler);
            let handler = std::sync::Arc::new(handler);
            let link = transport::http::lean(build, handler).map_err(|e| failed(e, None))?;
            let probe = link.direct_probe(meta);
            let opened = open_lean(link, params, lifecycle, session_ct, ct, deadline).await;
            if opened.is_ok() {
                let probe = transport::direct::DirectProbe::Http(Box::new(probe));
                let _ = activity.direct_probe.set(probe);
            }
            opened
        }
        false => {
            rmcp_session(
                build, handler, meta, lifecycle, attempt, deadline, session_ct,
            )
            .await?
        }
    };
    // Nothing the server sends on the standalone stream is lost to our first requests.
    let until = deadline.min(Instant::now() + STANDALONE_WAIT);
    if served.is_ok() && !standalone.settled(until).await {
        tracing::debug!(server = %config.name, "the standalone GET stream was not answered within {STANDALONE_WAIT:?}; going on without waiting for it");
    }
    Ok(served)
}

/// The handshake of a Streamable HTTP session on rmcp's session.
async fn rmcp_session(
    build: transport::http::Build<'_>,
    handler: crate::supervisor::session::handler::GenerationHandler,
    meta: transport::http::ClientMeta,
    lifecycle: ClientLifecycleMode,
    attempt: &Attempt,
    deadline: Instant,
    session_ct: &CancellationToken,
) -> Result<Opened, Failure> {
    let Attempt { ct, activity, .. } = attempt;
    let http = transport::http::transport(build).map_err(|e| failed(e, None))?;
    let _ = activity
        .direct_probe
        .set(transport::direct::DirectProbe::Http(Box::new(
            http.direct_probe(meta),
        )));
    Ok(handshake(http, handler, lifecycle, activity, session_ct, ct, deadline).await)
}

/// A transient `connect_failed`, with the status by which the server said it speaks the other
/// protocol, if it did.
fn failed(detail: String, wrong_protocol: Option<u16>) -> Failure {
    Failure {
        death: Death::new(Cause::ConnectFailed, detail),
        wrong_protocol,
        retry_after: None,
        speaks_other: false,
    }
}

/// A connect-phase failure with `verdict`: permanent causes keep their cause, anything else is a
/// transient `connect_failed` (with the server's `Retry-After`, if any).
fn judged(verdict: Verdict, detail: String) -> Failure {
    let retry_after = match &verdict {
        Verdict::Overload { retry_after, .. } => *retry_after,
        _ => None,
    };
    Failure {
        death: Death::new(
            verdict.permanent_cause().unwrap_or(Cause::ConnectFailed),
            crate::verdict::plain(&detail),
        ),
        wrong_protocol: None,
        retry_after,
        speaks_other: false,
    }
}
