//! Opening one remote session: legacy SSE or Streamable HTTP, and what its failure means for
//! `auto` (the other protocol, or a wrong URL) and for the outage (transient or permanent).

use rmcp::model::ProtocolVersion;
use tokio::{sync::mpsc, time::Instant};
use tokio_util::sync::CancellationToken;

use super::{ConnectContext, Handshake, handshake};
use crate::{
    config::{RemoteConfig, ServerConfig},
    state::{Cause, Death, Generation},
    supervisor::{actor::Msg, generation::Session, handler::GenerationHandler},
    transport::{
        self, Activity, DeathSlot, Guard,
        detect::{Failure, Protocol},
    },
    verdict::Verdict,
};

/// Opens one remote session speaking `protocol`.
#[allow(clippy::too_many_arguments)] // one attempt's whole context, passed down once
pub(super) async fn open(
    protocol: Protocol,
    config: &ServerConfig,
    remote: &RemoteConfig,
    context: &ConnectContext,
    generation: Generation,
    tx: mpsc::UnboundedSender<Msg>,
    ct: &CancellationToken,
    deadline: Instant,
) -> Result<Session, Failure> {
    let (activity, slot, session_ct) = (
        Activity::new(false),
        DeathSlot::default(),
        CancellationToken::new(),
    );
    let failed = |detail: String, wrong_protocol| Failure {
        death: Death::new(Cause::ConnectFailed, detail),
        wrong_protocol,
        retry_after: None,
    };
    let served = match protocol {
        Protocol::Sse => {
            let opened = tokio::select! {
                opened = tokio::time::timeout_at(deadline, transport::sse::connect(&context.http, remote, slot.clone())) => opened,
                _ = ct.cancelled() => return Err(failed("attempt cancelled".to_owned(), false)),
            };
            let sse = match opened {
                Ok(Ok(sse)) => sse,
                Ok(Err(e)) if protocol.is_wrong(e.status) => return Err(failed(e.detail, true)),
                Ok(Err(e)) => return Err(judged(e.verdict(), e.detail)),
                Err(_) => {
                    return Err(failed(
                        format!(
                            "SSE connect timed out (connect timeout {:?})",
                            config.connect_timeout
                        ),
                        false,
                    ));
                }
            };
            let handler = GenerationHandler::new(generation, tx, ProtocolVersion::V_2024_11_05);
            handshake(sse, handler, &activity, &session_ct, ct, deadline).await
        }
        Protocol::Http => {
            let http =
                transport::http::transport(&context.http, remote).map_err(|e| failed(e, false))?;
            let handler =
                GenerationHandler::new(generation, tx, ProtocolVersion::LATEST_WITH_INITIALIZE);
            handshake(http, handler, &activity, &session_ct, ct, deadline).await
        }
    };
    match served {
        Ok(running) => Ok(Session {
            running,
            guard: Guard::Nothing,
            slot,
            activity,
            session_ct,
        }),
        Err(handshake) => {
            let status = match &handshake {
                Handshake::Failed(e) => transport::http::initialize_status(e),
                _ => None,
            };
            let mut detail = handshake.detail(config.connect_timeout);
            if let Some(death) = slot.get() {
                detail.push_str(&format!("; {}", death.detail));
            }
            if protocol == Protocol::Http && protocol.is_wrong(status) {
                return Err(failed(detail, true));
            }
            let (cause, retry_after) = handshake.verdict();
            Err(Failure {
                death: Death::new(cause, detail),
                wrong_protocol: false,
                retry_after,
            })
        }
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
        wrong_protocol: false,
        retry_after,
    }
}
