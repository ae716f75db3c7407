//! `serve`: the proxy's host-facing core over Streamable HTTP, for many hosts at once.

pub(crate) mod args;
mod reload;

use std::process::ExitCode;

use args::ServeArgs;

use super::{exit, output::with_causes, signals::Signals};
use mcp_resilient_gateway::{
    ProxyOptions,
    http::{Access, FrontLimits, Gateway, JwtOptions, ServeOptions, Tokens},
    state::{RedisHostStore, RedisStoreOptions},
};

/// Serves until a signal asks it to stop (exit 0 once every session and upstream is closed).
pub(crate) async fn run(args: &ServeArgs, signals: &Signals) -> ExitCode {
    let mut configs = match configs(args) {
        Ok(configs) => configs,
        Err(e) => return usage(e),
    };
    let mut options = match options(args) {
        Ok(options) => options,
        Err(e) => return usage(e),
    };
    let reload = mcp_resilient_gateway::http::Reload::new();
    options.reload = Some(reload.clone());
    let built = if configs.len() == 1 && !args.aggregate {
        Gateway::transparent(configs.remove(0))
    } else {
        Gateway::aggregated(configs)
    };
    let front = options.front.name();
    let gateway = match built {
        Ok(gateway) => gateway.options(options),
        Err(e) => return usage(with_causes(&e)),
    };
    if let Err(e) = gateway.check_address(args.listen) {
        return usage(with_causes(&e));
    }
    let listener = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(listener) => listener,
        Err(e) => return usage(format!("--listen {}: {e}", args.listen)),
    };
    if let Ok(address) = listener.local_addr() {
        super::safe::eprint(
            "mcp-resilient serve",
            format!(
                "serving MCP at http://{address}/mcp (front {front}, {})",
                workers(tokio::runtime::Handle::current().metrics().num_workers())
            ),
        );
    }
    let serving = gateway.serve(listener, signals.stop.clone());
    match reload::alongside(serving, args, reload).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            super::safe::eprint("mcp-resilient serve", with_causes(&e));
            ExitCode::from(exit::CONNECT)
        }
    }
}

/// The servers the arguments name now (`--config`'s file read again), named as at the start.
fn configs(args: &ServeArgs) -> Result<Vec<mcp_resilient::ServerConfig>, String> {
    let configs = args.server.to_configs()?;
    if args.server.named() || args.server.uses_file() {
        return Ok(configs);
    }
    let name = |config: mcp_resilient::ServerConfig| {
        let name = super::proxy::default_name(&config);
        config.with_name(name)
    };
    Ok(configs.into_iter().map(name).collect())
}

/// How many threads run the gateway, as the runtime says (`--workers`, or one per core).
fn workers(count: usize) -> String {
    match count {
        1 => "1 worker thread".to_owned(),
        n => format!("{n} worker threads"),
    }
}

fn options(args: &ServeArgs) -> Result<ServeOptions, String> {
    let mut tokens = Tokens::none();
    if let Some(var) = &args.auth_token_env {
        tokens = tokens.and(
            Tokens::from_env(var).map_err(|e| format!("--auth-token-env: {}", with_causes(&e)))?,
        );
    }
    if let Some(path) = &args.auth_token_file {
        tokens = tokens.and(
            Tokens::from_file(path)
                .map_err(|e| format!("--auth-token-file: {}", with_causes(&e)))?,
        );
    }
    let mut proxy = ProxyOptions::default();
    proxy.startup_wait = args.startup_wait;
    proxy.call_wait = args.call_wait;
    let mut limits = FrontLimits::default();
    limits.max_body_bytes = args.max_body;
    limits.max_requests_per_session = args.max_requests_per_session;
    limits.max_sessions_per_token = args.max_sessions_per_token;
    limits.max_sessions = args.max_sessions;
    limits.session_idle = args.session_idle;
    let mut options = ServeOptions::default();
    options.proxy = proxy;
    options.per_host = args.per_host.clone();
    options.tokens = tokens;
    if let Some(issuer) = &args.jwt_issuer {
        let mut jwt = JwtOptions::new(issuer.clone());
        jwt.jwks_url = args.jwt_jwks_url.clone();
        jwt.leeway = args.jwt_leeway;
        jwt.identity_claim = args.jwt_identity_claim.clone();
        jwt.refetch_after = args.jwks_refetch;
        jwt.check()
            .map_err(|e| format!("--jwt-issuer: {}", with_causes(&e)))?;
        options.jwt = Some(jwt);
    }
    options.resource = args.resource_url.clone();
    if let Some(path) = &args.access {
        let access =
            Access::from_file(path).map_err(|e| format!("--access: {}", with_causes(&e)))?;
        options.access = Some(access);
    }
    options.allow_unauthenticated = args.allow_unauthenticated;
    options.allowed_hosts = args.allowed_hosts.clone();
    options.allowed_origins = args.allowed_origins.clone();
    options.limits = limits;
    options.drain.limit = args.drain_limit;
    options.drain.quiet = args.drain_quiet;
    options.drain.hand_off = args.drain_hand_off;
    options.front = args.host_front()?;
    if args.store != "memory" {
        let mut store_options = RedisStoreOptions::default();
        store_options.ttl = args.session_idle;
        let store = RedisHostStore::open(&args.store, store_options)
            .map_err(|e| format!("--store: {}", with_causes(&e)))?;
        options.store = std::sync::Arc::new(store);
    }
    Ok(options)
}

fn usage(message: impl std::fmt::Display) -> ExitCode {
    super::safe::eprint("mcp-resilient serve", message);
    ExitCode::from(exit::USAGE)
}
