//! The gateway's own settings: which servers get one upstream session per host session, the
//! front's guards and its bounds per host.

use std::{sync::Arc, time::Duration};

use crate::{
    ProxyOptions,
    state::{HostStore, MemoryHostStore},
};

use super::{Access, JwtOptions, auth::Tokens};

/// How many sessions one token (or every host without one) may hold at once.
const DEFAULT_SESSIONS_PER_TOKEN: usize = 1024;
/// How many host sessions the gateway holds at once.
const DEFAULT_MAX_SESSIONS: usize = 10_000;
/// How many requests one host session (or one token's session-less requests) may have in flight.
const DEFAULT_REQUESTS_PER_SESSION: usize = 64;
/// The largest request body.
const DEFAULT_MAX_BODY: usize = 4 * 1024 * 1024;
/// How long a host session may stay without a request before it is closed.
const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(30 * 60);
/// How often an idle SSE stream gets a comment (proxies cut silent streams).
const DEFAULT_SSE_KEEP_ALIVE: Duration = Duration::from_secs(15);
/// The longest drain: under Kubernetes' default grace (30 s) it would leave no time to close,
/// so the manifests in `docs/` give the grace more; long enough for a tool call of seconds.
const DEFAULT_DRAIN_LIMIT: Duration = Duration::from_secs(30);
/// Nothing in flight and nothing come for this long: the drain is over.
const DEFAULT_DRAIN_QUIET: Duration = Duration::from_secs(1);

/// The gateway's settings (the upstreams' supervision comes from their
/// [`ServerConfig`](mcp_resilient::ServerConfig)s).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServeOptions {
    /// What every host session shares with the stdio proxy: the startup wait of a session's
    /// own (`per_host`) upstreams, the call wait. (Its `drain` is the stdio proxy's; the
    /// gateway's end is [`drain`](Self::drain).)
    ///
    /// # Default
    /// [`ProxyOptions::default()`]
    pub proxy: ProxyOptions,
    /// The servers that get one upstream session per host session (stateful servers, such as a
    /// browser); every other server is shared by all hosts.
    ///
    /// # Default
    /// None: every server is shared.
    pub per_host: Vec<String>,
    /// The bearer tokens a host must present (`Authorization: Bearer …`).
    ///
    /// # Default
    /// None: no authentication (the gateway then refuses a non-loopback listener unless
    /// [`allow_unauthenticated`](Self::allow_unauthenticated)).
    pub tokens: Tokens,
    /// JWT access tokens of an issuer, accepted beside [`tokens`](Self::tokens), their
    /// audience this gateway's [`resource`](Self::resource).
    ///
    /// # Default
    /// None: only static tokens.
    pub jwt: Option<JwtOptions>,
    /// This gateway's MCP endpoint as hosts reach it (`https://gw.example.com/mcp`): the
    /// `resource` of its protected resource metadata and the audience its JWTs must name. Set
    /// it when hosts reach the gateway through a proxy or by a name.
    ///
    /// # Default
    /// None: `http://<listener address>/mcp`.
    pub resource: Option<String>,
    /// Which tools each caller sees and calls, and how many requests per second it may send.
    ///
    /// # Default
    /// None: every caller sees every tool, unlimited.
    pub access: Option<Access>,
    /// Serve a listener that is not on loopback without [`tokens`](Self::tokens).
    ///
    /// # Default
    /// `false`
    pub allow_unauthenticated: bool,
    /// `Host` values accepted besides the listener's own address (DNS rebinding: a request
    /// naming any other host is refused with 403). `*` accepts every host.
    ///
    /// # Default
    /// None: on loopback, `localhost`, `127.0.0.1` and `::1`; elsewhere, the listener's
    /// address only.
    pub allowed_hosts: Vec<String>,
    /// Browser origins accepted (`https://app.example.com`, `http://localhost:*`); a request
    /// carrying any other `Origin` is refused with 403. Requests without `Origin` (SDK clients)
    /// are not affected.
    ///
    /// # Default
    /// On loopback, `http://localhost:*` and `http://127.0.0.1:*`; elsewhere none.
    pub allowed_origins: Vec<String>,
    /// Bounds per host.
    ///
    /// # Default
    /// [`FrontLimits::default()`]
    pub limits: FrontLimits,
    /// How often an SSE stream with nothing to say gets a keep-alive comment.
    ///
    /// # Default
    /// 15 s
    pub sse_keep_alive: Duration,
    /// Which front serves hosts at `/mcp`.
    ///
    /// # Default
    /// [`HostFront::Own`]
    pub front: HostFront,
    /// Where each host session's state (revision, capabilities, client info, log level,
    /// subscriptions) is kept, by session id.
    ///
    /// # Default
    /// A [`MemoryHostStore`] of this gateway's own.
    pub store: Arc<dyn HostStore>,
    /// What the gateway does between the stop ([`Gateway::serve`](super::Gateway::serve)'s
    /// `stop`, SIGTERM for the CLI) and its end.
    ///
    /// # Default
    /// [`DrainOptions::default()`]
    pub drain: DrainOptions,
    /// The handle a reload is asked through ([`Reload`](super::Reload)): the shared servers
    /// change while the gateway serves.
    ///
    /// # Default
    /// None: the servers are those the gateway started with.
    pub reload: Option<super::Reload>,
}

/// The drain: on the stop, `/readyz` answers 503 at once and new sessions are refused, while
/// the requests of the sessions held here go on being served until none is in flight and none
/// has come for [`quiet`](Self::quiet), or until [`limit`](Self::limit); then the host
/// sessions are written to the store, the upstreams closed, and the gateway ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DrainOptions {
    /// The longest drain. A request still in flight when it passes is answered as the gateway
    /// answers a request lost with its process (a call "may have run"), not cut. An
    /// orchestrator's grace before it kills the process must be longer.
    ///
    /// # Default
    /// 30 s
    pub limit: Duration,
    /// How long the gateway waits, with nothing in flight, for a request that is still on its
    /// way (a balancer slower to notice the 503 of `/readyz` than the hosts are to call).
    ///
    /// # Default
    /// 1 s
    pub quiet: Duration,
    /// Also refuse, with 503, the new requests of the sessions held here (and 2026-07-28
    /// requests), so that a balancer sends them to another replica, which takes the session
    /// over from the shared store: the drain then ends with the calls in flight, however
    /// busy the hosts. Only behind a balancer that sends a request answered 503 to the next
    /// replica, whatever its method (the shipped nginx and HAProxy configurations do), and
    /// with a shared store; elsewhere those hosts would see the 503.
    ///
    /// # Default
    /// `false`: the sessions held here are served to the end of the drain.
    pub hand_off: bool,
}

impl Default for DrainOptions {
    fn default() -> Self {
        Self {
            limit: DEFAULT_DRAIN_LIMIT,
            quiet: DEFAULT_DRAIN_QUIET,
            hand_off: false,
        }
    }
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            proxy: ProxyOptions::default(),
            per_host: Vec::new(),
            tokens: Tokens::none(),
            jwt: None,
            resource: None,
            access: None,
            allow_unauthenticated: false,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            limits: FrontLimits::default(),
            sse_keep_alive: DEFAULT_SSE_KEEP_ALIVE,
            front: HostFront::default(),
            store: Arc::new(MemoryHostStore::new()),
            drain: DrainOptions::default(),
            reload: None,
        }
    }
}

/// Which host-facing Streamable HTTP front serves `/mcp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum HostFront {
    /// rmcp's `StreamableHttpService`, with the gateway's session manager: every revision and
    /// every feature of the transport; each host session has a task and channels of its own.
    Rmcp,
    /// The gateway's own (session-era hosts, with rmcp's for requests without a session): no
    /// task or channel per idle session, a request answered as one JSON body unless it becomes
    /// a stream (progress, a question to the host, a tool call past a short grace; in a fleet
    /// a tool call's stream opens before it runs). Its streams resume with `Last-Event-ID`.
    #[default]
    Own,
}

impl HostFront {
    /// Its name, as `--front` and `MCP_RESILIENT_FRONT` spell it: `rmcp` or `own`.
    pub fn name(self) -> &'static str {
        match self {
            HostFront::Rmcp => "rmcp",
            HostFront::Own => "own",
        }
    }
}

/// What one host may hold or send; past a bound it gets an HTTP status (413, 429) or a
/// JSON-RPC error, and nothing else is affected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FrontLimits {
    /// The largest request body, in bytes (413 past it).
    ///
    /// # Default
    /// 4 MiB
    pub max_body_bytes: usize,
    /// Requests one host session may have in flight at once; session-less (2026-07-28)
    /// requests count per token (429 past it).
    ///
    /// # Default
    /// 64
    pub max_requests_per_session: usize,
    /// Host sessions one token may hold at once (hosts without a token share one count; 429
    /// past it).
    ///
    /// # Default
    /// 1024
    pub max_sessions_per_token: usize,
    /// Host sessions the gateway holds at once, whatever their token (503 past it). Also the
    /// bound on each `per_host` server's upstream sessions.
    ///
    /// # Default
    /// 10,000
    pub max_sessions: usize,
    /// How long a host session may go without a request before it is closed (its `per_host`
    /// upstream sessions with it); the host then gets 404 and starts a new session.
    ///
    /// # Default
    /// 30 min
    pub session_idle: Duration,
}

impl Default for FrontLimits {
    fn default() -> Self {
        Self {
            max_body_bytes: DEFAULT_MAX_BODY,
            max_requests_per_session: DEFAULT_REQUESTS_PER_SESSION,
            max_sessions_per_token: DEFAULT_SESSIONS_PER_TOKEN,
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_idle: DEFAULT_SESSION_IDLE,
        }
    }
}
