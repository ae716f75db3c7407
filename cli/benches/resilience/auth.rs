//! Section 10, authorization: what OAuth costs a call, and how fast the token events are
//! handled, against Streamable HTTP mock processes (protocol 2025-11-25).
//!
//! - per call: sequential `echo` on a mock without OAuth and no auth, and on a mock in OAuth mode
//!   with the token in memory (`MemoryTokenStore`) and in a token file (`FileTokenStore`: rmcp
//!   reads the store before every request), in rotating rounds;
//! - login: the whole headless authorization (discovery from the 401, dynamic registration,
//!   PKCE, the loopback redirect, the code exchange, the store write);
//! - renewal: the first call after the server expired every access token (401, refresh, the
//!   call sent again), and its generation (must stay the same);
//! - refusal: from a call after the refresh token was revoked to state `failed` (`unauthorized`).

use std::time::{Duration, Instant};

use mcp_resilient::{
    ConnectionState, Supervisor, ToolRegistry,
    auth::{self, Auth, FileTokenStore, Headless, MemoryTokenStore, OAuthConfig},
    config::Heartbeat,
    state::Cause,
};
use serde_json::json;

use crate::{
    Mode,
    mock::{self, LIMIT, MockProcess, Res},
    stats::{Row, Samples},
};

const SECTION: &str = "10. authorization (Streamable HTTP, 2025-11-25)";
const NAME: &str = "authd";

/// A Streamable HTTP mock process in OAuth mode (or not), with its child.
async fn oauth_mock(oauth: bool) -> Res<(MockProcess, tokio::process::Child)> {
    let prefix: &[&str] = match oauth {
        true => &["mock-server", "--oauth"],
        false => &["mock-server"],
    };
    let (child, port) = mcp_mock_server::spawn_process(mock::binary(), prefix, "http", 0, LIMIT)
        .await
        .map_err(|e| format!("spawn mock: {e}"))?;
    Ok((MockProcess::attach("http", port), child))
}

fn config(mock: &MockProcess, auth: Auth) -> mcp_resilient::ServerConfig {
    let reconnect = mock::backoff(Duration::from_millis(100), 0.0);
    mock::remote(NAME, mock, reconnect, Heartbeat::disabled()).auth(auth)
}

async fn ready(server: &Supervisor) -> Res<()> {
    let (state, _) = mock::try_wait_state(&mut server.watch(), LIMIT, |s| {
        matches!(
            s,
            ConnectionState::Ready { .. } | ConnectionState::Failed { .. }
        )
    })
    .await?;
    match state {
        ConnectionState::Ready { .. } => Ok(()),
        other => Err(format!("not ready: {other}")),
    }
}

/// One supervised caller.
struct Side {
    name: &'static str,
    server: Supervisor,
    registry: ToolRegistry,
    samples: Samples,
}

impl Side {
    async fn start(name: &'static str, config: mcp_resilient::ServerConfig) -> Res<Side> {
        let registry = ToolRegistry::new();
        let server = Supervisor::spawn(config, &registry).map_err(|e| e.to_string())?;
        ready(&server).await?;
        Ok(Side {
            name,
            server,
            registry,
            samples: Samples::default(),
        })
    }

    async fn round(&mut self, calls: usize, tag: &str) {
        for i in 0..calls {
            let t = Instant::now();
            match mock::echo(&self.registry, NAME, &format!("{tag}{i}")).await {
                Ok(()) => self.samples.push_ms(t.elapsed()),
                Err(e) => self.samples.fail(e),
            }
        }
    }
}

pub async fn run(mode: Mode, rows: &mut Vec<Row>) -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (plain, _plain_child) = oauth_mock(false).await?;
    let (guarded, _guarded_child) = oauth_mock(true).await?;
    let memory = MemoryTokenStore::new();
    let file = FileTokenStore::in_dir(dir.path(), NAME);

    // Login: the whole flow, each time into a fresh store.
    let mut login = Samples::default();
    for _ in 0..if mode.quick { 5 } else { 20 } {
        let store = MemoryTokenStore::new();
        let t = Instant::now();
        let config = config(&guarded, Auth::OAuth(OAuthConfig::default().store(store)));
        match auth::login(&config, &Headless::new(), LIMIT).await {
            Ok(_) => login.push_ms(t.elapsed()),
            Err(e) => login.fail(e.to_string()),
        }
    }
    rows.push(Row::new(
        SECTION,
        "login (headless: discovery, registration, PKCE, redirect, exchange)",
        "ms",
        login,
    ));

    let logged_in = |oauth: OAuthConfig| config(&guarded, Auth::OAuth(oauth));
    auth::login(
        &logged_in(OAuthConfig::default().store(memory.clone())),
        &Headless::new(),
        LIMIT,
    )
    .await
    .map_err(|e| e.to_string())?;
    auth::login(
        &logged_in(OAuthConfig::default().store(file.clone())),
        &Headless::new(),
        LIMIT,
    )
    .await
    .map_err(|e| e.to_string())?;

    let mut sides = vec![
        Side::start("no auth (mock without OAuth)", config(&plain, Auth::None)).await?,
        Side::start(
            "oauth, token in memory",
            logged_in(OAuthConfig::default().store(memory.clone())),
        )
        .await?,
        Side::start(
            "oauth, token file",
            logged_in(OAuthConfig::default().store(file.clone())),
        )
        .await?,
    ];
    let (rounds, per_round) = if mode.quick { (4, 200) } else { (4, 500) };
    for side in sides.iter_mut() {
        side.round(50, "w").await;
        side.samples = Samples::default();
    }
    for r in 0..rounds {
        let n = sides.len();
        for k in 0..n {
            sides[(r + k) % n].round(per_round, &format!("r{r}-")).await;
        }
    }
    let base = sides[0].samples.median();
    for side in &sides {
        let mut row = Row::new(
            SECTION,
            format!("call, {}", side.name),
            "ms",
            side.samples.clone(),
        );
        if base > 0.0 {
            row.note = format!(
                "{:+.0} % vs no auth at p50",
                (side.samples.median() / base - 1.0) * 100.0
            );
        }
        rows.push(row);
    }

    // Renewal behind our back: the server expires every access token; the next call.
    let file_side = &sides[2];
    let before = generation(&file_side.server)?;
    let mut renewal = Samples::default();
    for i in 0..if mode.quick { 5 } else { 20 } {
        guarded.try_admin("oauth/expire-access", json!({})).await?;
        let t = Instant::now();
        match mock::echo(&file_side.registry, NAME, &format!("renew{i}")).await {
            Ok(()) => renewal.push_ms(t.elapsed()),
            Err(e) => renewal.fail(e),
        }
    }
    if generation(&file_side.server)? != before {
        renewal.fail("a renewal cost a generation");
    }
    rows.push(Row::new(
        SECTION,
        "first call after the server expired the token (401, refresh, resend)",
        "ms",
        renewal,
    ));

    // Refusal: the refresh token revoked, no prompt.
    let mut refusal = Samples::default();
    for _ in 0..if mode.quick { 3 } else { 10 } {
        let store = MemoryTokenStore::new();
        let config = logged_in(OAuthConfig::default().store(store.clone()));
        auth::login(&config, &Headless::new(), LIMIT)
            .await
            .map_err(|e| e.to_string())?;
        let side = Side::start("revoked", config).await?;
        guarded.try_admin("oauth/revoke-refresh", json!({})).await?;
        guarded.try_admin("oauth/expire-access", json!({})).await?;
        let t = Instant::now();
        let _ = mock::echo(&side.registry, NAME, "refused").await;
        let failed = mock::try_wait_state(&mut side.server.watch(), LIMIT, |s| {
            matches!(s, ConnectionState::Failed { .. })
        })
        .await;
        match failed {
            Ok((ConnectionState::Failed { death, .. }, at))
                if death.cause == Cause::Unauthorized =>
            {
                refusal.push_ms(at - t)
            }
            Ok((other, _)) => refusal.fail(format!("not unauthorized: {other}")),
            Err(e) => refusal.fail(e),
        }
        side.server.shutdown().await;
    }
    rows.push(Row::new(
        SECTION,
        "revoked refresh token: call → failed (unauthorized)",
        "ms",
        refusal,
    ));

    for side in sides {
        side.server.shutdown().await;
    }
    Ok(())
}

fn generation(server: &Supervisor) -> Res<mcp_resilient::state::Generation> {
    match server.status().state {
        ConnectionState::Ready { generation, .. } => Ok(generation),
        other => Err(format!("not ready: {other}")),
    }
}
