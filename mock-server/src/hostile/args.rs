//! The binary's hostile flags: `--hostile KIND` (repeatable), `--discover-refusal SHAPE` (held
//! until the next request with `--discover-late`), and
//! each kind's own options ([`SseArgs`], [`PageArgs`], [`FloodPlan`]). Which kinds a transport
//! takes is checked by the binary's arguments (`cli/args.rs`), which know the transport.

use clap::builder::PossibleValuesParser;

use super::Hostile;
use super::discover::DiscoverRefusal;
use super::flood::FloodPlan;
use super::replies::{PageArgs, ReplyKind};
use super::sse::{SseArgs, SseHostility};

/// The hostile flags of the binary.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
#[command(next_help_heading = "Hostile (servers that answer badly)")]
pub(crate) struct HostileArgs {
    /// A hostile kind (repeatable). `escapes`, `escapes-exit` and `flood` change the mock and add
    /// up (the last two: stdio only); every other kind replaces the mock, the last one given
    /// winning: reply kinds on stdio or http (`huge-pages`, `endless-pages`, `stray-response`,
    /// `duplicate-response`, `malformed-json`), SSE kinds on sse (`invalid-utf8`,
    /// `newline-flood`, `endless-line`, `malformed-json`, `event-flood`).
    #[arg(long = "hostile", value_name = "KIND", value_parser = kinds())]
    pub(crate) kinds: Vec<String>,
    /// How `server/discover` is refused: `empty-result`, `other-result`, `error:CODE`,
    /// `legacy-versions`; http only: `status:N[+body]`, `empty:N[+json|+sse]`.
    #[arg(long = "discover-refusal", value_name = "SHAPE")]
    pub(crate) discover_refusal: Option<DiscoverRefusal>,
    /// stdio: hold the `--discover-refusal` answer until the client's next request (its
    /// `initialize`, once it gave up waiting), and send it just before that request's answer:
    /// a slow server whose answer to the era probe comes after the client fell back.
    #[arg(long = "discover-late", requires = "discover_refusal")]
    pub(crate) discover_late: bool,
    #[command(flatten)]
    pub(crate) sse: SseArgs,
    #[command(flatten)]
    pub(crate) pages: PageArgs,
    #[command(flatten)]
    pub(crate) flood: FloodPlan,
}

/// Every name `--hostile` takes.
fn kinds() -> PossibleValuesParser {
    let mut names: Vec<&'static str> = Hostile::MODS.to_vec();
    for name in ReplyKind::NAMES.into_iter().chain(SseHostility::NAMES) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    PossibleValuesParser::new(names)
}

impl HostileArgs {
    /// The kinds that change the mock itself.
    pub(crate) fn mods(&self) -> Hostile {
        Hostile::from_kinds(&self.kinds)
    }

    /// The last kind given that replaces the mock, if any.
    pub(crate) fn replacing(&self) -> Option<&str> {
        let kinds = self.kinds.iter().rev();
        kinds
            .map(String::as_str)
            .find(|kind| !Hostile::MODS.contains(kind))
    }
}
