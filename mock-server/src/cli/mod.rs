//! The `mcp-mock-server` binary ([`main_with_args`]): its arguments ([`args`]) and what each
//! mode runs. This is the top of the crate: it imports the servers, nothing imports it.
//!
//! # Invariants
//!
//! 1. Bad arguments end the process with exit code 2 before anything is bound or spawned.
//! 2. A remote mode prints its `LISTENING` line only once every fault flag has been applied.

pub(crate) mod args;

#[cfg(test)]
mod tests;

use std::process::ExitCode;
use std::sync::Arc;

use clap::CommandFactory;
use clap::error::ErrorKind;

use crate::MockTls;
use crate::binary::{
    RUNTIME_SHUTDOWN, block_sigterm, init_tracing, print_listening, wait_for_signal,
};
use crate::crash::{CrashAction, CrashSwitch};
use crate::hostile::replies::{self, ReplyKind};
use crate::hostile::sse::{self, SseHostility};
use crate::hostile::{Hostile, escapes};
use crate::lock::{self, Lock};
use crate::random::random_hex;
use crate::remote::MockServer;
use crate::remote::faults::Faults;
use crate::remote::options::{MockOptions, MockTransport};
use crate::remote::status::InvalidFault;
use crate::shared::Shared;
use crate::stdio;
use args::{Args, Mode};

/// Runs the mock server binary: parses `args` (without the program name), serves until the
/// session ends (stdio) or a signal arrives (remote modes), and returns the exit code.
///
/// Bad arguments print clap's message and usage and return exit code 2 (`--help` and
/// `--version` print to stdout and return 0); a lock-file overlap returns 99.
pub fn main_with_args<I: IntoIterator<Item = String>>(args: I) -> ExitCode {
    let args = match Args::parse_from_args(args) {
        Ok(args) => args,
        Err(error) => {
            // Printing can only fail when stderr (or stdout, for the help) is gone.
            let _ = error.print();
            return ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2));
        }
    };
    let _lock = match &args.lock_file {
        None => None,
        Some(path) => match lock::take(path) {
            Ok(Lock::Held(lock)) => Some(lock),
            Ok(Lock::Overlap) => {
                eprintln!("mcp-mock-server: another instance holds {}", path.display());
                return ExitCode::from(lock::OVERLAP_EXIT_CODE);
            }
            Err(error) => {
                eprintln!("mcp-mock-server: lock file {}: {error}", path.display());
                return ExitCode::FAILURE;
            }
        },
    };
    init_tracing();
    if args.ignore_sigterm
        && let Err(error) = block_sigterm()
    {
        eprintln!("mcp-mock-server: cannot block SIGTERM: {error}");
        return ExitCode::FAILURE;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("mcp-mock-server: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(run(args));
    runtime.shutdown_timeout(RUNTIME_SHUTDOWN);
    code
}

async fn run(args: Args) -> ExitCode {
    if args.conformance {
        return match args.transport {
            Mode::Stdio => crate::conformance::run_stdio().await,
            Mode::Http => crate::conformance::run_http(args.port).await,
            Mode::Sse => {
                eprintln!("mcp-mock-server: --conformance needs --transport stdio|http");
                ExitCode::from(2)
            }
        };
    }
    if let Some(kind) = args.hostile.replacing() {
        return run_hostile(&args, kind).await;
    }
    let boot_id = args.boot_id.clone().unwrap_or_else(|| random_hex(8));
    match args.transport {
        Mode::Stdio => run_stdio(&args, boot_id).await,
        Mode::Sse => run_remote(&args, MockTransport::Sse, boot_id).await,
        Mode::Http => run_remote(&args, MockTransport::Http, boot_id).await,
    }
}

/// A hostile server in the mock's place: an SSE kind on `--transport sse`, a reply kind on
/// stdio or Streamable HTTP (the arguments were checked against the transport).
async fn run_hostile(args: &Args, kind: &str) -> ExitCode {
    let hostile = &args.hostile;
    let sse_kind = SseHostility::from_name(kind);
    let reply_kind = ReplyKind::parse(kind);
    match (args.transport, sse_kind, reply_kind) {
        (Mode::Sse, Some(kind), _) => sse::run(hostile.sse.options(kind, args.port)).await,
        (Mode::Stdio, _, Some(kind)) => {
            replies::run_stdio(hostile.pages.options(kind, args.port)).await
        }
        (Mode::Http, _, Some(kind)) => {
            replies::run_http(hostile.pages.options(kind, args.port)).await
        }
        _ => {
            eprintln!("mcp-mock-server: --hostile {kind} does not speak this transport");
            ExitCode::from(2)
        }
    }
}

/// The mock on stdio, until the session ends.
async fn run_stdio(args: &Args, boot_id: String) -> ExitCode {
    let mods: Hostile = args.hostile.mods();
    let switch = CrashSwitch::new(CrashAction::Exit);
    let shared = Shared::new(boot_id, args.extra_tools, switch);
    let shared = Arc::new(shared.for_stdio(args.exit_after_list));
    shared.set_modern_only(args.modern_only);
    shared.discover.set(args.hostile.discover_refusal);
    if mods.escapes || mods.escapes_exit {
        escapes::write_stderr();
    }
    if mods.escapes_exit {
        return ExitCode::from(escapes::EXIT_CODE);
    }
    shared.set_escapes(mods.escapes);
    let flood = mods.flood.then_some(args.hostile.flood);
    let late = args.hostile.discover_late;
    stdio::run(shared, args.ignore_stdin_eof, flood, late).await
}

/// The mock on 127.0.0.1, until SIGINT or SIGTERM.
async fn run_remote(args: &Args, transport: MockTransport, boot_id: String) -> ExitCode {
    let tls = match args.remote.tls.as_deref() {
        Some([cert, key]) => match MockTls::from_files(cert, key) {
            Ok(tls) => Some(tls),
            Err(error) => {
                let (cert, key) = (cert.display(), key.display());
                eprintln!("mcp-mock-server: cannot read --tls {cert} {key}: {error}");
                return ExitCode::FAILURE;
            }
        },
        _ => None,
    };
    let opts = MockOptions {
        transport,
        port: args.port,
        boot_id: Some(boot_id),
        extra_tools: args.extra_tools,
        sse_retry: args.remote.sse_retry(),
        stateless: args.remote.stateless,
        oauth: args.oauth.options(),
        http1_only: args.remote.http1_only,
        h2_max_streams: args.remote.h2_max_streams,
        tls,
        ..MockOptions::default()
    };
    let server = match MockServer::start_with(opts, true).await {
        Ok(server) => server,
        Err(error) => {
            eprintln!(
                "mcp-mock-server: cannot listen on port {}: {error}",
                args.port
            );
            return ExitCode::FAILURE;
        }
    };
    if let Err(error) = apply_faults(args, server.faults()) {
        let error = Args::command().error(ErrorKind::ValueValidation, error);
        let _ = error.print();
        server.shutdown().await;
        return ExitCode::from(2);
    }
    print_listening(server.addr());
    // With `--ignore-sigterm` SIGTERM is blocked, so only SIGINT ends this wait.
    wait_for_signal().await;
    server.shutdown().await;
    ExitCode::SUCCESS
}

/// The remote fault flags, applied before the server reports that it listens.
fn apply_faults(args: &Args, faults: &Faults) -> Result<(), InvalidFault> {
    faults.set_status_fault(args.remote.status_fault())?;
    faults.set_redirect(args.remote.redirect.clone())?;
    faults.set_modern_only(args.modern_only);
    faults.set_discover_refusal(args.hostile.discover_refusal);
    faults.set_escapes(args.hostile.mods().escapes);
    Ok(())
}
