//! Phase 1 of a tool sync: fetch every page, build the next set, touch nothing.

use std::{collections::HashSet, time::Duration};

use rmcp::{
    ServiceError,
    model::{PaginatedRequestParams, Tool},
};

use super::link::Link;

use crate::{
    config::Limits,
    state::{Cause, Death},
    transport::judge_listing,
    verdict::limit::{self, ListBudget},
};

/// One complete tool listing.
#[derive(Debug, Default)]
pub(in crate::supervisor) struct Listing {
    pub(in crate::supervisor) tools: Vec<Tool>,
    /// The shortest `ttlMs` any page carried (2026-07-28): how long the list may be trusted
    /// before it should be fetched again.
    pub(in crate::supervisor) ttl: Option<Duration>,
}

/// Lists every tool, following cursors within `limits` (pages, items, bytes: see
/// [`ListBudget`]). Fails on a repeated cursor (a server that loops: `connect_failed`), or with
/// cause `limit_exceeded` as soon as a page passes a bound — that page is not kept, and no further
/// page is asked for. The caller keeps its previous set.
pub(in crate::supervisor) async fn list_all_tools(
    link: &Link,
    limits: &Limits,
    labels: &crate::telemetry::Labels,
) -> Result<Listing, Death> {
    let mut listing = Listing::default();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    let mut budget = ListBudget::new("tools/list", "tools", limits);
    loop {
        budget.next_page()?;
        let params = cursor
            .clone()
            .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let op = crate::telemetry::Op::internal(labels, "tools/list");
        let page = link.list_tools(params).await;
        op.end(match &page {
            Ok(_) => crate::telemetry::Outcome::Ok,
            Err(ServiceError::McpError(e)) => crate::telemetry::Outcome::Rpc(e),
            Err(_) => crate::telemetry::Outcome::Failed("connect_failed"),
        });
        let page = page.map_err(|e| judge_listing(&e, limits))?;
        let cursor_bytes = page.next_cursor.as_ref().map_or(0, String::len);
        budget.page(
            page.tools.len(),
            limit::json_len(&page.tools) + cursor_bytes,
        )?;
        listing.tools.extend(page.tools);
        // 0 means "do not cache", not "refresh at once".
        if let Some(ttl) = page.ttl_ms.filter(|ms| *ms > 0).map(Duration::from_millis) {
            listing.ttl = Some(listing.ttl.map_or(ttl, |t| t.min(ttl)));
        }
        match page.next_cursor {
            None => return Ok(listing),
            Some(next) if !seen.insert(next.clone()) => {
                return Err(Death::new(
                    Cause::ConnectFailed,
                    format!("tools/list repeated cursor {next:?}"),
                ));
            }
            Some(next) => cursor = Some(next),
        }
    }
}
