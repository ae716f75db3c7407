//! Fault injection for a remote mock server: [`Faults`], the in-process handle of every
//! control that the `/_mock/*` routes ([`super::admin`]) offer over HTTP. Each method changes
//! the server's state ([`super::state`]) and nothing else; what the faults then do to requests
//! is the gate's ([`super::gate`], [`super::inject`]) and the transports'. The OAuth controls
//! are in [`super::oauth`].

use std::sync::Arc;
use std::time::Duration;

use super::report::{MockState, RecordedRequest};
use super::state::ServerState;
use super::status::{InvalidFault, StatusFault};
use super::wire::WireCounts;
use crate::hostile::discover::DiscoverRefusal;
use crate::set_tools::SetTools;

/// Fault injection for one running [`MockServer`](crate::MockServer); cheap to clone.
#[derive(Clone)]
pub struct Faults {
    pub(crate) state: Arc<ServerState>,
}

impl Faults {
    /// From now on no MCP request is answered and nothing is sent on open streams.
    pub fn hang(&self) {
        self.state.shared.set_hang(true);
    }

    /// Sends `GOAWAY` on every HTTP/2 connection open now (hyper's graceful shutdown: the
    /// streams in flight finish, then the connection closes); an HTTP/1.1 connection closes
    /// after its request in flight. Later connections are not affected.
    pub fn goaway(&self) {
        self.state.wire.goaway();
    }

    /// The next `count` HTTP/2 requests are reset with `RST_STREAM REFUSED_STREAM` before any
    /// route sees them (replacing what was left to refuse; 0 turns it off).
    pub fn refuse_streams(&self, count: u32) {
        self.state.wire.refuse_streams(count);
    }

    /// Every HTTP/2 connection open now stops answering the client's `PING`s (they are kept from
    /// the server's HTTP/2 layer), while the TCP connection stays open and every other frame
    /// flows; connections accepted later answer. What a half-dead path (a middlebox that
    /// stopped forwarding one direction's control frames) looks like to a client's keep-alive.
    pub fn silence_pings(&self) {
        self.state.wire.pings.silence_open();
    }

    /// What the wire has seen: connections accepted, requests by HTTP version, streams refused.
    pub fn wire(&self) -> WireCounts {
        self.state.wire.counts()
    }

    /// Ends a hang: held requests and stream events go out.
    pub fn unhang(&self) {
        self.state.shared.set_hang(false);
    }

    /// Ends every open SSE stream (legacy and Streamable HTTP) and forgets every session.
    pub async fn drop_streams(&self) {
        self.state.drop_streams();
        self.expire_sessions().await;
    }

    /// Ends every open SSE stream and keeps the sessions: what a proxy that cuts idle streams
    /// does. A client may open its Streamable HTTP standalone stream again on the same session.
    pub fn cut_streams(&self) {
        self.state.drop_streams();
    }

    /// Forgets every session: legacy POSTs and Streamable HTTP requests then get 404.
    pub async fn expire_sessions(&self) {
        self.state.legacy.forget_all();
        self.state.streamable.sessions.write().await.clear();
    }

    /// Loses one Streamable HTTP session: from now on every request carrying `id` as its
    /// `Mcp-Session-Id` is answered 404, while the other sessions are served as before and the
    /// lost session's standalone stream, if open, stays open (a server that forgot one session
    /// without ending its stream). Counted in `faults_injected`.
    pub fn lose_session(&self, id: &str) {
        self.state.inject.lose_session(id);
    }

    /// While on, a Streamable HTTP request with an unknown `Mcp-Session-Id` gets 400, not 404.
    pub fn set_stale_400(&self, on: bool) {
        self.state.set_stale_400(on);
    }

    /// Delays every MCP request by `delay` (zero turns it off).
    pub fn set_slow(&self, delay: Duration) {
        self.state.set_slow(delay);
    }

    /// Delays every GET (the Streamable HTTP standalone stream, the legacy SSE stream) by
    /// `delay` before the server sees it (zero turns it off): the stream opens late, and what
    /// the server sends outside a request's own stream meanwhile has nowhere to go.
    pub fn set_slow_streams(&self, delay: Duration) {
        self.state.set_slow_streams(delay);
    }

    /// New legacy SSE streams announce `endpoint` (absolute) instead of `/message?…`; `None` resets.
    pub fn set_cross_origin(&self, endpoint: Option<String>) {
        self.state.set_cross_origin(endpoint);
    }

    /// Every open legacy SSE stream, and every new one, sends one `message` event of `bytes`
    /// bytes (0 turns it off for new streams).
    pub fn set_oversized(&self, bytes: usize) {
        self.state.oversized.send_replace(bytes);
    }

    /// Same as the `set_tools` tool; returns the number of tools afterwards.
    pub async fn set_tools(&self, change: SetTools) -> usize {
        self.state.shared.set_tools(&change).await
    }

    /// Adds one to `mock://counter` and sends `notifications/resources/updated` for it to every
    /// subscriber (initialize-era `resources/subscribe` sessions and 2026-07-28 listen
    /// subscriptions whose filter names it); returns the new value. Same as the `bump` tool.
    ///
    /// # Cancel safety
    /// The counter is bumped before the first await; dropping the future may leave some
    /// subscribers un-notified.
    pub async fn bump_counter(&self) -> u64 {
        self.state.shared.bump_counter().await
    }

    /// Every `tools/list` page from now on carries this `ttlMs` (a 2026-07-28 cache hint: list
    /// again after it); `None` leaves it out, as by default.
    pub fn set_list_ttl(&self, ttl: Option<Duration>) {
        self.state.shared.set_list_ttl(ttl);
    }

    /// Every MCP request received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.requests()
    }

    /// Forgets the recorded requests.
    pub fn clear_requests(&self) {
        self.state.clear_requests();
    }

    /// Ends every live `subscriptions/listen` subscription. Graceful: each gets its final
    /// `SubscriptionsListenResult`. Not graceful: the HTTP response of each listen request
    /// that arrived so far ends without it (the SSE stream is cut; nothing else is written).
    pub fn end_listens(&self, graceful: bool) {
        self.state.shared.end_listens(graceful);
    }

    /// Switches Streamable HTTP between sessions (off, the default) and none (on), for
    /// requests arriving from now on; see [`MockOptions::stateless`](crate::MockOptions).
    /// Sessions opened before stay known to the session manager but are not consulted while
    /// on. Legacy SSE is not affected.
    pub fn set_stateless(&self, on: bool) {
        self.state.set_stateless(on);
    }

    /// Boot id, pid, open sessions, calls served, answers injected, requests by method, live
    /// subscriptions, the stateless switch, the counter, live resource subscriptions, the last
    /// log level set and cancelled calls.
    pub async fn state(&self) -> MockState {
        let streamable = self.state.streamable.sessions.read().await.len();
        MockState {
            boot_id: self.state.shared.boot_id.clone(),
            pid: self.state.shared.pid,
            sessions: self.state.legacy.open_count() + streamable,
            calls: self.state.shared.calls(),
            streams: self.state.open_streams(),
            faults_injected: self.faults_injected(),
            methods: self.state.shared.methods(),
            listens: self.state.shared.listens.count(),
            stateless: self.state.stateless(),
            counter: self.state.shared.counter(),
            resource_subscriptions: self.state.shared.resource_subscriptions(),
            log_level: self.state.shared.log_level.name(),
            cancelled: self.state.shared.cancelled(),
        }
    }

    /// Resolves once at least `count` GET streams are open. A server notification reaches a
    /// Streamable HTTP client only through its standalone stream, so tests that trigger
    /// `list_changed` wait for it first.
    ///
    /// # Cancel safety
    /// Cancel safe; it only observes a counter.
    pub async fn wait_streams(&self, count: usize) {
        self.state.wait_streams(count).await;
    }

    /// Dies like a crash: stops accepting and aborts every connection and session. The port is
    /// free again once the server task has noticed (a `MockServer::start` on it waits for that).
    pub fn kill(&self) {
        self.state.kill.cancel();
    }

    /// While on, accepted connections are closed at once.
    pub fn refuse(&self, on: bool) {
        self.state.refuse(on);
    }

    /// From now on the gate answers matching MCP requests itself with `fault.status` (see
    /// [`StatusFault`]); `None` clears it. Either resets the fault's counters.
    ///
    /// # Errors
    /// A status outside 200–599 or a header value with control characters; the previous
    /// setting then stays.
    pub fn set_status_fault(&self, fault: Option<StatusFault>) -> Result<(), InvalidFault> {
        self.state.inject.set_status(fault)
    }

    /// MCP requests the gate answered itself so far (status faults, redirects, modern-only
    /// rejections), never handed to the server.
    pub fn faults_injected(&self) -> u64 {
        self.state.inject.injected()
    }

    /// While on, a POST to `/mcp` carrying an `initialize` request gets HTTP 400 with a
    /// `-32022` JSON-RPC error naming `2026-07-28` as the only supported version; everything
    /// else reaches the server, whose `server/discover` then lists `2026-07-28` alone.
    pub fn set_modern_only(&self, on: bool) {
        self.state.shared.set_modern_only(on);
    }

    /// While on, `subscriptions/listen` is answered `-32601` (method not found) while the
    /// server still declares tools and resources `listChanged`: what an rmcp server sends that
    /// enables list changes and never implements `accepted_subscription_filter`.
    pub fn set_refuse_listen(&self, on: bool) {
        self.state.shared.set_refuse_listen(on);
    }

    /// While set, every MCP request is answered `307 Temporary Redirect` to `location`;
    /// `None` ends it.
    ///
    /// # Errors
    /// A location that is not a valid header value; the previous setting then stays.
    pub fn set_redirect(&self, location: Option<String>) -> Result<(), InvalidFault> {
        self.state.inject.set_redirect(location)
    }

    /// From now on a Streamable HTTP `server/discover` request is answered with `shape` instead
    /// of by the server (see [`DiscoverRefusal`]); `None` ends it. Everything else, `initialize`
    /// included, is served as usual: a 2025-11-25 server that refuses discovery its own way.
    pub fn set_discover_refusal(&self, shape: Option<DiscoverRefusal>) {
        self.state.shared.discover.set(shape);
    }

    /// Turns the hostile kind `escapes` on or off (see [`crate::hostile::escapes`]).
    pub fn set_escapes(&self, on: bool) {
        self.state.shared.set_escapes(on);
    }
}
