//! The binary's arguments: the flags every mode takes, each area's own flags ([`RemoteArgs`],
//! [`OAuthArgs`], [`HostileArgs`]), and the rules that depend on the transport.
//!
//! # Invariants
//!
//! 1. A flag that means nothing with the chosen transport is an error (exit 2), never silently
//!    ignored; so is a knob without the flag it refines.
//! 2. Every flag may be given again; the last one wins (`--hostile` and `--oauth-client` add
//!    up instead).

use std::path::PathBuf;

use clap::builder::NonEmptyStringValueParser;
use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, ValueEnum};

use crate::hostile::args::HostileArgs;
use crate::hostile::flood::FloodPlan;
use crate::hostile::replies::ReplyKind;
use crate::hostile::sse::SseHostility;
use crate::remote::args::RemoteArgs;
use crate::remote::oauth::args::OAuthArgs;

/// Which protocol the binary speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Mode {
    /// An MCP server on stdin and stdout.
    Stdio,
    /// Legacy HTTP+SSE (2024-11-05) on 127.0.0.1.
    Sse,
    /// Streamable HTTP on 127.0.0.1.
    Http,
}

/// A restartable, fault-injecting MCP server for tests: stdio, legacy SSE or Streamable HTTP.
/// Remote modes print `LISTENING 127.0.0.1:PORT` once they serve.
#[derive(Debug, Clone, Parser)]
#[command(name = "mcp-mock-server", version, args_override_self = true)]
pub(crate) struct Args {
    /// The transport.
    #[arg(long, value_enum, default_value_t = Mode::Stdio)]
    pub(crate) transport: Mode,
    /// The port on 127.0.0.1 (remote modes); 0 picks a free one.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(crate) port: u16,
    /// The identity `whoami` and `/_mock/state` report [default: 8 random hex digits].
    #[arg(long = "boot-id", value_name = "ID", value_parser = NonEmptyStringValueParser::new())]
    pub(crate) boot_id: Option<String>,
    /// Hold an exclusive lock on PATH while alive; a second live instance records
    /// `overlap <pid>` in PATH.overlap and exits 99.
    #[arg(long = "lock-file", value_name = "PATH")]
    pub(crate) lock_file: Option<PathBuf>,
    /// Extra echo-like tools `extra_0` … `extra_{N-1}`.
    #[arg(long = "extra-tools", value_name = "N", default_value_t = 0)]
    pub(crate) extra_tools: usize,
    /// stdio: keep serving after stdin ends.
    #[arg(long = "ignore-stdin-eof")]
    pub(crate) ignore_stdin_eof: bool,
    /// SIGTERM stays pending forever; only SIGKILL (or SIGINT) ends the process.
    #[arg(long = "ignore-sigterm")]
    pub(crate) ignore_sigterm: bool,
    /// A 2026-07-28-only server: `initialize` gets -32022 (stdio, and Streamable HTTP).
    #[arg(long = "modern-only")]
    pub(crate) modern_only: bool,
    /// stdio only: exit 0 once the first `tools/list` reply has been flushed.
    #[arg(long = "exit-after-list")]
    pub(crate) exit_after_list: bool,
    /// The official conformance suite's server: only its test tools, resources and prompts
    /// (`--transport stdio|http`; no other flag applies).
    #[arg(long)]
    pub(crate) conformance: bool,
    #[command(flatten)]
    pub(crate) remote: RemoteArgs,
    #[command(flatten)]
    pub(crate) oauth: OAuthArgs,
    #[command(flatten)]
    pub(crate) hostile: HostileArgs,
}

impl Args {
    /// Parses the arguments that follow the program name, then checks them against the
    /// transport (invariant 1).
    ///
    /// # Errors
    /// clap's error: its message and the usage for bad arguments (exit code 2), or the help or
    /// the version (exit code 0).
    pub(crate) fn parse_from_args<I: IntoIterator<Item = String>>(
        args: I,
    ) -> Result<Self, clap::Error> {
        let program = std::iter::once("mcp-mock-server".to_owned());
        let parsed = Self::try_parse_from(program.chain(args))?;
        match parsed.check_mode().and_then(|()| parsed.check_hostile()) {
            Ok(()) => Ok(parsed),
            Err(message) => Err(Self::command().error(ErrorKind::ArgumentConflict, message)),
        }
    }

    /// Rejects flags that mean nothing in the chosen mode (fail loud, not silently ignored).
    fn check_mode(&self) -> Result<(), String> {
        let remote = &self.remote;
        let remote_only =
            remote.fail_status.is_some() || remote.redirect.is_some() || self.oauth.oauth;
        let mods = self.hostile.mods();
        let refusal = self.hostile.discover_refusal;
        match self.transport {
            Mode::Stdio if remote_only => {
                Err("--fail-status, --redirect and --oauth need --transport sse|http".into())
            }
            Mode::Sse | Mode::Http if self.exit_after_list => {
                Err("--exit-after-list needs --transport stdio".into())
            }
            Mode::Stdio | Mode::Sse if remote.stateless => {
                Err("--stateless needs --transport http".into())
            }
            Mode::Stdio
                if remote.http1_only || remote.h2_max_streams.is_some() || remote.tls.is_some() =>
            {
                Err("--http1-only, --h2-max-streams and --tls need --transport sse|http".into())
            }
            Mode::Sse | Mode::Http if self.hostile.discover_late => {
                Err("--discover-late needs --transport stdio".into())
            }
            Mode::Stdio | Mode::Sse if refusal.is_some_and(|shape| shape.http_only()) => {
                Err("--discover-refusal status:… and empty:… need --transport http".into())
            }
            Mode::Sse | Mode::Http if mods.escapes_exit => {
                Err("--hostile escapes-exit needs --transport stdio".into())
            }
            Mode::Sse | Mode::Http if mods.flood => {
                Err("--hostile flood needs --transport stdio".into())
            }
            _ => Ok(()),
        }
    }

    /// Rejects a hostile kind this mode has not, and knobs without their `--hostile`.
    fn check_hostile(&self) -> Result<(), String> {
        let hostile = &self.hostile;
        if hostile.flood != FloodPlan::default() && !hostile.mods().flood {
            return Err("--flood-count, --flood-bytes and --flood-ms need --hostile flood".into());
        }
        let Some(kind) = hostile.replacing() else {
            return match hostile.sse.given() {
                true => Err(
                    "--hostile-bytes, --hostile-trigger and --hostile-pace-ms need --hostile"
                        .into(),
                ),
                false => Ok(()),
            };
        };
        let sse = SseHostility::from_name(kind).is_some();
        let replies = ReplyKind::parse(kind).is_some();
        match self.transport {
            Mode::Sse if sse => Ok(()),
            Mode::Stdio | Mode::Http if replies => Ok(()),
            _ if sse => Err(format!("--hostile {kind} needs --transport sse")),
            _ => Err(format!("--hostile {kind} needs --transport stdio|http")),
        }
    }
}
