//! `proxy`: serve MCP on stdio for a host, with supervised upstreams behind it.

use std::process::ExitCode;

use super::{args::ProxyArgs, exit, output::with_causes, signals::Signals};
use mcp_resilient::{ServerConfig, config::TransportConfig};
use mcp_resilient_gateway::{Proxy, ProxyOptions};

/// Runs the proxy until the host closes stdin or a signal asks it to stop (exit 0 either way,
/// once the upstreams are shut down and their children reaped).
pub(crate) async fn run(args: &ProxyArgs, signals: &Signals) -> ExitCode {
    let mut configs = match args.server.to_configs() {
        Ok(configs) => configs,
        Err(e) => return usage(e),
    };
    if !args.server.named() && !args.server.uses_file() {
        configs = configs
            .into_iter()
            .map(|config| {
                let name = default_name(&config);
                config.with_name(name)
            })
            .collect();
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
        Err(e) => return usage(with_causes(&e)),
    };
    // stdin and stdout on threads of their own: a host that holds stdin open cannot keep the
    // process alive after the orderly close.
    match proxy.serve_stdio_until(signals.stop.clone()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            super::safe::eprint("mcp-resilient proxy", with_causes(&e));
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
pub(crate) fn default_name(config: &ServerConfig) -> String {
    let raw = match config.transport() {
        TransportConfig::Remote(remote) => remote.url().host_str().unwrap_or("server").to_owned(),
        TransportConfig::Stdio(stdio) => {
            let launcher = ["npx", "uvx", "bunx", "pnpm", "dlx", "pipx", "docker"];
            let stem = |s: &str| {
                std::path::Path::new(s)
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default()
            };
            let command = stem(stdio.command());
            if launcher.contains(&command.as_str()) {
                stdio
                    .args()
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
