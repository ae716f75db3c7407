//! The handshake of a Streamable HTTP attempt on the lean link
//! ([`crate::transport::http::link`]), and what its end means for the attempt: a session, a
//! failure read as rmcp's would be ([`Handshake`]), or a 2026-07-28 server that rmcp's session
//! must open.

use std::sync::Arc;

use rmcp::model::ProtocolVersion;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::handshake::{Handshake, step};
use crate::{
    supervisor::session::generation::Served,
    transport::{self, http::link::handshake::Opened},
};

/// What a lean handshake ended with: a session, or a server that speaks 2026-07-28, which
/// rmcp's session must open.
pub(super) enum LeanOpened {
    Session(Served),
    Modern,
}

/// The handshake of a Streamable HTTP session on the lean link: `initialize`, or with `auto`
/// `server/discover` first ([`transport::http::link`]), until `deadline` or until `ct` cancels
/// the attempt (then, as on every failure, the session is cancelled through `session_ct` and
/// the link dropped, which stops its transport).
pub(super) async fn open_lean(
    link: transport::http::link::Link,
    params: rmcp::model::InitializeRequestParams,
    auto: bool,
    session_ct: &CancellationToken,
    ct: &CancellationToken,
    deadline: Instant,
) -> Result<LeanOpened, Handshake> {
    let open = async {
        match auto {
            true => {
                let legacy = ProtocolVersion::LATEST_WITH_INITIALIZE;
                link.open_auto(params, legacy).await
            }
            false => link.initialize(params).await.map(|()| Opened::Session),
        }
    };
    let opened = tokio::select! {
        opened = tokio::time::timeout_at(deadline, open) => opened,
        _ = ct.cancelled() => {
            session_ct.cancel();
            return Err(Handshake::Cancelled);
        }
    };
    let initialize_only = !auto || link.fell_back();
    match opened {
        Ok(Ok(Opened::Session)) => Ok(LeanOpened::Session(Served::Lean(Arc::new(link)))),
        Ok(Ok(Opened::Modern)) => Ok(LeanOpened::Modern),
        Ok(Err(error)) => {
            session_ct.cancel();
            Err(Handshake::Failed {
                step: step(initialize_only, auto, Some(&error)),
                error: Box::new(error),
            })
        }
        Err(_) => {
            session_ct.cancel();
            Err(Handshake::TimedOut {
                step: step(initialize_only, auto, None),
            })
        }
    }
}
