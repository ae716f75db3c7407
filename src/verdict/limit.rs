//! Limits as verdicts: what a list has cost so far against [`Limits`], and the death that says
//! which bound was passed and by how much.
//!
//! # Invariants
//!
//! 1. A page is counted before its items are kept: the page that passes a bound is dropped, so
//!    what a listing holds never exceeds `max_list_bytes` (plus the one page in hand, itself
//!    bounded by `max_message_bytes`).
//! 2. The cursors a listing remembers (to catch a cycle) are counted in its bytes too: a server
//!    cannot grow memory through endless long cursors either.

use std::io;

use serde::Serialize;

use crate::{
    config::{Bytes, Limits},
    state::{Cause, Death}};

/// The running cost of one paginated list (`tools/list`, `prompts/list`, …) against a server's
/// [`Limits`]: for a program that pages through a list itself, with
/// [`Supervisor::request`](crate::Supervisor::request), and must stop where the library would
/// (a page that passes a bound is dropped, never kept in part).
#[derive(Debug)]
pub struct ListBudget {
    /// The method, for the detail: `tools/list`.
    method: &'static str,
    /// What its items are called: `tools`.
    items_word: &'static str,
    max_bytes: usize,
    max_items: usize,
    max_pages: u32,
    pages: u32,
    items: usize,
    bytes: usize,
}

impl ListBudget {
    /// A fresh budget for listing `method`, whose items are `items_word`, under `limits`.
    pub fn new(method: &'static str, items_word: &'static str, limits: &Limits) -> Self {
        Self {
            method,
            items_word,
            max_bytes: limits.max_list_bytes,
            max_items: limits.max_list_items,
            max_pages: limits.max_list_pages,
            pages: 0,
            items: 0,
            bytes: 0,
        }
    }

    /// May another page be fetched? Not once `max_list_pages` pages were.
    pub fn next_page(&self) -> Result<(), Death> {
        if self.pages < self.max_pages {
            return Ok(());
        }
        Err(exceeded(format!(
            "{} exceeded limits.max_list_pages ({}): the cursor went on after page {}",
            self.method, self.max_pages, self.pages
        )))
    }

    /// Counts a page of `items` items and `bytes` bytes of JSON (its items and its cursor); an
    /// error when the list passes a bound with it (invariant 1: then drop the page).
    pub(crate) fn page(&mut self, items: usize, bytes: usize) -> Result<(), Death> {
        self.pages += 1;
        self.items = self.items.saturating_add(items);
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > self.max_bytes {
            return Err(exceeded(format!(
                "{} exceeded limits.max_list_bytes ({}): {} in {}",
                self.method,
                Bytes(self.max_bytes),
                seen(self.max_bytes, self.bytes),
                pages(self.pages)
            )));
        }
        if self.items > self.max_items {
            return Err(exceeded(format!(
                "{} exceeded limits.max_list_items ({}): {} {} in {}",
                self.method,
                self.max_items,
                self.items,
                self.items_word,
                pages(self.pages)
            )));
        }
        Ok(())
    }
}

impl ListBudget {
    /// Counts a page of `items` and its `cursor` (their size as compact JSON): an error when
    /// the list passes a bound with it, and then the page must be dropped.
    pub fn count<T: Serialize>(&mut self, items: &[T], cursor: Option<&str>) -> Result<(), Death> {
        let bytes = json_len(items) + cursor.map_or(0, str::len);
        self.page(items.len(), bytes)
    }
}

/// `seen` bytes, in the unit people read, unless that would look like `max` itself (8.01 MiB
/// printed as `8 MiB` past a bound of `8 MiB`): then exactly.
fn seen(max: usize, seen: usize) -> String {
    let (shown, bound) = (Bytes(seen).to_string(), Bytes(max).to_string());
    match shown == bound {
        true => format!("{seen} bytes"),
        false => shown,
    }
}

/// `1 page`, `3 pages`.
fn pages(n: u32) -> String {
    match n {
        1 => "1 page".to_owned(),
        n => format!("{n} pages"),
    }
}

/// A death of cause `limit_exceeded` with `detail`.
pub(crate) fn exceeded(detail: impl Into<String>) -> Death {
    Death::new(Cause::LimitExceeded, detail)
}

/// The length of `value` as compact JSON, counted without building the text.
pub(crate) fn json_len<T: Serialize + ?Sized>(value: &T) -> usize {
    let mut count = Count(0);
    // Our own model types always serialize; a failure would only make the count short.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// A writer that only counts.
struct Count(usize);

impl io::Write for Count {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(bytes: usize, items: usize, pages: u32) -> Limits {
        Limits {
            max_list_bytes: bytes,
            max_list_items: items,
            max_list_pages: pages,
            ..Limits::default()
        }
    }

    #[test]
    fn the_page_that_passes_a_bound_names_it_and_the_value_seen() {
        let mut budget = ListBudget::new("tools/list", "tools", &limits(10 * 1024, 100, 5));
        budget.page(10, 6 * 1024).expect("under the bound");
        let death = budget.page(10, 6 * 1024).expect_err("past the bytes");
        assert_eq!(death.cause, Cause::LimitExceeded);
        assert_eq!(
            death.detail,
            "tools/list exceeded limits.max_list_bytes (10 KiB): 12 KiB in 2 pages"
        );
        let mut budget = ListBudget::new("tools/list", "tools", &limits(10 * 1024, 100, 5));
        let death = budget.page(1, 10 * 1024 + 7).expect_err("just past");
        assert!(
            death.detail.ends_with("(10 KiB): 10247 bytes in 1 page"),
            "{}",
            death.detail
        );
        let mut budget = ListBudget::new("prompts/list", "prompts", &limits(1 << 20, 15, 5));
        budget.page(10, 100).expect("under the bound");
        let death = budget.page(10, 100).expect_err("past the items");
        assert_eq!(
            death.detail,
            "prompts/list exceeded limits.max_list_items (15): 20 prompts in 2 pages"
        );
    }

    #[test]
    fn pages_run_out_at_the_page_limit() {
        let mut budget = ListBudget::new("tools/list", "tools", &limits(1 << 20, 100, 2));
        for _ in 0..2 {
            budget.next_page().expect("a page left");
            budget.page(1, 10).expect("small");
        }
        let death = budget.next_page().expect_err("no third page");
        assert_eq!(
            death.detail,
            "tools/list exceeded limits.max_list_pages (2): the cursor went on after page 2"
        );
    }

    #[test]
    fn json_len_is_the_length_of_the_compact_text() {
        let value = serde_json::json!({"name": "echo", "list": [1, 2, "three"]});
        assert_eq!(json_len(&value), value.to_string().len());
    }
}
