//! `proxy`: serve MCP on stdio for a host, with supervised upstreams behind it.

use std::process::ExitCode;

use mcp_resilient::{
    ServerConfig,
    config::TransportConfig,
    proxy::{Proxy, ProxyOptions},
};
use tokio_util::sync::CancellationToken;

use super::{args::ProxyArgs, commands::exit};

/// Runs the proxy until the host closes stdin (exit 0) or a signal asks it to stop.
pub(crate) async fn run(args: &ProxyArgs) -> ExitCode {
    let mut configs = match args.server.to_configs() {
        Ok(configs) => configs,
        Err(e) => return usage(e),
    };
    if !args.server.named() && !args.server.uses_file() {
        for config in &mut configs {
            config.name = default_name(config);
        }
    }
    let mut options = ProxyOptions::default();
    options.startup_wait = args.startup_wait;
    options.call_wait = args.call_wait;
    let built = if configs.len() == 1 && !args.aggregate {
        Proxy::transparent(configs.remove(0))
    } else {
        Proxy::aggregated(configs)
    };
    let proxy = match built {
        Ok(proxy) => proxy.options(options),
        Err(e) => return usage(e),
    };
    let stop = CancellationToken::new();
    let signals = tokio::spawn(stop_on_signal(stop.clone()));
    let (stdin, stdout) = (tokio::io::stdin(), tokio::io::stdout());
    let served = proxy.serve(stdin, stdout, stop).await;
    signals.abort();
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            super::safe::eprint("mcp-resilient proxy", e);
            ExitCode::from(exit::CONNECT)
        }
    }
}

fn usage(message: impl std::fmt::Display) -> ExitCode {
    super::safe::eprint("mcp-resilient proxy", message);
    ExitCode::from(exit::USAGE)
}

/// A name for a server given only by `--url` or `--stdio`, for logs and tool errors: the URL's
/// host, or the command's file name (the package name for `npx`/`uvx` style launchers).
fn default_name(config: &ServerConfig) -> String {
    let raw = match &config.transport {
        TransportConfig::Remote(remote) => remote.url.host_str().unwrap_or("server").to_owned(),
        TransportConfig::Stdio(stdio) => {
            let launcher = ["npx", "uvx", "bunx", "pnpm", "dlx", "pipx", "docker"];
            let stem = |s: &str| {
                std::path::Path::new(s)
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default()
            };
            let command = stem(&stdio.command);
            if launcher.contains(&command.as_str()) {
                stdio
                    .args
                    .iter()
                    .find(|a| !a.starts_with('-') && *a != "run" && *a != "exec")
                    .map(|a| a.rsplit('/').next().unwrap_or(a).to_owned())
                    .map(|a| a.split('@').next().unwrap_or(&a).to_owned())
                    .unwrap_or(command)
            } else {
                command
            }
        }
    };
    let name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let name = name.trim_matches('-').to_owned();
    if name.is_empty() {
        "server".to_owned()
    } else {
        name
    }
}

/// Cancels `stop` on SIGINT or SIGTERM, so the upstreams are shut down (children reaped) before
/// the process exits.
async fn stop_on_signal(stop: CancellationToken) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut term) = signal(SignalKind::terminate()) else {
            return;
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
    tracing::info!("signal received; shutting the upstreams down");
    stop.cancel();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_without_a_name_is_named_after_its_host_or_package() {
        let remote = ServerConfig::remote("x", "https://mcp.example.com/mcp");
        assert_eq!(default_name(&remote), "mcp-example-com");
        let npx = ServerConfig::stdio("x", "npx").args([
            "-y",
            "@modelcontextprotocol/server-filesystem",
            "/srv",
        ]);
        assert_eq!(default_name(&npx), "server-filesystem");
        let plain = ServerConfig::stdio("x", "/usr/local/bin/my-server").arg("--flag");
        assert_eq!(default_name(&plain), "my-server");
    }
}
