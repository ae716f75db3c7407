//! `serve`'s flags: the upstreams (as `proxy` takes them), where to listen, who may connect,
//! and each host's bounds.

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use clap::Args;

use crate::args::server::{ServerArgs, flag_duration};

/// `serve`: the upstreams, the listener, and the front's guards.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub(crate) server: ServerArgs,
    /// The address to serve MCP on (`/mcp`), plus `/healthz` and `/readyz`. Loopback unless
    /// told otherwise; port 0 picks a free one (the address is printed on stderr).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8808")]
    pub(crate) listen: SocketAddr,
    /// Show every upstream's tools and prompts as `mcp__<server>__<name>`, even a single one
    /// (the default for two or more).
    #[arg(long)]
    pub(crate) aggregate: bool,
    /// A server that gets one upstream session per host session (a stateful server, such as a
    /// browser) instead of one shared by every host (repeatable).
    #[arg(long = "per-host", value_name = "NAME")]
    pub(crate) per_host: Vec<String>,
    /// Require `Authorization: Bearer <token>` with the token in this environment variable.
    #[arg(long, value_name = "VAR")]
    pub(crate) auth_token_env: Option<String>,
    /// Require one of the tokens in this file (one per line, `token` or `name:token`; `#`
    /// starts a comment line).
    #[arg(long, value_name = "PATH")]
    pub(crate) auth_token_file: Option<PathBuf>,
    /// Accept JWT access tokens of this issuer (`iss`), checked against its published keys
    /// (JWKS, found through its metadata) and naming this gateway's resource URL in `aud`.
    #[arg(long, value_name = "URL")]
    pub(crate) jwt_issuer: Option<String>,
    /// With --jwt-issuer: the issuer's JWKS URL, instead of its metadata's `jwks_uri`.
    #[arg(long, value_name = "URL", requires = "jwt_issuer")]
    pub(crate) jwt_jwks_url: Option<String>,
    /// With --jwt-issuer: how far `exp`, `nbf` and `iat` may be off (at most 5m).
    #[arg(long, value_parser = flag_duration, default_value = "60s", requires = "jwt_issuer")]
    pub(crate) jwt_leeway: Duration,
    /// With --jwt-issuer: the claim that names the caller for --access (`sub`, `client_id`,
    /// `azp`, `scope`, …).
    #[arg(
        long,
        value_name = "CLAIM",
        default_value = "sub",
        requires = "jwt_issuer"
    )]
    pub(crate) jwt_identity_claim: String,
    /// With --jwt-issuer: the least time between two fetches of the issuer's keys (a token
    /// with an unknown key id fetches them again, no sooner).
    #[arg(long, value_parser = flag_duration, default_value = "30s", requires = "jwt_issuer")]
    pub(crate) jwks_refetch: Duration,
    /// This gateway's MCP endpoint as hosts reach it (e.g. `https://gw.example.com/mcp`): the
    /// `resource` of its protected resource metadata and the audience its JWTs must name
    /// (default: `http://<listen address>/mcp`).
    #[arg(long, value_name = "URL")]
    pub(crate) resource_url: Option<String>,
    /// A JSON file saying which tools each caller (a token's name, a JWT's identity claim)
    /// sees and calls, and how many requests per second it may send (see the guide).
    #[arg(long, value_name = "PATH")]
    pub(crate) access: Option<PathBuf>,
    /// Serve a non-loopback address without tokens (anyone who can reach it may use your
    /// servers).
    #[arg(long)]
    pub(crate) allow_unauthenticated: bool,
    /// A `Host` header to accept besides the listener's own address (repeatable; `*` for any).
    #[arg(long = "allowed-host", value_name = "HOST")]
    pub(crate) allowed_hosts: Vec<String>,
    /// A browser origin to accept, e.g. `https://app.example.com` (repeatable).
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    pub(crate) allowed_origins: Vec<String>,
    /// The largest request body, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 4 * 1024 * 1024)]
    pub(crate) max_body: usize,
    /// Requests one host session may have in flight at once.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub(crate) max_requests_per_session: usize,
    /// Host sessions one token (or every host without one) may hold at once.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub(crate) max_sessions_per_token: usize,
    /// Host sessions the gateway holds at once.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub(crate) max_sessions: usize,
    /// How long a host session may go without a request before it is closed.
    #[arg(long, value_parser = flag_duration, default_value = "30m")]
    pub(crate) session_idle: Duration,
    /// How long the shared upstreams are waited for at start, and a host session's own ones at
    /// its `initialize`.
    #[arg(long, value_parser = flag_duration, default_value = "10s")]
    pub(crate) startup_wait: Duration,
    /// How long a call made during an outage waits for the next generation (for servers whose
    /// configuration sets no `callWait`).
    #[arg(long, value_parser = flag_duration, default_value = "10s")]
    pub(crate) call_wait: Duration,
    /// Where host sessions' state is kept: `memory` (this process only), or a Redis URL
    /// (`redis://127.0.0.1:6379`) shared by every replica of a fleet, so that any of them can
    /// serve a host session another one held.
    #[arg(long, value_name = "memory|URL", default_value = "memory")]
    pub(crate) store: String,
    /// On SIGTERM or SIGINT, the longest drain: `/readyz` answers 503 at once, new sessions
    /// are refused, the sessions held here are served until nothing is in flight and nothing
    /// has come for `--drain-quiet`; a request still in flight at this limit is answered "may
    /// have run". A second signal ends the process at once.
    #[arg(long, value_parser = flag_duration, default_value = "30s")]
    pub(crate) drain_limit: Duration,
    /// How long the drain waits, with nothing in flight, for a request still on its way.
    #[arg(long, value_parser = flag_duration, default_value = "1s")]
    pub(crate) drain_quiet: Duration,
    /// During the drain, also refuse (503) the requests of the sessions held here, so that the
    /// balancer sends them to another replica, which takes them over from the store. Only
    /// behind a balancer that sends a 503 to the next replica (scripts/fleet/nginx.conf.in,
    /// scripts/fleet/haproxy.cfg.in), with `--store` shared.
    #[arg(long)]
    pub(crate) drain_hand_off: bool,
    /// Which front serves hosts at /mcp: `own` (the gateway's own: cheaper per call and per
    /// idle session) or `rmcp` (rmcp's Streamable HTTP service, the way back). Default:
    /// `$MCP_RESILIENT_FRONT`, else `own`.
    #[arg(long, value_name = "own|rmcp", value_parser = ["own", "rmcp"])]
    pub(crate) front: Option<String>,
    /// Threads that run the gateway (tokio's workers; one per core by default). One costs
    /// least per call while a core is enough: 18 % less CPU per call at 1,000 calls/s here
    /// (BENCHMARKS.md section 22).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub(crate) workers: Option<u16>,
    #[command(flatten)]
    pub(crate) telemetry: crate::telemetry::TelemetryArgs,
}

impl ServeArgs {
    /// The front asked for: the flag, else `MCP_RESILIENT_FRONT`, else the own front.
    pub(crate) fn host_front(&self) -> Result<mcp_resilient_gateway::http::HostFront, String> {
        use mcp_resilient_gateway::http::HostFront;
        let asked = match &self.front {
            Some(front) => front.clone(),
            None => std::env::var("MCP_RESILIENT_FRONT").unwrap_or_default(),
        };
        match asked.trim() {
            "rmcp" => Ok(HostFront::Rmcp),
            "" | "own" => Ok(HostFront::Own),
            other => Err(format!(
                "--front (or MCP_RESILIENT_FRONT): '{other}' is not own or rmcp"
            )),
        }
    }
}
