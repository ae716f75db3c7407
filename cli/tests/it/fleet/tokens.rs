//! OAuth tokens shared by a fleet: replicas (supervisors here, each with its own
//! `RedisTokenStore` on one real Redis) find the access token expired at the same moment. The
//! mock's refresh tokens rotate: a refresh token spent twice is `invalid_grant`. The lock in
//! Redis makes them refresh once.

use std::time::Duration;

use mcp_mock_server::{MockOptions, MockServer, OAuthOptions};
use mcp_resilient::{
    ConnectionState, ServerConfig, Supervisor, ToolRegistry,
    auth::{self, Auth, Headless, OAuthConfig},
    config::ProtocolChoice,
};

use mcp_resilient_gateway::state::RedisTokenStore;

use super::redis::Redis;
use crate::common::{LIMIT, echo, fast, wait_state};

/// Replicas refreshing at once.
const REPLICAS: usize = 4;

fn config(mock: &MockServer, redis: &Redis) -> ServerConfig {
    let store = RedisTokenStore::open(&redis.url(), "authd").expect("a token store");
    let config = ServerConfig::http("authd", mock.http_url()).protocol(ProtocolChoice::V2025_11_25);
    // A probe waits for the refresh like any request: its timeout is well past the mock's
    // refresh delay, so that a loaded machine cannot turn the slow refresh into a lost session.
    let config = fast(config);
    let heartbeat = config
        .get_heartbeat()
        .clone()
        .interval(Duration::from_secs(5))
        .timeout(Duration::from_secs(3));
    config
        .heartbeat(heartbeat)
        .auth(Auth::OAuth(OAuthConfig::default().store(store)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_whose_token_expires_at_once_spend_the_rotating_refresh_token_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let redis = Redis::start(dir.path()).await;
    let mock = MockServer::start(MockOptions {
        oauth: Some(OAuthOptions {
            refresh_delay: Duration::from_millis(300),
            ..OAuthOptions::default()
        }),
        ..MockOptions::default()
    })
    .await
    .expect("mock starts");
    auth::login(&config(&mock, &redis), &Headless::new(), LIMIT)
        .await
        .expect("login");

    let registries: Vec<ToolRegistry> = (0..REPLICAS).map(|_| ToolRegistry::new()).collect();
    let mut servers = Vec::new();
    for registry in &registries {
        let server = Supervisor::spawn(config(&mock, &redis), registry).expect("spawn");
        let mut states = server.watch();
        let ready = wait_state(&mut states, |s| {
            matches!(
                s,
                ConnectionState::Ready { .. } | ConnectionState::Failed { .. }
            )
        })
        .await;
        assert!(matches!(ready, ConnectionState::Ready { .. }), "{ready:?}");
        servers.push(server);
    }

    mock.faults().expire_access_tokens();
    let calls = registries
        .iter()
        .enumerate()
        .map(|(n, registry)| async move { echo(registry, &format!("replica {n}")).await });
    for (n, result) in futures::future::join_all(calls)
        .await
        .into_iter()
        .enumerate()
    {
        result.unwrap_or_else(|e| panic!("replica {n}'s call: {e}"));
    }
    let stats = mock.faults().oauth_stats().expect("oauth stats");
    assert_eq!(stats.invalid_grant, 0, "no spent refresh token was used");
    assert_eq!(stats.refreshed, 1, "one refresh for the whole fleet");
    assert_eq!(stats.valid_refresh_tokens, 1);
    for server in servers {
        server.shutdown().await;
    }
    mock.shutdown().await;
}
