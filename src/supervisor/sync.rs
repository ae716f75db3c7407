//! Phase 1 of a tool sync: fetch every page, build the next set, touch nothing.

use std::collections::HashSet;

use rmcp::{
    Peer, RoleClient,
    model::{PaginatedRequestParams, Tool},
};

/// Lists every tool, following cursors for at most `max_pages` pages. Fails on a repeated
/// cursor (a server that loops) or when the cap is reached; the caller keeps its previous set.
pub(crate) async fn list_all_tools(
    peer: &Peer<RoleClient>,
    max_pages: u32,
) -> Result<Vec<Tool>, String> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    for _ in 0..max_pages {
        let params = cursor
            .clone()
            .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let page = peer
            .list_tools(params)
            .await
            .map_err(|e| format!("tools/list failed: {e}"))?;
        tools.extend(page.tools);
        match page.next_cursor {
            None => return Ok(tools),
            Some(next) if !seen.insert(next.clone()) => {
                return Err(format!("tools/list repeated cursor {next:?}"));
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(format!("tools/list needed more than {max_pages} pages"))
}
