//! OAuth against the mock server's OAuth mode (`MockOptions::oauth`): real sockets on
//! 127.0.0.1, the mock as its own authorization server, the headless prompt following its
//! redirects to our loopback callback.

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use crate::common::{LIMIT, echo, fast, no_probe_missed, until, wait_state};
use mcp_mock_server::{MockOptions, MockServer, OAuthOptions};
use mcp_resilient::{
    ConnectionState, ServerConfig, Supervisor, ToolRegistry,
    auth::{self, Auth, FileTokenStore, Headless, MemoryTokenStore, OAuthConfig, TokenStore},
    config::{Heartbeat, ProtocolChoice},
    state::{Cause, Event, Generation},
};
use serde_json::json;
use tokio::time::Instant;

/// The three ways to reach a remote server: Streamable HTTP in each era, legacy SSE.
#[derive(Debug, Clone, Copy)]
enum Wire {
    Http2026,
    Http2025,
    Sse,
}

const WIRES: [Wire; 3] = [Wire::Http2026, Wire::Http2025, Wire::Sse];

async fn mock(oauth: OAuthOptions) -> MockServer {
    MockServer::start(MockOptions {
        oauth: Some(oauth),
        ..MockOptions::default()
    })
    .await
    .expect("mock starts")
}

fn config(server: &MockServer, wire: Wire, oauth: OAuthConfig) -> ServerConfig {
    let config = match wire {
        Wire::Http2026 => {
            ServerConfig::http("authd", server.http_url()).protocol(ProtocolChoice::V2026_07_28)
        }
        Wire::Http2025 => {
            ServerConfig::http("authd", server.http_url()).protocol(ProtocolChoice::V2025_11_25)
        }
        Wire::Sse => ServerConfig::sse("authd", server.sse_url()),
    };
    fast(config).auth(Auth::OAuth(oauth))
}

async fn ready(server: &Supervisor) -> Generation {
    let mut states = server.watch();
    match wait_state(&mut states, |s| {
        matches!(
            s,
            ConnectionState::Ready { .. } | ConnectionState::Failed { .. }
        )
    })
    .await
    {
        ConnectionState::Ready { generation, .. } => generation,
        other => panic!("not ready: {other:?}"),
    }
}

fn generation_of(server: &Supervisor) -> Option<Generation> {
    match server.status().state {
        ConnectionState::Ready { generation, .. } => Some(generation),
        _ => None,
    }
}

/// With a prompt, the first 401 runs the whole flow (discovery from the challenge, dynamic
/// registration, PKCE, loopback redirect) and the server becomes ready with a token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_asks_for_oauth_is_authorized_through_the_prompt() {
    for wire in WIRES {
        let mock = mock(OAuthOptions::default()).await;
        let store = MemoryTokenStore::new();
        let oauth = OAuthConfig::default()
            .store(store.clone())
            .prompt(Headless::new());
        let registry = ToolRegistry::new();
        let server = Supervisor::spawn(config(&mock, wire, oauth), &registry).unwrap();
        ready(&server).await;
        echo(&registry, "hi")
            .await
            .unwrap_or_else(|e| panic!("{wire:?}: {e}"));
        let stats = mock.faults().oauth_stats().expect("oauth mode");
        assert_eq!(stats.registered, 1, "{wire:?}: one dynamic registration");
        assert_eq!(stats.issued.authorization_code, 1, "{wire:?}");
        let stored = store.load().await.unwrap().expect("tokens stored");
        assert_eq!(stored.server_url, config_url(&mock, wire), "{wire:?}");
        assert!(stored.can_refresh(), "{wire:?}: a refresh token is kept");
        server.shutdown().await;
        mock.shutdown().await;
    }
}

fn config_url(mock: &MockServer, wire: Wire) -> String {
    let url = match wire {
        Wire::Sse => mock.sse_url(),
        _ => mock.http_url(),
    };
    url::Url::parse(&url).unwrap().to_string()
}

/// Logs in once with the headless prompt; returns the store holding the tokens.
async fn logged_in(mock: &MockServer, wire: Wire, store: impl TokenStore + Clone + 'static) {
    let config = config(mock, wire, OAuthConfig::default().store(store));
    auth::login(&config, &Headless::new(), LIMIT)
        .await
        .expect("login");
}

/// Logged in (tokens in a memory store), then supervised without a prompt until ready.
async fn running(mock: &MockServer, wire: Wire) -> (MemoryTokenStore, ToolRegistry, Supervisor) {
    let store = MemoryTokenStore::new();
    logged_in(mock, wire, store.clone()).await;
    let registry = ToolRegistry::new();
    let oauth = OAuthConfig::default().store(store.clone());
    let server = Supervisor::spawn(config(mock, wire, oauth), &registry).unwrap();
    ready(&server).await;
    (store, registry, server)
}

/// Tokens that expire during the session, both ahead of time (short lifetime: refreshed
/// before expiry) and behind our back (the server expires them: a 401, one refresh, the request
/// resent), cost no failed call and no generation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_that_expires_mid_session_costs_no_call_and_no_generation() {
    for wire in WIRES {
        let mock = mock(OAuthOptions {
            access_ttl: Duration::from_secs(2),
            ..OAuthOptions::default()
        })
        .await;
        let store = MemoryTokenStore::new();
        logged_in(&mock, wire, store.clone()).await;
        let registry = ToolRegistry::new();
        // No prompt: only refreshes can keep this server authorized.
        let oauth = OAuthConfig::default().store(store.clone());
        let server = Supervisor::spawn(config(&mock, wire, oauth), &registry).unwrap();
        let first = ready(&server).await;
        // Ahead of time: call until rmcp has refreshed twice (each token lives 2 s and is
        // refreshed in its last second).
        let deadline = Instant::now() + LIMIT;
        let mut calls = 0;
        while mock.faults().oauth_stats().unwrap().refreshed < 2 {
            assert!(
                Instant::now() < deadline,
                "{wire:?}: no refreshes within {LIMIT:?}"
            );
            echo(&registry, "tick")
                .await
                .unwrap_or_else(|e| panic!("{wire:?}: call {calls}: {e}"));
            calls += 1;
        }
        // Behind our back: every access token expires now.
        let before = mock.faults().oauth_stats().unwrap();
        assert!(mock.faults().expire_access_tokens() >= 1);
        echo(&registry, "after expiry")
            .await
            .unwrap_or_else(|e| panic!("{wire:?}: {e}"));
        let after = mock.faults().oauth_stats().unwrap();
        assert!(
            after.unauthorized > before.unauthorized,
            "{wire:?}: the expired token was refused"
        );
        assert!(
            after.refreshed > before.refreshed,
            "{wire:?}: and refreshed"
        );
        assert_eq!(
            generation_of(&server),
            Some(first),
            "{wire:?}: same generation"
        );
        assert_eq!(after.invalid_grant, 0, "{wire:?}");
        server.shutdown().await;
        mock.shutdown().await;
    }
}

/// A revoked refresh token cannot be renewed and no prompt is configured: `failed` with cause
/// `unauthorized`, the detail says to log in, and the next try is only after `max_delay`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_refresh_token_fails_the_server_as_unauthorized_without_a_retry_loop() {
    for wire in WIRES {
        let mock = mock(OAuthOptions::default()).await;
        let (store, registry, server) = running(&mock, wire).await;
        mock.faults().revoke_refresh_tokens();
        mock.faults().expire_access_tokens();
        // Three calls at once, each refused with the same token: one refresh between them.
        let refused = tokio::join!(
            echo(&registry, "refused 1"),
            echo(&registry, "refused 2"),
            echo(&registry, "refused 3"),
        );
        assert!(
            refused.0.is_err() && refused.1.is_err() && refused.2.is_err(),
            "{wire:?}: no call can be authorized: {refused:?}"
        );
        let mut states = server.watch();
        let failed = wait_state(&mut states, |s| matches!(s, ConnectionState::Failed { .. })).await;
        let ConnectionState::Failed {
            death, retry_in, ..
        } = failed
        else {
            unreachable!()
        };
        assert_eq!(
            death.cause,
            Cause::Unauthorized,
            "{wire:?}: {}",
            death.detail
        );
        assert!(
            death.detail.contains("mcp-resilient login authd"),
            "{wire:?}: {}",
            death.detail
        );
        assert!(
            death.detail.contains("refresh token was rejected"),
            "{wire:?}: {}",
            death.detail
        );
        let max_delay = server_max_delay();
        assert_eq!(
            retry_in,
            Some(max_delay),
            "{wire:?}: tried again only at max_delay"
        );
        let stats = mock.faults().oauth_stats().unwrap();
        assert_eq!(
            stats.invalid_grant, 1,
            "{wire:?}: the refresh was tried once"
        );
        // The spent refresh token is gone from the store; the record (its client) stays.
        let record = store.load().await.unwrap().expect("the record stays");
        assert!(
            !record.can_refresh(),
            "{wire:?}: the refresh token was dropped"
        );
        server.shutdown().await;
        mock.shutdown().await;
    }
}

/// The authorization server is down when a refresh is needed (the access token expired
/// behind our back, the token endpoint answers 503): the calls made meanwhile fail as a
/// transient fault, never `unauthorized`, the server never goes `failed`, no login is asked
/// for, and the refresh token is kept. Once the endpoint answers, calls go through again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authorization_server_outage_during_a_refresh_is_transient() {
    for wire in WIRES {
        let mock = mock(OAuthOptions::default()).await;
        let (store, registry, server) = running(&mock, wire).await;
        let mut events = server.events();
        mock.faults().fail_token_requests(2);
        mock.faults().expire_access_tokens();
        let deadline = Instant::now() + LIMIT;
        let mut refused = Vec::new();
        while let Err(e) = echo(&registry, "during the outage").await {
            assert!(
                Instant::now() < deadline,
                "{wire:?}: no call went through within {LIMIT:?}: {refused:?}"
            );
            refused.push(e);
        }
        assert!(!refused.is_empty(), "{wire:?}: the outage was seen");
        for e in &refused {
            assert!(
                e.contains("could not be authorized for the call: the authorization server did not answer a refresh")
                    && !e.contains("login"),
                "{wire:?}: {e}"
            );
        }
        let stats = mock.faults().oauth_stats().unwrap();
        assert_eq!(stats.token_unavailable, 2, "{wire:?}");
        assert_eq!(stats.invalid_grant, 0, "{wire:?}");
        assert!(stats.refreshed >= 1, "{wire:?}: refreshed once it answered");
        let record = store.load().await.unwrap().expect("still stored");
        assert!(record.can_refresh(), "{wire:?}: the grant stands");
        while let Ok(Some(event)) = events.try_recv() {
            if let Event::State {
                status:
                    mcp_resilient::Status {
                        state: ConnectionState::Failed { death, .. },
                        ..
                    },
                ..
            } = event
            {
                panic!("{wire:?}: failed during the outage: {death:?}");
            }
        }
        server.shutdown().await;
        mock.shutdown().await;
    }
}

/// A token refreshed ahead of its expiry while the authorization server is down: the token
/// has not expired yet, so it is sent, and the call goes through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_early_refresh_keeps_using_the_token_until_it_expires() {
    // rmcp refreshes when fewer than min(30 s, lifetime / 2) remain: with 10 s, from 5 s before
    // the end; we send the old token while more than 1 s remains.
    let mock = mock(OAuthOptions {
        access_ttl: Duration::from_secs(10),
        ..OAuthOptions::default()
    })
    .await;
    let wire = Wire::Http2026;
    let (store, registry, server) = running(&mock, wire).await;
    let expires_at = store
        .load()
        .await
        .unwrap()
        .and_then(|r| r.expires_at())
        .expect("an expiry");
    // Wait (for the clock, not for an event) until the token is inside rmcp's refresh window.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let window = Duration::from_secs(expires_at - 4).saturating_sub(now);
    assert!(window < LIMIT, "{window:?}");
    // Down from now: the probes inside the window meet the outage too.
    mock.faults().fail_token_requests(1000);
    let before = mock.faults().oauth_stats().unwrap();
    tokio::time::sleep(window).await;
    echo(&registry, "with the old token")
        .await
        .expect("the unexpired token is used");
    let after = mock.faults().oauth_stats().unwrap();
    assert!(
        after.token_unavailable > before.token_unavailable,
        "an early refresh was tried"
    );
    assert_eq!(after.unauthorized, before.unauthorized, "and not needed");
    mock.faults().fail_token_requests(0);
    server.shutdown().await;
    mock.shutdown().await;
}

/// The `max_delay` of [`fast`] policies.
fn server_max_delay() -> Duration {
    fast(ServerConfig::http("x", "http://127.0.0.1:1/mcp"))
        .get_reconnect()
        .get_max_delay()
}

/// A tool that needs a scope the token lacks: 403 `insufficient_scope`, a step-up through the
/// prompt, the call sent again and answered, same generation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_up_is_followed_and_the_call_goes_through() {
    for wire in WIRES {
        let mock = mock(OAuthOptions {
            step_up: Some(("add".to_owned(), "mcp:admin".to_owned())),
            ..OAuthOptions::default()
        })
        .await;
        let store = MemoryTokenStore::new();
        let oauth = OAuthConfig::default()
            .store(store.clone())
            .prompt(Headless::new());
        let registry = ToolRegistry::new();
        let server = Supervisor::spawn(config(&mock, wire, oauth), &registry).unwrap();
        let first = ready(&server).await;
        let granted = store
            .load()
            .await
            .unwrap()
            .unwrap()
            .credentials
            .granted_scopes;
        assert!(
            !granted.contains(&"mcp:admin".to_owned()),
            "{wire:?}: {granted:?}"
        );
        let add = registry.handle("mcp__authd__add").unwrap();
        let sum = add.call(json!({"a": 2, "b": 3})).await;
        assert!(sum.is_ok(), "{wire:?}: {sum:?}");
        let stats = mock.faults().oauth_stats().unwrap();
        assert_eq!(stats.forbidden, 1, "{wire:?}: one 403");
        assert_eq!(
            stats.issued.authorization_code, 2,
            "{wire:?}: a second authorization"
        );
        let granted = store
            .load()
            .await
            .unwrap()
            .unwrap()
            .credentials
            .granted_scopes;
        assert!(
            granted.contains(&"mcp:admin".to_owned()),
            "{wire:?}: {granted:?}"
        );
        assert_eq!(
            generation_of(&server),
            Some(first),
            "{wire:?}: same generation"
        );
        server.shutdown().await;
        mock.shutdown().await;
    }
}

/// Two processes share one token file (two supervisors with two `FileTokenStore`s on the same
/// path) and both find the token expired at once. The refresh token rotates: without the
/// store's lock the second refresh would spend an already spent token (`invalid_grant`). With
/// it, both calls succeed and one valid refresh token is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_concurrent_refreshes_end_with_one_valid_token() {
    let dir = tempfile::tempdir().unwrap();
    let mock = mock(OAuthOptions {
        refresh_delay: Duration::from_millis(300),
        ..OAuthOptions::default()
    })
    .await;
    let file = || FileTokenStore::in_dir(dir.path(), "authd");
    logged_in(&mock, Wire::Http2026, file()).await;
    let (one, two) = (ToolRegistry::new(), ToolRegistry::new());
    let start = |registry: &ToolRegistry| {
        let config = config(&mock, Wire::Http2026, OAuthConfig::default().store(file()));
        Supervisor::spawn(config, registry)
    };
    let (a, b) = (start(&one).unwrap(), start(&two).unwrap());
    ready(&a).await;
    ready(&b).await;
    mock.faults().expire_access_tokens();
    let (x, y) = tokio::join!(echo(&one, "one"), echo(&two, "two"));
    x.expect("first process's call");
    y.expect("second process's call");
    let stats = mock.faults().oauth_stats().unwrap();
    assert_eq!(stats.invalid_grant, 0, "no spent refresh token was used");
    assert_eq!(
        stats.valid_refresh_tokens, 1,
        "one valid refresh token left"
    );
    assert_eq!(
        stats.refreshed, 1,
        "the second process used the first one's refresh"
    );
    // The stored token is the valid one: a third process uses it without refreshing.
    let refreshed = stats.refreshed;
    let three = ToolRegistry::new();
    let c = start(&three).unwrap();
    ready(&c).await;
    echo(&three, "three").await.expect("third process's call");
    assert_eq!(mock.faults().oauth_stats().unwrap().refreshed, refreshed);
    for server in [a, b, c] {
        server.shutdown().await;
    }
    mock.shutdown().await;
}

/// The token file is private to the user and replaced atomically.
#[tokio::test]
async fn the_token_file_is_private_and_replaced_whole() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let mock = mock(OAuthOptions::default()).await;
    let store = FileTokenStore::in_dir(dir.path().join("tokens"), "authd");
    logged_in(&mock, Wire::Http2026, store.clone()).await;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(store.path()), 0o600);
    assert_eq!(mode(&dir.path().join("tokens")), 0o700);
    let record = store.load().await.unwrap().unwrap();
    store.save(&record).await.unwrap();
    let left: Vec<_> = std::fs::read_dir(dir.path().join("tokens"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
    assert_eq!(mode(store.path()), 0o600);
    mock.shutdown().await;
}

/// A login while the server runs (another process, a new client registered) is picked up: when
/// the old token expires, the refresh uses the new client's refresh token, not the old client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_login_while_running_is_picked_up_at_the_next_renewal() {
    let mock = mock(OAuthOptions::default()).await;
    let store = MemoryTokenStore::new();
    logged_in(&mock, Wire::Http2026, store.clone()).await;
    let first_client = store.load().await.unwrap().unwrap().credentials.client_id;
    let registry = ToolRegistry::new();
    let oauth = OAuthConfig::default().store(store.clone());
    let server = Supervisor::spawn(config(&mock, Wire::Http2026, oauth), &registry).unwrap();
    let first = ready(&server).await;
    echo(&registry, "before").await.unwrap();
    logged_in(&mock, Wire::Http2026, store.clone()).await;
    let second_client = store.load().await.unwrap().unwrap().credentials.client_id;
    assert_ne!(
        first_client, second_client,
        "the second login registered anew"
    );
    mock.faults().expire_access_tokens();
    echo(&registry, "after")
        .await
        .expect("renewed with the new client's refresh token");
    let stats = mock.faults().oauth_stats().unwrap();
    assert_eq!(stats.refreshed, 1);
    assert_eq!(stats.invalid_grant, 0);
    assert_eq!(generation_of(&server), Some(first));
    server.shutdown().await;
    mock.shutdown().await;
}

/// The heartbeat probes the server has received.
fn probes(mock: &MockServer) -> usize {
    let probe = |m: &String| m == "ping" || m == "server/discover";
    mock.faults()
        .requests()
        .iter()
        .filter(|r| r.rpc_methods.iter().any(probe))
        .count()
}

/// Supervised with a 600 ms / 500 ms heartbeat, ready, and probed twice: the first probe goes
/// through rmcp's session (whose sends run on tasks of their own), the next ones around it, on
/// the probe's own future, which a timeout drops.
async fn probed_twice(
    mock: &MockServer,
    wire: Wire,
    oauth: OAuthConfig,
) -> (ToolRegistry, Supervisor, Generation) {
    let registry = ToolRegistry::new();
    let config = config(mock, wire, oauth).heartbeat(
        Heartbeat::default()
            .interval(Duration::from_millis(600))
            .timeout(Duration::from_millis(500))
            .failures(2),
    );
    let server = Supervisor::spawn(config, &registry).unwrap();
    let first = ready(&server).await;
    until(&format!("{wire:?}: two probes"), || probes(mock) >= 2).await;
    (registry, server, first)
}

/// A probe whose token the server refused was answered, even when the new token takes longer
/// than the probe timeout to come: that is the authorization server's time, not the MCP
/// server's silence, so no miss is counted. And the renewal is not abandoned with the probe
/// that gave up on it: a refresh, once sent, spends the refresh token it carries, and dropping
/// its answer would leave nothing to renew with but a new login.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewal_that_outlasts_the_probe_timeout_is_neither_a_miss_nor_abandoned() {
    for wire in WIRES {
        let mock = mock(OAuthOptions {
            refresh_delay: Duration::from_millis(1500),
            ..OAuthOptions::default()
        })
        .await;
        let store = MemoryTokenStore::new();
        logged_in(&mock, wire, store.clone()).await;
        let (registry, server, first) =
            probed_twice(&mock, wire, OAuthConfig::default().store(store.clone())).await;
        let mut events = server.events();
        assert!(mock.faults().expire_access_tokens() >= 1);
        // The heartbeat's next probe meets the 401 and waits out the slow refresh.
        until(&format!("{wire:?}: a refresh"), || {
            mock.faults().oauth_stats().unwrap().refreshed >= 1
        })
        .await;
        echo(&registry, "after the slow renewal")
            .await
            .unwrap_or_else(|e| panic!("{wire:?}: {e}"));
        let stats = mock.faults().oauth_stats().unwrap();
        assert_eq!(stats.refreshed, 1, "{wire:?}: one refresh served everyone");
        assert_eq!(
            stats.invalid_grant, 0,
            "{wire:?}: no refresh token was lost"
        );
        assert_eq!(generation_of(&server), Some(first), "{wire:?}");
        no_probe_missed(
            &mut events,
            &format!("{wire:?}: a probe waiting for a renewal counted as a miss"),
        );
        server.shutdown().await;
        mock.shutdown().await;
    }
}

/// A person who takes `delay` to approve: counts the authorizations asked of them, those they
/// finished and those given up on while they were still at it (the prompt's future dropped),
/// then approves as the headless prompt does.
#[derive(Clone)]
struct SlowPerson {
    delay: Duration,
    asked: Arc<AtomicUsize>,
    finished: Arc<AtomicUsize>,
    given_up: Arc<AtomicUsize>,
}

impl SlowPerson {
    fn new(delay: Duration) -> Self {
        SlowPerson {
            delay,
            asked: Arc::default(),
            finished: Arc::default(),
            given_up: Arc::default(),
        }
    }
}

/// Counts a prompt given up on: dropped before it was disarmed.
struct Abandoned(Option<Arc<AtomicUsize>>);

impl Drop for Abandoned {
    fn drop(&mut self) {
        if let Some(count) = self.0.take() {
            count.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[async_trait::async_trait]
impl auth::Prompt for SlowPerson {
    async fn open(&self, url: &str) -> Result<(), auth::PromptError> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let mut abandoned = Abandoned(Some(self.given_up.clone()));
        tokio::time::sleep(self.delay).await;
        abandoned.0 = None;
        let approved = Headless::new().open(url).await;
        self.finished.fetch_add(1, Ordering::SeqCst);
        approved
    }
}

/// Waits (at most [`LIMIT`]) until `count` reaches `at_least`.
async fn counted(count: &AtomicUsize, at_least: usize, what: &str) {
    until(what, || count.load(Ordering::SeqCst) >= at_least).await;
}

/// A renewal still running when the server is shut down (a person who has not answered) ends
/// with it: nothing of the server is left running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewal_still_running_ends_with_the_server() {
    let mock = mock(OAuthOptions::default()).await;
    let store = MemoryTokenStore::new();
    logged_in(&mock, Wire::Http2026, store.clone()).await;
    let person = SlowPerson::new(Duration::from_secs(600));
    let registry = ToolRegistry::new();
    let oauth = OAuthConfig::default()
        .store(store.clone())
        .prompt(person.clone());
    let server = Supervisor::spawn(config(&mock, Wire::Http2026, oauth), &registry).unwrap();
    ready(&server).await;
    mock.faults().revoke_refresh_tokens();
    assert!(mock.faults().expire_access_tokens() >= 1);
    let call = tokio::spawn(async move { echo(&registry, "waits for the person").await });
    counted(&person.asked, 1, "the person asked").await;
    server.shutdown().await;
    counted(&person.given_up, 1, "the person's authorization given up").await;
    let outcome = tokio::time::timeout(LIMIT, call)
        .await
        .expect("the call ends with the server")
        .expect("the call's task");
    assert!(outcome.is_err(), "{outcome:?}");
    assert_eq!(person.finished.load(Ordering::SeqCst), 0);
    mock.shutdown().await;
}

/// An authorization that a probe started (the refresh token revoked, so a person is asked) is
/// not abandoned when the probe gives up after its timeout: the person is asked once, their
/// answer is used, and the generation lives on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authorization_a_probe_started_outlives_the_probe() {
    for wire in WIRES {
        let mock = mock(OAuthOptions::default()).await;
        let store = MemoryTokenStore::new();
        logged_in(&mock, wire, store.clone()).await;
        let person = SlowPerson::new(Duration::from_millis(1500));
        let oauth = OAuthConfig::default()
            .store(store.clone())
            .prompt(person.clone());
        let (registry, server, first) = probed_twice(&mock, wire, oauth).await;
        mock.faults().revoke_refresh_tokens();
        assert!(mock.faults().expire_access_tokens() >= 1);
        counted(&person.finished, 1, "an authorization finished").await;
        echo(&registry, "after the person")
            .await
            .unwrap_or_else(|e| panic!("{wire:?}: {e}"));
        assert_eq!(
            person.asked.load(Ordering::SeqCst),
            1,
            "{wire:?}: the person was asked once"
        );
        assert_eq!(generation_of(&server), Some(first), "{wire:?}");
        server.shutdown().await;
        mock.shutdown().await;
    }
}

/// A store reads the file again once another process replaced it (its in-memory copy is only
/// used while the file is unchanged).
#[tokio::test]
async fn a_file_store_sees_what_another_process_saved() {
    let dir = tempfile::tempdir().unwrap();
    let mock = mock(OAuthOptions::default()).await;
    let (a, b) = (
        FileTokenStore::in_dir(dir.path(), "authd"),
        FileTokenStore::in_dir(dir.path(), "authd"),
    );
    logged_in(&mock, Wire::Http2026, a.clone()).await;
    let first = a.load().await.unwrap().unwrap();
    assert_eq!(
        a.load().await.unwrap().unwrap().credentials.client_id,
        first.credentials.client_id
    );
    logged_in(&mock, Wire::Http2026, b.clone()).await;
    let second = b.load().await.unwrap().unwrap().credentials.client_id;
    assert_ne!(second, first.credentials.client_id);
    assert_eq!(
        a.load().await.unwrap().unwrap().credentials.client_id,
        second
    );
    b.clear().await.unwrap();
    assert!(a.load().await.unwrap().is_none());
    mock.shutdown().await;
}

/// Client credentials (machine to machine, no person, no refresh token): a token is obtained
/// before the first request and again whenever it expires, so no request ever goes out without
/// one, and calls keep working across expiries in the same generation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_credentials_get_a_token_before_each_expiry_bites() {
    for wire in WIRES {
        // 6 s: rmcp renews when under min(30 s, lifetime / 2) is left, counted in whole
        // seconds, so a 2 s token could be sent in its last instant and meet a 401; and at
        // 4 s, a request taken 2 s from its token under a loaded test run met one too.
        let mock = mock(OAuthOptions {
            access_ttl: Duration::from_secs(6),
            clients: machine_client(),
            ..OAuthOptions::default()
        })
        .await;
        let registry = ToolRegistry::new();
        let server = Supervisor::spawn(config(&mock, wire, machine()), &registry).unwrap();
        let first = ready(&server).await;
        let deadline = Instant::now() + LIMIT;
        while mock
            .faults()
            .oauth_stats()
            .unwrap()
            .issued
            .client_credentials
            < 2
        {
            assert!(
                Instant::now() < deadline,
                "{wire:?}: no new tokens within {LIMIT:?}"
            );
            echo(&registry, "m2m")
                .await
                .unwrap_or_else(|e| panic!("{wire:?}: {e}"));
        }
        let stats = mock.faults().oauth_stats().unwrap();
        // One 401: discovery's own unauthenticated probe for the server's challenge, once.
        assert_eq!(
            stats.unauthorized, 1,
            "{wire:?}: a request went out without a valid token"
        );
        assert_eq!(generation_of(&server), Some(first), "{wire:?}");
        assert!(!format!("{:?}", server_config_debug()).contains("m2m-secret"));
        server.shutdown().await;
        mock.shutdown().await;
    }
}

/// An attempt waiting on a slow authorization server is not hedged: its token endpoint taking
/// 1.5 s (more than the 1 s hedge interval) is not the MCP server's silence, and a second
/// attempt beside it would only send discovery's unauthenticated request again (a second 401)
/// and wait on the same exchange. One attempt, one 401, one token, generation 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attempt_waiting_on_a_slow_token_endpoint_is_not_hedged() {
    for wire in WIRES {
        let mock = mock(OAuthOptions {
            clients: machine_client(),
            credentials_delay: Duration::from_millis(1500),
            ..OAuthOptions::default()
        })
        .await;
        let registry = ToolRegistry::new();
        let server = Supervisor::spawn(config(&mock, wire, machine()), &registry).unwrap();
        let first = ready(&server).await;
        echo(&registry, "after a slow token")
            .await
            .unwrap_or_else(|e| panic!("{wire:?}: {e}"));
        let stats = mock.faults().oauth_stats().unwrap();
        assert_eq!(
            stats.unauthorized, 1,
            "{wire:?}: discovery's unauthenticated request went out more than once"
        );
        assert_eq!(stats.issued.client_credentials, 1, "{wire:?}");
        assert_eq!(first.get(), 1, "{wire:?}: a second attempt connected");
        server.shutdown().await;
        mock.shutdown().await;
    }
}

/// The mock's one confidential client, for the client credentials grant.
fn machine_client() -> Vec<(String, Option<String>)> {
    vec![("machine".to_owned(), Some("m2m-secret".to_owned()))]
}

/// Client credentials as that client, tokens kept in memory.
fn machine() -> OAuthConfig {
    OAuthConfig::default()
        .store(MemoryTokenStore::new())
        .client_id("machine")
        .grant(mcp_resilient::auth::Grant::ClientCredentials)
        .client_secret(mcp_resilient::auth::ClientSecret::new("m2m-secret"))
}

/// The `Debug` of an OAuth configuration with a secret in it.
fn server_config_debug() -> String {
    let oauth =
        OAuthConfig::default().client_secret(mcp_resilient::auth::ClientSecret::new("m2m-secret"));
    format!(
        "{:?}",
        ServerConfig::http("x", "http://127.0.0.1:1/mcp").auth(Auth::OAuth(oauth))
    )
}
