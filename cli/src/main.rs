//! The `mcp-resilient` command-line tool. See `mcp-resilient --help`.

mod args;
mod auth;
mod commands;
mod connect;
mod demo;
mod escape;
mod exit;
mod output;
mod proxy;
mod safe;
mod serve;
mod signals;
mod status_line;
mod telemetry;
mod text;

use std::process::ExitCode;

use clap::Parser;

use args::{Cli, Command};

/// On musl (the static release binaries), mimalloc instead of musl's own allocator, which takes
/// a lock on every allocation: through `proxy`, musl's cost 19 % more CPU per call one at a time
/// and 50 % more 16 at a time than glibc's (scripts/dist/overhead.py; docs/guide/install.md).
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        // The mock server and the proxies build their own runtime and logging.
        Command::MockServer { args } => return mcp_mock_server::main_with_args(args),
        Command::FaultProxy { args } => return mcp_mock_server::proxy::proxy_main_with_args(args),
        _ => {}
    }
    // The demo narrates what the logs would say; keep them for -v.
    let quiet = matches!(cli.command, Command::Demo(_));
    // These show what they wait for themselves (`connect`), and say its failure once.
    let shows_states = matches!(cli.command, Command::Tools { .. } | Command::Call { .. });
    init_tracing(cli.verbose, quiet, shows_states);
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if let Command::Serve(args) = &cli.command
        && let Some(workers) = args.workers
    {
        builder.worker_threads(usize::from(workers));
    }
    let runtime = match builder.build() {
        Ok(runtime) => runtime,
        Err(e) => {
            safe::eprint("mcp-resilient", format!("cannot start the runtime: {e}"));
            return ExitCode::from(exit::USAGE);
        }
    };
    let code = runtime.block_on(async move {
        let signals = signals::Signals::listen();
        // These close their servers themselves on the first signal; the others hold nothing
        // that needs closing.
        let orderly = matches!(
            cli.command,
            Command::Tools { .. }
                | Command::Call { .. }
                | Command::Watch { .. }
                | Command::Proxy(_)
                | Command::Serve(_)
        );
        let command = run(cli.command, &signals);
        tokio::pin!(command);
        tokio::select! {
            code = &mut command => code,
            () = signals.stop.cancelled(), if !orderly => ExitCode::from(signals.exit_code()),
            () = signals.force.cancelled() => ExitCode::from(signals.exit_code()),
        }
    });
    // Nothing that matters is left running: do not wait for a thread blocked in a read of
    // stdin or a write to a terminal.
    runtime.shutdown_timeout(RUNTIME_SHUTDOWN);
    code
}

/// How long the runtime waits for its blocking threads once a command has returned.
const RUNTIME_SHUTDOWN: std::time::Duration = std::time::Duration::from_millis(100);

async fn run(command: Command, signals: &signals::Signals) -> ExitCode {
    match command {
        Command::Demo(args) => match demo::run(&args.transport).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                safe::eprint("mcp-resilient demo", e);
                ExitCode::FAILURE
            }
        },
        Command::Tools { server, json, wait } => {
            commands::tools(&server, json, wait.wait, signals).await
        }
        Command::Call {
            tool,
            args_json,
            server,
            wait,
        } => commands::call(&server, &tool, &args_json, wait.wait, signals).await,
        Command::Watch {
            server,
            json,
            telemetry,
        } => telemetry::around(&telemetry, commands::watch(&server, json, signals)).await,
        Command::Login {
            server_name: name,
            server,
            no_browser,
            headless,
            wait,
        } => auth::login(&name, server, no_browser, headless, wait).await,
        Command::Logout { name } => auth::logout(&name).await,
        Command::Auth {
            command: args::AuthCommand::Status { json },
        } => auth::status(json).await,
        Command::Proxy(args) => {
            telemetry::around(&args.telemetry, proxy::run(&args, signals)).await
        }
        Command::Serve(args) => {
            telemetry::around(&args.telemetry, serve::run(&args, signals)).await
        }
        Command::MockServer { .. } | Command::FaultProxy { .. } => ExitCode::SUCCESS,
    }
}

fn init_tracing(verbose: u8, quiet: bool, shows_states: bool) {
    use tracing_subscriber::{Layer, layer::SubscriberExt, util::SubscriberInitExt};
    let default = match verbose {
        0 if quiet => "off",
        // rmcp logs every worker that quits on an HTTP error (the probe `auto` makes, a dead
        // server) at error level, with the body; our own lines say what happened, in our words.
        0 => "warn,rmcp=error,rmcp::transport::worker=off",
        1 => "info,mcp_resilient::stderr=warn",
        // rmcp's OAuth code logs the one-time authorization code at debug level: keep its auth
        // module at info unless RUST_LOG asks for it explicitly.
        _ => "debug,rmcp::transport::auth=info",
    };
    let asked = std::env::var_os("RUST_LOG").is_some();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // A supervisor's line about its state (a retry, a refusal, giving up) carries the `cause`
    // of DESIGN.md's vocabulary. `tools` and `call` say the same from the status, once, unless
    // the person asked for logs.
    let hide_states = shows_states && verbose == 0 && !asked;
    let states = tracing_subscriber::filter::filter_fn(move |meta| {
        !(hide_states
            && meta.is_event()
            && meta.target().starts_with("mcp_resilient")
            && meta.fields().field("cause").is_some())
    });
    // No colours: the writer escapes every control character left in a line, and a server's
    // text (a child's stderr, an error's detail) must not colour, retitle or clear the terminal.
    let lines = tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .with_writer(safe::Stderr)
        .with_filter(states);
    tracing_subscriber::registry()
        .with(filter)
        .with(lines)
        .init();
}
