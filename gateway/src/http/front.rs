//! The HTTP front's hooks into the core ([`Front`]): a host session joins the hosts' table when
//! it initializes and gets a writer for its outbox; a host without a session (2026-07-28) has
//! its call's progress drained to that request's stream while the call runs; a listen stream
//! is a host of its own in the table for as long as it lasts.

use std::{sync::Arc, time::Duration};

use futures::future::BoxFuture;
use rmcp::{
    ErrorData, RoleServer,
    service::{RequestContext, SubscriptionContext},
};

use super::{hub::Hosts, identify::Caller, opening::Opening, sessions::SessionKey};
use crate::{
    front::{CallOutcome, Front},
    outbox::sink,
    shared::Shared,
};

/// How long a call's answer waits for the progress it queued to be handed to its stream.
const FLUSH_LIMIT: Duration = Duration::from_secs(2);

/// The HTTP front.
#[derive(Debug)]
pub(in crate::http) struct HttpFront {
    pub(in crate::http) hosts: Arc<Hosts>,
    /// Whether an access policy is in force: then a request that carries no caller's grant
    /// sees nothing (fail closed).
    pub(in crate::http) policed: bool,
}

/// Whether the caller of this request may see `tool` of `server`: everything unless a policy
/// is `policed`, then what the caller's grant gives (nothing without one: fail closed). Both
/// HTTP fronts read the caller the guard put in the request's HTTP parts.
pub(in crate::http) fn sees(
    policed: bool,
    context: &RequestContext<RoleServer>,
    server: &str,
    tool: &str,
) -> bool {
    if !policed {
        return true;
    }
    let caller = (context.extensions.get::<axum::http::request::Parts>())
        .and_then(|parts| parts.extensions.get::<Caller>());
    match caller.and_then(|caller| caller.grant.as_ref()) {
        Some(grant) => grant.sees(server, tool),
        None => false,
    }
}

/// The id of the session this request's `initialize` opens.
pub(in crate::http) fn session_id(context: &RequestContext<RoleServer>) -> Option<String> {
    let SessionKey(id) = context.extensions.get::<SessionKey>()?;
    Some(id.clone())
}

impl Front for HttpFront {
    fn sees(&self, context: &RequestContext<RoleServer>, server: &str, tool: &str) -> bool {
        sees(self.policed, context, server, tool)
    }

    fn session_id(&self, context: &RequestContext<RoleServer>) -> Option<String> {
        session_id(context)
    }

    fn initialized(
        &self,
        shared: &Arc<Shared>,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let Some(SessionKey(id)) = context.extensions.get::<SessionKey>().cloned() else {
            return Err(ErrorData::internal_error(
                "the gateway lost track of this session's id",
                None,
            ));
        };
        let writer = tokio::spawn(sink::run(shared.link.outbox.clone(), context.peer.clone()));
        self.hosts.register(id, shared.clone(), Some(writer));
        Ok(())
    }

    fn call<'a>(
        &'a self,
        shared: &'a Arc<Shared>,
        context: &'a RequestContext<RoleServer>,
        call: BoxFuture<'a, CallOutcome>,
    ) -> BoxFuture<'a, CallOutcome> {
        let outbox = shared.link.outbox.clone();
        // The host's response head goes out before the call runs (`gateway/src/http/opening/mod.rs`).
        let opening = Opening::of(context);
        if shared.link.is_initialized() {
            // The session's writer drains the outbox: wait for what this call queued.
            return Box::pin(async move {
                if let Some(opening) = opening {
                    opening.open().await;
                }
                let outcome = call.await;
                outbox.flushed(outbox.mark(), FLUSH_LIMIT).await;
                outcome
            });
        }
        // No session: this request's stream is the only way to the host, for as long as the
        // call runs.
        let peer = context.peer.clone();
        Box::pin(async move {
            if let Some(opening) = opening {
                opening.open().await;
            }
            outbox.open();
            let drain = sink::run(outbox.clone(), peer);
            tokio::pin!(call, drain);
            let outcome = tokio::select! {
                outcome = &mut call => outcome,
                () = &mut drain => call.await,
            };
            outbox.close();
            let _ = tokio::time::timeout(FLUSH_LIMIT, drain).await;
            outcome
        })
    }

    fn listen(
        &self,
        shared: Arc<Shared>,
        context: SubscriptionContext,
    ) -> BoxFuture<'static, Result<(), ErrorData>> {
        let hosts = self.hosts.clone();
        Box::pin(async move {
            let link = shared.link.clone();
            link.outbox.open();
            let _listening = hosts.listen(link.clone());
            let stop = tokio_util::sync::CancellationToken::new();
            let _stop_announcing = stop.clone().drop_guard();
            let announce = shared.clone().announce(stop);
            let drain = sink::run(link.outbox.clone(), context.sink().clone());
            tokio::select! {
                () = context.cancelled() => {}
                () = announce => {}
                () = drain => {}
            }
            Ok(())
        })
    }
}
