//! The proxy's own settings: how it shows its upstreams to the host ([`Mode`]) and how long it
//! waits for them ([`ProxyOptions`]).

use std::time::Duration;

/// How long `initialize` waits for the upstreams before answering with what the proxy knows.
const DEFAULT_STARTUP_WAIT: Duration = Duration::from_secs(10);
/// How long a call made during an outage waits for the next generation, unless the server's
/// configuration sets its own `call_wait`.
const DEFAULT_CALL_WAIT: Duration = Duration::from_secs(10);
/// How long requests in flight may still be answered once the host's session ends.
const DEFAULT_DRAIN: Duration = Duration::from_millis(500);

/// Whether the host sees one upstream as itself or several under public names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One upstream; raw names, the upstream's own capabilities and server info.
    Transparent,
    /// Several upstreams; tools and prompts as `mcp__<server>__<name>`.
    Aggregated,
}

/// The proxy's own settings (the upstreams' supervision comes from their [`ServerConfig`](mcp_resilient::ServerConfig)s).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProxyOptions {
    /// How long `initialize` waits for the upstreams to be ready before it answers with what the
    /// proxy knows (the tools then arrive with `notifications/tools/list_changed`).
    ///
    /// # Default
    /// 10 s
    pub startup_wait: Duration,
    /// The `call_wait` given to every upstream whose configuration does not set one: how long a
    /// call made during an outage waits for the next generation before it is answered with the
    /// plain-language tool error.
    ///
    /// # Default
    /// 10 s
    pub call_wait: Duration,
    /// Once the host's session ends (stdin closed, or a stop), how long requests still in
    /// flight may be answered and what is queued for the host may be written; then they are
    /// abandoned (and cancelled upstream). Short, so that a host restarting the proxy does not
    /// wait on a hung server: with an upstream session's `DELETE` (bounded to 1 s) the exit
    /// stays under the 2 s after which hosts kill the proxy.
    ///
    /// # Default
    /// 500 ms
    pub drain: Duration,
}

impl Default for ProxyOptions {
    fn default() -> Self {
        Self {
            startup_wait: DEFAULT_STARTUP_WAIT,
            call_wait: DEFAULT_CALL_WAIT,
            drain: DEFAULT_DRAIN,
        }
    }
}
