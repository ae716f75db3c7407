//! Requests other than tool calls, sent to an upstream with the call rules, and what the
//! aggregated mode needs to route them: which upstream listed which resource URI, template and
//! prompt.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError},
};

use rmcp::model::{
    ClientRequest, ErrorData, ListPromptsRequest, ListResourceTemplatesRequest,
    ListResourcesRequest, ListResourcesResult, PaginatedRequestParams, Prompt, Resource,
    ResourceTemplate, ServerResult,
};
use serde::de::DeserializeOwned;

use super::{
    outage::{self, Standing},
    upstream::Upstream,
};
use mcp_resilient::config::ListBudget;
use mcp_resilient::{CallError, call::CallOptions};

/// Sends `request` to `upstream` and reads the answer as `T`.
pub(super) async fn ask<T: DeserializeOwned>(
    upstream: &Upstream,
    request: ClientRequest,
) -> Result<T, ErrorData> {
    match upstream
        .supervisor
        .request(request, CallOptions::default())
        .await
    {
        Ok(result) => read_as(result),
        Err(error) => Err(request_error(upstream, error)),
    }
}

/// The answer as the type the request expects. The result union is untagged, so an answer may
/// have been read as another variant with the same fields; going through its JSON reads it as
/// what it must be.
pub(super) fn read_as<T: DeserializeOwned>(result: ServerResult) -> Result<T, ErrorData> {
    let value = serde_json::to_value(&result)
        .map_err(|e| ErrorData::internal_error(format!("unreadable upstream answer: {e}"), None))?;
    serde_json::from_value(value).map_err(|e| {
        ErrorData::internal_error(
            format!("the upstream's answer has the wrong shape: {e}"),
            None,
        )
    })
}

/// A failed request as the host's JSON-RPC error: the upstream's own error as it sent it, or an
/// internal error whose message is the plain-language account of the outage.
pub(super) fn request_error(upstream: &Upstream, error: CallError) -> ErrorData {
    match error {
        CallError::Server(error) => error,
        other => ErrorData::internal_error(
            outage::explain(upstream.name(), &other, &standing(upstream)),
            None,
        ),
    }
}

/// Where `upstream` stands now.
pub(super) fn standing(upstream: &Upstream) -> Standing {
    Standing {
        state: upstream.supervisor.status().state,
        revive_in: upstream.revive_in(),
    }
}

/// Which upstream (by index) listed each resource URI, resource template and public prompt
/// name, as of the last aggregated listing.
#[derive(Debug, Default)]
pub(super) struct Routes {
    resources: Mutex<HashMap<String, usize>>,
    templates: Mutex<HashMap<String, usize>>,
    /// Public prompt name → (upstream, the prompt's name there).
    prompts: Mutex<HashMap<String, (usize, String)>>,
}

impl Routes {
    pub(super) fn resource(&self, uri: &str) -> Option<usize> {
        lock(&self.resources).get(uri).copied()
    }

    pub(super) fn template(&self, template: &str) -> Option<usize> {
        lock(&self.templates).get(template).copied()
    }

    pub(super) fn prompt(&self, public: &str) -> Option<(usize, String)> {
        lock(&self.prompts).get(public).cloned()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Every page of one list, within the upstream's limits (pages, items, bytes): a list that
/// passes one is left out whole, with the limit named, rather than kept in part or in full.
async fn all_pages<T: DeserializeOwned + Paged>(
    upstream: &Upstream,
    make: impl Fn(Option<PaginatedRequestParams>) -> ClientRequest,
) -> Result<Vec<T::Item>, ErrorData> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    let mut budget = ListBudget::new(T::METHOD, T::ITEMS, upstream.supervisor.limits());
    let over = |death: mcp_resilient::state::Death| ErrorData::internal_error(death.detail, None);
    loop {
        budget.next_page().map_err(over)?;
        let params = cursor
            .take()
            .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let page: T = ask(upstream, make(params)).await?;
        let (page_items, next) = page.split();
        budget.count(&page_items, next.as_deref()).map_err(over)?;
        items.extend(page_items);
        match next {
            Some(next) => cursor = Some(next),
            None => return Ok(items),
        }
    }
}

/// A paginated list result.
trait Paged {
    type Item: serde::Serialize;
    /// The method, for a limit's detail: `resources/list`.
    const METHOD: &'static str;
    /// What its items are called: `resources`.
    const ITEMS: &'static str;
    fn split(self) -> (Vec<Self::Item>, Option<String>);
}

impl Paged for ListResourcesResult {
    type Item = Resource;
    const METHOD: &'static str = "resources/list";
    const ITEMS: &'static str = "resources";
    fn split(self) -> (Vec<Resource>, Option<String>) {
        (self.resources, self.next_cursor)
    }
}

impl Paged for rmcp::model::ListResourceTemplatesResult {
    type Item = ResourceTemplate;
    const METHOD: &'static str = "resources/templates/list";
    const ITEMS: &'static str = "resource templates";
    fn split(self) -> (Vec<ResourceTemplate>, Option<String>) {
        (self.resource_templates, self.next_cursor)
    }
}

impl Paged for rmcp::model::ListPromptsResult {
    type Item = Prompt;
    const METHOD: &'static str = "prompts/list";
    const ITEMS: &'static str = "prompts";
    fn split(self) -> (Vec<Prompt>, Option<String>) {
        (self.prompts, self.next_cursor)
    }
}

/// The upstreams that can take part in a list of `kind`: the ready ones whose server declared
/// it (none removed by a reload). An upstream in an outage is left out of the list (its items
/// come back with it; the host hears `list_changed` from it then).
fn listing(
    upstreams: &[Arc<Upstream>],
    declares: impl Fn(&rmcp::model::ServerCapabilities) -> bool,
) -> impl Iterator<Item = (usize, &Arc<Upstream>)> {
    upstreams.iter().enumerate().filter(move |(_, upstream)| {
        // A server a reload removed keeps its place in the list (`reload.rs`), not in lists.
        !upstream.retired()
            && upstream
                .supervisor
                .server_info()
                .is_some_and(|info| declares(&info.capabilities))
    })
}

/// Every ready upstream's resources, remembered for routing.
pub(super) async fn resources(upstreams: &[Arc<Upstream>], routes: &Routes) -> Vec<Resource> {
    let mut all = Vec::new();
    let mut map = HashMap::new();
    for (index, upstream) in listing(upstreams, |c| c.resources.is_some()) {
        match all_pages::<ListResourcesResult>(upstream, |p| {
            ClientRequest::ListResourcesRequest(ListResourcesRequest {
                params: p,
                ..Default::default()
            })
        })
        .await
        {
            Ok(list) => {
                for resource in list {
                    map.entry(resource.uri.clone()).or_insert(index);
                    all.push(resource);
                }
            }
            Err(error) => skipped(upstream, "resources", &error),
        }
    }
    *lock(&routes.resources) = map;
    all
}

/// Every ready upstream's resource templates, remembered for routing.
pub(super) async fn templates(
    upstreams: &[Arc<Upstream>],
    routes: &Routes,
) -> Vec<ResourceTemplate> {
    let mut all = Vec::new();
    let mut map = HashMap::new();
    for (index, upstream) in listing(upstreams, |c| c.resources.is_some()) {
        match all_pages::<rmcp::model::ListResourceTemplatesResult>(upstream, |p| {
            ClientRequest::ListResourceTemplatesRequest(ListResourceTemplatesRequest {
                params: p,
                ..Default::default()
            })
        })
        .await
        {
            Ok(list) => {
                for template in list {
                    map.entry(template.uri_template.clone()).or_insert(index);
                    all.push(template);
                }
            }
            Err(error) => skipped(upstream, "resource templates", &error),
        }
    }
    *lock(&routes.templates) = map;
    all
}

/// Every ready upstream's prompts under public names, remembered for routing.
pub(super) async fn prompts(upstreams: &[Arc<Upstream>], routes: &Routes) -> Vec<Prompt> {
    let mut all = Vec::new();
    let mut map = HashMap::new();
    for (index, upstream) in listing(upstreams, |c| c.prompts.is_some()) {
        match all_pages::<rmcp::model::ListPromptsResult>(upstream, |p| {
            ClientRequest::ListPromptsRequest(ListPromptsRequest {
                params: p,
                ..Default::default()
            })
        })
        .await
        {
            Ok(list) => {
                for mut prompt in list {
                    let public =
                        mcp_resilient::registry::public_name(upstream.name(), &prompt.name);
                    map.insert(public.clone(), (index, prompt.name.clone()));
                    prompt.name = public;
                    all.push(prompt);
                }
            }
            Err(error) => skipped(upstream, "prompts", &error),
        }
    }
    *lock(&routes.prompts) = map;
    all
}

fn skipped(upstream: &Upstream, what: &str, error: &ErrorData) {
    tracing::warn!(server = %upstream.name(), %what, error = %error.message, "left out of the aggregated list");
}
