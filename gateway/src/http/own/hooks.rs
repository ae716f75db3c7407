//! The own front's hooks into the core: a session joins the hosts' table when it initializes,
//! with no writer (its standalone stream drains its outbox while it is open: `stream.rs`); a
//! call runs as it is, what it queues for the host waiting in the outbox.

use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::{
    ErrorData, RoleServer,
    service::{RequestContext, SubscriptionContext},
};

use crate::{
    front::{CallOutcome, Front},
    http::{front, hub::Hosts},
    shared::Shared,
};

/// The own front's hooks.
#[derive(Debug)]
pub(in crate::http) struct OwnHooks {
    pub(in crate::http) hosts: Arc<Hosts>,
    /// Whether an access policy is in force (see `HttpFront`).
    pub(in crate::http) policed: bool,
}

impl Front for OwnHooks {
    fn sees(&self, context: &RequestContext<RoleServer>, server: &str, tool: &str) -> bool {
        front::sees(self.policed, context, server, tool)
    }

    fn session_id(&self, context: &RequestContext<RoleServer>) -> Option<String> {
        front::session_id(context)
    }

    fn initialized(
        &self,
        shared: &Arc<Shared>,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let Some(id) = front::session_id(context) else {
            return Err(ErrorData::internal_error(
                "the gateway lost track of this session's id",
                None,
            ));
        };
        self.hosts.register(id, shared.clone(), None);
        Ok(())
    }

    fn call<'a>(
        &'a self,
        _shared: &'a Arc<Shared>,
        _context: &'a RequestContext<RoleServer>,
        call: BoxFuture<'a, CallOutcome>,
    ) -> BoxFuture<'a, CallOutcome> {
        call
    }

    fn listen(
        &self,
        _shared: Arc<Shared>,
        _context: SubscriptionContext,
    ) -> BoxFuture<'static, Result<(), ErrorData>> {
        // Listen streams have no session: rmcp's front serves them (`mod.rs`).
        Box::pin(std::future::ready(Err(ErrorData::internal_error(
            "a listen stream is not served in a session",
            None,
        ))))
    }
}
