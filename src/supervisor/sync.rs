//! Phase 1 of a tool sync: fetch every page, build the next set, touch nothing.

use std::{collections::HashSet, time::Duration};

use rmcp::{
    Peer, RoleClient,
    model::{PaginatedRequestParams, Tool},
};

/// One complete tool listing.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    pub(crate) tools: Vec<Tool>,
    /// The shortest `ttlMs` any page carried (2026-07-28): how long the list may be trusted
    /// before it should be fetched again.
    pub(crate) ttl: Option<Duration>,
}

/// Lists every tool, following cursors for at most `max_pages` pages. Fails on a repeated
/// cursor (a server that loops) or when the cap is reached; the caller keeps its previous set.
pub(crate) async fn list_all_tools(
    peer: &Peer<RoleClient>,
    max_pages: u32,
) -> Result<Listing, String> {
    let mut listing = Listing::default();
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
        listing.tools.extend(page.tools);
        // 0 means "do not cache", not "refresh at once".
        if let Some(ttl) = page.ttl_ms.filter(|ms| *ms > 0).map(Duration::from_millis) {
            listing.ttl = Some(listing.ttl.map_or(ttl, |t| t.min(ttl)));
        }
        match page.next_cursor {
            None => return Ok(listing),
            Some(next) if !seen.insert(next.clone()) => {
                return Err(format!("tools/list repeated cursor {next:?}"));
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(format!("tools/list needed more than {max_pages} pages"))
}
