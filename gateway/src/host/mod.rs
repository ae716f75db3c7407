//! The hosts as the upstreams see them: an upstream's requests (elicitation, sampling, roots) go
//! to the host whose call caused them, its notifications to the hosts they concern.
//!
//! A set of upstreams either belongs to one host ([`Target::Owner`]: the stdio proxy, and the
//! gateway's `per_host` servers) or is shared by every host session ([`Target::Shared`]: the
//! gateway's `shared` servers). An owned upstream asks its owner and tells its owner. A shared
//! upstream asks the one host that has calls in flight on it ([`Callers`]); when none or
//! several have, nobody is asked and the upstream gets an error that says why (invariant 2 of
//! [`callers`]). Its notifications go through a [`Fanout`] (the gateway's).

// Sampling, roots and logging are deprecated by SEP-2577, but hosts and servers of the session
// era use them, and the proxy passes them on.
#![allow(deprecated)]

mod asking;
mod callers;
mod link;
mod notify;

use std::{collections::HashMap, fmt, sync::Arc};

use rmcp::model::{ElicitResult, ElicitationAction, ErrorData, RequestId, ServerNotification};

use super::Mode;
use mcp_resilient::host::{Ask, HostHandlers};

#[cfg_attr(not(feature = "serve"), allow(unused_imports))]
pub(crate) use asking::Asker;
pub(crate) use callers::Callers;
pub(crate) use link::HostLink;
pub(crate) use notify::for_host;

/// The in-flight calls of each upstream of a set, by server name.
pub(crate) type CallerMap = HashMap<String, Arc<Callers>>;

#[cfg_attr(not(feature = "serve"), allow(dead_code))]
/// Where an upstream's notifications go when its set is shared by every host session.
pub(crate) trait Fanout: Send + Sync + fmt::Debug + 'static {
    /// Passes `notification` from `server` to the host sessions it concerns. Must not wait:
    /// it runs in a task rmcp starts per notification.
    fn notify(&self, server: &Arc<str>, notification: ServerNotification);
}

/// Whom a set of upstreams belongs to.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// One host: the stdio proxy's, or one host session's `per_host` servers.
    Owner(Arc<HostLink>),
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    /// Every host session of the gateway.
    Shared(Arc<dyn Fanout>),
}

/// The handlers every upstream of a set gets, for `target`.
///
/// An owned set offers the upstream what its host declared it answers, no more; a shared set
/// offers elicitation and sampling (asked during a call, so the calling host can be told), not
/// roots (asked at any time, of no one host).
pub(crate) fn handlers(target: Target, callers: Arc<CallerMap>, mode: Mode) -> HostHandlers {
    let asks: Vec<Ask> = match &target {
        Target::Owner(link) => [Ask::Elicitation, Ask::Sampling, Ask::Roots]
            .into_iter()
            .filter(|ask| link.answers(*ask))
            .collect(),
        Target::Shared(_) => vec![Ask::Elicitation, Ask::Sampling],
    };
    let told = target.clone();
    let mut handlers = HostHandlers::new().on_notification(move |server, notification| {
        match &told {
            Target::Owner(link) => {
                if let Some(notification) = for_host(&server, mode, notification) {
                    link.outbox.notify(notification);
                }
            }
            Target::Shared(fanout) => fanout.notify(&server, notification),
        }
        std::future::ready(())
    });
    let route = Route { target, callers };
    if asks.contains(&Ask::Elicitation) {
        let route = route.clone();
        handlers = handlers.on_elicit(move |server, request| {
            let asked = route.asker(&server, Ask::Elicitation);
            async move {
                match asked {
                    Ok((link, origin)) => link.elicit(request, origin).await,
                    // A host that cannot answer declines, as a host without elicitation would.
                    Err(Refusal::Cannot) => Ok(ElicitResult::new(ElicitationAction::Decline)),
                    Err(refusal) => Err(refusal.error(&server, Ask::Elicitation)),
                }
            }
        });
    }
    if asks.contains(&Ask::Sampling) {
        let route = route.clone();
        handlers = handlers.on_sample(move |server, request| {
            let asked = route.asker(&server, Ask::Sampling);
            async move {
                let (link, origin) =
                    asked.map_err(|refusal| refusal.error(&server, Ask::Sampling))?;
                link.sample(request, origin).await
            }
        });
    }
    if asks.contains(&Ask::Roots) {
        handlers = handlers.on_roots(move |server| {
            let asked = route.asker(&server, Ask::Roots);
            async move {
                let (link, origin) = asked.map_err(|refusal| refusal.error(&server, Ask::Roots))?;
                link.roots(origin).await
            }
        });
    }
    handlers
}

/// How an upstream's request finds its host.
#[derive(Debug, Clone)]
struct Route {
    target: Target,
    callers: Arc<CallerMap>,
}

/// Why nobody was asked.
#[derive(Debug)]
enum Refusal {
    /// No host, or several, has calls in flight on the shared upstream.
    Unknown,
    /// The host did not declare it answers this.
    Cannot,
}

impl Refusal {
    fn error(&self, server: &str, ask: Ask) -> ErrorData {
        match self {
            Refusal::Unknown => ErrorData::internal_error(
                format!(
                    "the gateway shares server '{server}' between hosts and cannot tell which \
                     host this request is for (none or several are calling it); configure the \
                     server with sessions per host to route its requests"
                ),
                None,
            ),
            Refusal::Cannot => ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("the host does not answer {ask} requests"),
                None,
            ),
        }
    }
}

impl Route {
    /// The host `server`'s request is for, and the host's request it serves if known.
    fn asker(&self, server: &str, ask: Ask) -> Result<(Arc<HostLink>, Option<RequestId>), Refusal> {
        let callers = self.callers.get(server);
        let (link, origin) = match &self.target {
            Target::Owner(link) => {
                let origin = callers.and_then(|c| c.origin_of(link));
                (link.clone(), origin)
            }
            Target::Shared(_) => callers.and_then(|c| c.sole()).ok_or(Refusal::Unknown)?,
        };
        match link.answers(ask) {
            true => Ok((link, origin)),
            false => Err(Refusal::Cannot),
        }
    }
}
