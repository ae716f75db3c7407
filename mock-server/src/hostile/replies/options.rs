//! What a hostile-replies server does ([`ReplyKind`]) and how big its pages and floods are
//! ([`ReplyOptions`]; binary: [`PageArgs`]).

/// The default JSON bytes of a `huge-pages` page: 4 MiB.
const PAGE_BYTES: usize = 4 * 1024 * 1024;

/// The default number of `huge-pages` pages.
const PAGES: u32 = 100;

/// The default number of `notifications/tools/list_changed` in one `list-changed-flood`.
const LIST_CHANGED: u32 = 10_000;

/// How a hostile-replies server misbehaves (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyKind {
    /// Big `tools/list` pages, `pages` of them.
    HugePages,
    /// One-tool pages whose cursor never ends.
    EndlessPages,
    /// A response to an id never sent before every answer.
    StrayResponse,
    /// Every answer twice.
    DuplicateResponse,
    /// A line that is not JSON before every `tools/call` answer (instead of it for `broken`).
    MalformedJson,
    /// `list_changed` notifications, `list_changed` of them, before each of the first two
    /// `tools/list` answers.
    ListChangedFlood,
}

impl ReplyKind {
    /// The names of the kinds on the command line, in the order of the module docs' table.
    pub(crate) const NAMES: [&'static str; 6] = [
        "huge-pages",
        "endless-pages",
        "stray-response",
        "duplicate-response",
        "malformed-json",
        "list-changed-flood",
    ];

    /// The kind named `name` on the command line (`huge-pages`, …), if it is one of these.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "huge-pages" => Self::HugePages,
            "endless-pages" => Self::EndlessPages,
            "stray-response" => Self::StrayResponse,
            "duplicate-response" => Self::DuplicateResponse,
            "malformed-json" => Self::MalformedJson,
            "list-changed-flood" => Self::ListChangedFlood,
            _ => return None,
        })
    }
}

/// How to run a hostile-replies server.
#[derive(Debug, Clone)]
pub struct ReplyOptions {
    /// The misbehaviour.
    pub kind: ReplyKind,
    /// `huge-pages`: the JSON bytes of one page (about; whole tools of ~1 KiB).
    ///
    /// # Default
    /// 4 MiB
    pub page_bytes: usize,
    /// `huge-pages`: how many pages the list has.
    ///
    /// # Default
    /// 100
    pub pages: u32,
    /// `list-changed-flood`: the notifications sent before each flooded `tools/list` answer.
    ///
    /// # Default
    /// 10 000
    pub list_changed: u32,
    /// Remote: the port on 127.0.0.1; 0 picks a free one.
    ///
    /// # Default
    /// 0
    pub port: u16,
}

impl ReplyOptions {
    /// `kind` with every other option at its default.
    pub fn new(kind: ReplyKind) -> Self {
        Self {
            kind,
            page_bytes: PAGE_BYTES,
            pages: PAGES,
            list_changed: LIST_CHANGED,
            port: 0,
        }
    }
}

/// `--page-bytes N` and `--pages N`: the size of a `--hostile huge-pages` list;
/// `--list-changed N`: the size of a `--hostile list-changed-flood` (the other reply kinds take no
/// options).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::Args)]
#[command(
    next_help_heading = "Hostile pages and floods (--hostile huge-pages, list-changed-flood; stdio or http)"
)]
pub(crate) struct PageArgs {
    /// Bytes of JSON per `tools/list` page (about: whole tools of ~1 KiB).
    #[arg(long = "page-bytes", value_name = "N", default_value_t = PAGE_BYTES)]
    pub(crate) page_bytes: usize,
    /// Pages in the list.
    #[arg(long, value_name = "N", default_value_t = PAGES)]
    pub(crate) pages: u32,
    /// `notifications/tools/list_changed` before each flooded `tools/list` answer.
    #[arg(long = "list-changed", value_name = "N", default_value_t = LIST_CHANGED)]
    pub(crate) list_changed: u32,
}

impl PageArgs {
    /// The options of a server of `kind` on `port` (remote; ignored on stdio).
    pub(crate) fn options(&self, kind: ReplyKind, port: u16) -> ReplyOptions {
        ReplyOptions {
            page_bytes: self.page_bytes,
            pages: self.pages,
            list_changed: self.list_changed,
            port,
            ..ReplyOptions::new(kind)
        }
    }
}
