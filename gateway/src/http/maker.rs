//! How a host session's handler is made: the upstreams it has of its own (`per_host`) and the
//! shared ones, split once at the start; and the maker each front calls for a new session.

use std::sync::Arc;

use mcp_resilient::{ServerConfig, config::Sessions as UpstreamSessions};

use super::hub::Hub;
use crate::{
    Mode, ProxyHandler,
    host::HostLink,
    outbox::{Form, NotificationBuffer, Outbox},
    shared::Shared,
};

/// Makes the handler of one host session, with a front's hooks.
pub(in crate::http) type Make =
    Arc<dyn Fn(Arc<dyn crate::front::Front>) -> ProxyHandler + Send + Sync>;

impl Hub {
    /// Makes the handler of one host session, with a front's hooks: its own upstreams (`own`, to
    /// start at its `initialize`), the shared ones, and its link to the host.
    pub(in crate::http) fn maker(
        &self,
        mode: Mode,
        own: Vec<ServerConfig>,
        options: &super::ServeOptions,
        buffer: NotificationBuffer,
    ) -> Make {
        let (proxy, shared_set, store) = (
            options.proxy.clone(),
            self.common.clone(),
            options.store.clone(),
        );
        Arc::new(move |front| {
            let link = Arc::new(HostLink::with_store(
                Outbox::with_form(buffer, Form::Messages),
                "tcp",
                store.clone(),
            ));
            let shared = Shared::new(
                mode,
                own.clone(),
                Some(shared_set.clone()),
                proxy.clone(),
                link,
            );
            ProxyHandler::with_front(Arc::new(shared), front)
        })
    }
}

/// The servers with one upstream session per host session, and the shared ones.
pub(in crate::http) fn split(
    configs: Vec<ServerConfig>,
    per_host: &[String],
) -> Result<(Vec<ServerConfig>, Vec<ServerConfig>), super::ServeError> {
    if let Some(unknown) = per_host
        .iter()
        .find(|name| !configs.iter().any(|c| c.name() == name.as_str()))
    {
        return Err(super::ServeError::UnknownPerHost(unknown.clone()));
    }
    Ok(configs.into_iter().partition(|c| {
        c.get_sessions() == UpstreamSessions::PerHost || per_host.iter().any(|n| n == c.name())
    }))
}
