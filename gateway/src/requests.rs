//! The host's requests that name a resource, a prompt or a completion, routed to the upstream
//! that listed it (aggregated) or to the only one (transparent); and the log level, set on
//! every upstream that logs.

// Logging, roots and resource subscriptions are deprecated by SEP-2577 / the 2026-07-28 listen
// stream, but the host side of the proxy speaks the session era, where they are how it works.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::{
    ErrorData,
    model::{
        ClientRequest, CompleteRequest, CompleteRequestParams, CompleteResult, ReadResourceRequest,
        ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Reference,
        SetLevelRequest, SetLevelRequestParams,
    },
    service::SubscriptionContext,
};

use mcp_resilient::{CallError, call::CallOptions};

use super::{
    forward::{self, ask},
    front::Front,
    handler::ProxyHandler,
    shared::not_initialized,
    upstream::Upstream,
};

impl ProxyHandler {
    /// A 2026-07-28 host's listen stream over the HTTP front: its resource subscriptions are
    /// this host's while the stream lasts.
    pub(super) async fn listen_for_host(
        &self,
        front: Arc<dyn Front>,
        context: SubscriptionContext,
    ) -> Result<(), ErrorData> {
        let uris = context.sink().accepted().resource_subscriptions.clone();
        for uri in uris.iter().flatten() {
            if let Err(error) = self.subscribe_for_host(uri).await {
                tracing::debug!(%uri, error = %error.message, "a listen stream's subscription was not taken");
            }
        }
        let ended = front.listen(self.shared.clone(), context).await;
        for uri in uris.iter().flatten() {
            let _ = self.unsubscribe_for_host(uri).await;
        }
        ended
    }

    /// The upstream that serves resource `uri` in aggregated mode: the one that listed it (or a
    /// template it matches, tried in order), after a fresh listing if it is not known yet.
    pub(super) async fn resource_owner(&self, uri: &str) -> Result<Arc<Upstream>, ErrorData> {
        let shared = &self.shared;
        if let Some(only) = shared.only() {
            return Ok(only.clone());
        }
        if shared.routes.resource(uri).is_none() {
            forward::resources(&shared.upstreams(), &shared.routes).await;
        }
        match shared.routes.resource(uri) {
            Some(index) => Ok(shared.upstreams()[index].clone()),
            None => Err(ErrorData::resource_not_found(
                format!("no upstream lists the resource '{uri}'"),
                None,
            )),
        }
    }

    /// Subscribes the host to `uri`: the upstream that has it is subscribed when this host is
    /// the first of its hosts to want it.
    pub(super) async fn subscribe_for_host(&self, uri: &str) -> Result<(), ErrorData> {
        let owner = self.resource_owner(uri).await?;
        let link = &self.shared.link;
        if !link.subscribe(uri, owner.name()) || !owner.shares.subscribe(uri) {
            return Ok(());
        }
        if let Err(error) = owner.supervisor.subscribe(uri).await {
            link.unsubscribe(uri);
            owner.shares.unsubscribe(uri);
            return Err(forward::request_error(&owner, error));
        }
        Ok(())
    }

    /// Unsubscribes the host from `uri`: the upstream is unsubscribed when this host was the
    /// last of its hosts to want it.
    pub(super) async fn unsubscribe_for_host(&self, uri: &str) -> Result<(), ErrorData> {
        let owner = self.resource_owner(uri).await?;
        if !self.shared.link.unsubscribe(uri) || !owner.shares.unsubscribe(uri) {
            return Ok(());
        }
        owner
            .supervisor
            .unsubscribe(uri)
            .await
            .map_err(|error| forward::request_error(&owner, error))
    }

    /// The upstream index and raw name of a public prompt name (aggregated mode).
    pub(super) async fn prompt_owner(&self, public: &str) -> Result<(usize, String), ErrorData> {
        let shared = &self.shared;
        if shared.routes.prompt(public).is_none() {
            forward::prompts(&shared.upstreams(), &shared.routes).await;
        }
        shared
            .routes
            .prompt(public)
            .ok_or_else(|| ErrorData::invalid_params(format!("no prompt named '{public}'"), None))
    }

    pub(super) async fn read(
        &self,
        request: ReadResourceRequestParams,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let read = |params: ReadResourceRequestParams| {
            ClientRequest::ReadResourceRequest(ReadResourceRequest::new(params))
        };
        let shared = &self.shared;
        if shared.only().is_some() || shared.routes.resource(&request.uri).is_some() {
            let owner = self.resource_owner(&request.uri).await?;
            let result: ReadResourceResult = ask(&owner, read(request)).await?;
            return Ok(result.into());
        }
        // Aggregated, and no listing names the URI: a listed resource that appeared since, or a
        // URI made from a template. The first upstream that can read it answers.
        if let Ok(owner) = self.resource_owner(&request.uri).await {
            let result: ReadResourceResult = ask(&owner, read(request)).await?;
            return Ok(result.into());
        }
        let mut last = None;
        for upstream in shared.upstreams().iter() {
            match ask::<ReadResourceResult>(upstream, read(request.clone())).await {
                Ok(result) => return Ok(result.into()),
                Err(error) => last = Some(error),
            }
        }
        Err(last.unwrap_or_else(not_initialized))
    }

    pub(super) async fn complete_for(
        &self,
        mut request: CompleteRequestParams,
    ) -> Result<CompleteResult, ErrorData> {
        let shared = &self.shared;
        let owner = match (shared.only(), &mut request.r#ref) {
            (Some(only), _) => only.clone(),
            (None, Reference::Prompt(prompt)) => {
                let (index, raw) = self.prompt_owner(&prompt.name).await?;
                prompt.name = raw;
                shared.upstreams()[index].clone()
            }
            (None, Reference::Resource(template)) => {
                if shared.routes.template(&template.uri).is_none() {
                    forward::templates(&shared.upstreams(), &shared.routes).await;
                }
                let index = shared.routes.template(&template.uri).ok_or_else(|| {
                    ErrorData::invalid_params(
                        format!("no upstream lists the resource template '{}'", template.uri),
                        None,
                    )
                })?;
                shared.upstreams()[index].clone()
            }
            (None, _) => {
                return Err(ErrorData::invalid_params(
                    "the proxy cannot route this kind of completion reference",
                    None,
                ));
            }
        };
        ask(
            &owner,
            ClientRequest::CompleteRequest(CompleteRequest::new(request)),
        )
        .await
    }

    /// Every upstream that logs gets the level (transparent: the answer is the upstream's).
    pub(super) async fn set_levels(&self, request: SetLevelRequestParams) -> Result<(), ErrorData> {
        let shared = &self.shared;
        shared.link.set_level(request.level);
        for upstream in shared.upstreams().iter() {
            upstream.set_level(shared.link.id(), request.level);
        }
        // Each upstream is sent the most verbose level its hosts set (this host's, unless the
        // upstream is shared with a host that wants more).
        let effective = |upstream: &Upstream| {
            let mut request = request.clone();
            request.level = upstream.level().unwrap_or(request.level);
            request
        };
        let send = |upstream: &Arc<Upstream>| {
            let request = ClientRequest::SetLevelRequest(SetLevelRequest::new(effective(upstream)));
            let upstream = upstream.clone();
            async move { ask::<rmcp::model::EmptyResult>(&upstream, request).await }
        };
        if let Some(only) = shared.only()
            && !only.per_request_levels()
        {
            // The server's own refusal is the host's answer; an outage is not: the level is
            // kept and sent to the next generation.
            let request = ClientRequest::SetLevelRequest(SetLevelRequest::new(effective(&only)));
            return match only
                .supervisor
                .request(request, CallOptions::default())
                .await
            {
                Ok(_) => Ok(()),
                Err(CallError::Server(error)) => Err(error),
                Err(error) => {
                    tracing::info!(server = %only.name(), %error, "log level kept for the next generation");
                    Ok(())
                }
            };
        }
        let upstreams = shared.upstreams();
        let logging: Vec<_> = upstreams
            .iter()
            .filter(|u| {
                !u.per_request_levels()
                    && u.supervisor
                        .server_info()
                        .is_some_and(|info| info.capabilities.logging.is_some())
            })
            .collect();
        for (upstream, result) in logging
            .iter()
            .zip(futures::future::join_all(logging.iter().map(|u| send(u))).await)
        {
            if let Err(error) = result {
                tracing::warn!(server = %upstream.name(), error = %error.message, "logging/setLevel not taken");
            }
        }
        Ok(())
    }
}
