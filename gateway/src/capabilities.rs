//! What the proxy offers the host in its `initialize` answer: the upstream's own capabilities
//! (transparent), or the union of the upstreams' (aggregated), with what an upstream not ready
//! yet may offer counted as everything the proxy can pass on.

use rmcp::model::{
    Implementation, InitializeResult, PromptsCapability, ResourcesCapability, ServerCapabilities,
    ToolsCapability,
};

use super::{Mode, shared::Shared};

impl Shared {
    /// The `initialize` answer: the upstream's own (transparent), or the union of the ready
    /// upstreams' (aggregated). What an upstream that is not ready may offer is unknown, so it
    /// counts as offering everything the proxy can pass on.
    pub(super) fn describe(&self) -> InitializeResult {
        let infos: Vec<_> = self
            .upstreams()
            .iter()
            .map(|u| (u.name().to_owned(), u.supervisor.server_info()))
            .collect();
        let mut capabilities = ServerCapabilities::default();
        let mut tools = ToolsCapability::default();
        // Tools come from the registry, which can always announce a change.
        tools.list_changed = Some(true);
        capabilities.tools = Some(tools);
        for (_, info) in &infos {
            match info {
                Some(info) => merge(&mut capabilities, &info.capabilities),
                None => merge(&mut capabilities, &everything()),
            }
        }
        let own = Implementation::new("mcp-resilient", env!("CARGO_PKG_VERSION"));
        let mut result = InitializeResult::new(capabilities);
        match (self.mode, infos.as_slice()) {
            (Mode::Transparent, [(_, Some(info))]) => {
                result.server_info = info.server_info.clone().unwrap_or(own);
                result.instructions = info.instructions.clone();
            }
            _ => {
                result.server_info = own;
                let parts: Vec<String> = infos
                    .iter()
                    .filter_map(|(name, info)| {
                        let text = info.as_ref()?.instructions.as_ref()?;
                        Some(match self.mode {
                            Mode::Transparent => text.clone(),
                            Mode::Aggregated => format!("Server '{name}': {text}"),
                        })
                    })
                    .collect();
                if !parts.is_empty() {
                    result.instructions = Some(parts.join("\n\n"));
                }
            }
        }
        result
    }
}

/// Adds what `more` offers to `into` (tools are the registry's and stay as they are).
fn merge(into: &mut ServerCapabilities, more: &ServerCapabilities) {
    fn or(a: Option<bool>, b: Option<bool>) -> Option<bool> {
        match (a, b) {
            (None, None) => None,
            _ => Some(a.unwrap_or(false) || b.unwrap_or(false)),
        }
    }
    if let Some(more) = &more.resources {
        let into = into.resources.get_or_insert_with(Default::default);
        into.subscribe = or(into.subscribe, more.subscribe);
        into.list_changed = or(into.list_changed, more.list_changed);
    }
    if let Some(more) = &more.prompts {
        let into = into.prompts.get_or_insert_with(Default::default);
        into.list_changed = or(into.list_changed, more.list_changed);
    }
    if more.completions.is_some() {
        into.completions.get_or_insert_with(Default::default);
    }
    if more.logging.is_some() {
        into.logging.get_or_insert_with(Default::default);
    }
}

/// Everything the proxy can pass on.
pub(super) fn everything() -> ServerCapabilities {
    let mut capabilities = ServerCapabilities::default();
    let mut resources = ResourcesCapability::default();
    resources.subscribe = Some(true);
    resources.list_changed = Some(true);
    capabilities.resources = Some(resources);
    let mut prompts = PromptsCapability::default();
    prompts.list_changed = Some(true);
    capabilities.prompts = Some(prompts);
    capabilities.completions = Some(Default::default());
    capabilities.logging = Some(Default::default());
    capabilities
}
