//! The binary's OAuth flags: `--oauth` and the knobs that refine it. Each knob left out keeps
//! [`OAuthOptions::default`]'s value.

use std::time::Duration;

use clap::builder::TypedValueParser;
use clap::value_parser;

use super::options::OAuthOptions;

/// `--oauth` and its knobs.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
#[command(next_help_heading = "OAuth (--transport sse|http)")]
pub(crate) struct OAuthArgs {
    /// Every MCP request needs a bearer token; the mock is its own authorization server.
    #[arg(long)]
    pub(crate) oauth: bool,
    /// Seconds an access token stays valid [default: 3600].
    #[arg(
        long = "oauth-access-ttl",
        value_name = "SECS",
        requires = "oauth",
        value_parser = value_parser!(u64).map(Duration::from_secs)
    )]
    pub(crate) access_ttl: Option<Duration>,
    /// A pre-registered client, confidential when it has a secret (repeatable).
    #[arg(
        long = "oauth-client",
        value_name = "ID[:SECRET]",
        requires = "oauth",
        value_parser = client
    )]
    pub(crate) clients: Vec<(String, Option<String>)>,
    /// A `tools/call` of TOOL with a token lacking SCOPE gets 403 `insufficient_scope`.
    #[arg(
        long = "oauth-step-up",
        value_name = "TOOL:SCOPE",
        requires = "oauth",
        value_parser = step_up
    )]
    pub(crate) step_up: Option<(String, String)>,
    /// Milliseconds `/token` waits before it answers a `refresh_token` grant [default: 0].
    #[arg(
        long = "oauth-refresh-delay-ms",
        value_name = "MS",
        requires = "oauth",
        value_parser = value_parser!(u64).map(Duration::from_millis)
    )]
    pub(crate) refresh_delay: Option<Duration>,
}

/// `A:B` with both parts non-empty (the first `:` splits).
fn pair(value: &str, what: &str) -> Result<(String, String), String> {
    match value.split_once(':') {
        Some((a, b)) if !a.is_empty() && !b.is_empty() => Ok((a.to_owned(), b.to_owned())),
        _ => Err(format!("expected {what}")),
    }
}

/// `ID` (a public client) or `ID:SECRET` (a confidential one).
fn client(value: &str) -> Result<(String, Option<String>), String> {
    match value.contains(':') || value.is_empty() {
        false => Ok((value.to_owned(), None)),
        true => pair(value, "ID[:SECRET]").map(|(id, secret)| (id, Some(secret))),
    }
}

fn step_up(value: &str) -> Result<(String, String), String> {
    pair(value, "TOOL:SCOPE")
}

impl OAuthArgs {
    /// The OAuth mode these flags ask for, if `--oauth` was given.
    pub(crate) fn options(&self) -> Option<OAuthOptions> {
        if !self.oauth {
            return None;
        }
        let mut options = OAuthOptions::default();
        if let Some(ttl) = self.access_ttl {
            options.access_ttl = ttl;
        }
        options.clients = self.clients.clone();
        options.step_up = self.step_up.clone();
        if let Some(delay) = self.refresh_delay {
            options.refresh_delay = delay;
        }
        Some(options)
    }
}
