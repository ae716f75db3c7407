//! The binary's flags for the remote modes (`--transport sse|http`): the SSE retry hint,
//! sessions or none, a redirect and an injected status ([`StatusFault`]) with its companions,
//! HTTP/1.1 alone or an HTTP/2 stream limit.
//! That they are given only with a remote transport is checked by the binary's arguments
//! (`cli/args.rs`), which know the transport.

use std::time::Duration;

use clap::builder::{NonEmptyStringValueParser, TypedValueParser};
use clap::value_parser;

use super::options::MockOptions;
use super::status::StatusFault;

/// The remote flags of the binary.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
#[command(next_help_heading = "Remote (--transport sse|http)")]
pub(crate) struct RemoteArgs {
    /// The SSE `retry:` hint of Streamable HTTP streams, in milliseconds [default: 100].
    #[arg(
        long = "sse-retry-ms",
        value_name = "MS",
        value_parser = value_parser!(u64).map(Duration::from_millis)
    )]
    pub(crate) sse_retry: Option<Duration>,
    /// http only: Streamable HTTP without sessions.
    #[arg(long)]
    pub(crate) stateless: bool,
    /// Every MCP request gets 307 to this location.
    #[arg(long, value_name = "URL", value_parser = NonEmptyStringValueParser::new())]
    pub(crate) redirect: Option<String>,
    /// Answer MCP requests with this HTTP status (200–599) instead of serving them.
    #[arg(long = "fail-status", value_name = "N")]
    pub(crate) fail_status: Option<u16>,
    /// With --fail-status: answer only the K-th, 2K-th, … matching request [default: 1].
    #[arg(long = "fail-every", value_name = "K", requires = "fail_status")]
    pub(crate) fail_every: Option<u32>,
    /// With --fail-status: answer at most N requests [default: unlimited].
    #[arg(long = "fail-count", value_name = "N", requires = "fail_status")]
    pub(crate) fail_count: Option<u32>,
    /// With --fail-status: a `Retry-After` header (seconds, or an HTTP date).
    #[arg(long = "retry-after", value_name = "S", requires = "fail_status")]
    pub(crate) retry_after: Option<String>,
    /// With --fail-status: only POSTs holding a request of one of these JSON-RPC methods
    /// (comma-separated) [default: every GET and POST].
    #[arg(long = "fail-methods", value_name = "a,b", requires = "fail_status")]
    pub(crate) fail_methods: Option<String>,
    /// With --fail-status: a `WWW-Authenticate` header.
    #[arg(long = "www-authenticate", value_name = "V", requires = "fail_status")]
    pub(crate) www_authenticate: Option<String>,
    /// Serve HTTP/1.1 alone [default: HTTP/1.1 or HTTP/2 by prior knowledge (h2c)].
    #[arg(long = "http1-only")]
    pub(crate) http1_only: bool,
    /// The HTTP/2 `SETTINGS_MAX_CONCURRENT_STREAMS` of each connection [default: 200].
    #[arg(
        long = "h2-max-streams",
        value_name = "N",
        conflicts_with = "http1_only"
    )]
    pub(crate) h2_max_streams: Option<u32>,
    /// Serve https with this certificate (chain) and key, PEM files: ALPN `h2` and `http/1.1`
    /// (`http/1.1` alone with --http1-only) [default: plain TCP].
    #[arg(long = "tls", num_args = 2, value_names = ["CERT", "KEY"])]
    pub(crate) tls: Option<Vec<std::path::PathBuf>>,
}

impl RemoteArgs {
    /// The SSE retry hint: `--sse-retry-ms`, or the in-process default.
    pub(crate) fn sse_retry(&self) -> Duration {
        self.sse_retry.unwrap_or(MockOptions::default().sse_retry)
    }

    /// The status fault `--fail-status` and its companions ask for, if any.
    pub(crate) fn status_fault(&self) -> Option<StatusFault> {
        let mut fault = StatusFault::new(self.fail_status?);
        if let Some(every) = self.fail_every {
            fault.every = every;
        }
        fault.count = self.fail_count;
        fault.retry_after = self.retry_after.clone();
        fault.www_authenticate = self.www_authenticate.clone();
        if let Some(methods) = &self.fail_methods {
            let methods = methods.split(',').filter(|m| !m.is_empty());
            fault.methods = methods.map(str::to_owned).collect();
        }
        Some(fault)
    }
}
