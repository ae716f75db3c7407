//! Command-line arguments, parsed by hand (the set is tiny and fixed).

use std::path::PathBuf;
use std::time::Duration;

use crate::hostile::flood::FloodPlan;
use crate::{DiscoverRefusal, OAuthOptions, StatusFault, hostile::Hostile};

pub(crate) const USAGE: &str = "usage: mcp-mock-server [--transport stdio|sse|http] [--port N] \
[--boot-id ID] [--lock-file PATH] [--extra-tools N] [--sse-retry-ms N] [--ignore-stdin-eof] \
[--ignore-sigterm] [--modern-only]
  stdio only:  [--exit-after-list]
  remote only: [--fail-status N [--fail-every K] [--fail-count N] [--retry-after S] \
[--fail-methods a,b] [--www-authenticate V]] [--redirect URL]
  http only:   [--stateless]
  sse only:    [--hostile invalid-utf8|newline-flood|endless-line|malformed-json|event-flood \
[--hostile-bytes N] [--hostile-trigger list|call] [--hostile-pace-ms N]]
  remote only: [--oauth [--oauth-access-ttl SECS] [--oauth-client ID[:SECRET]]... \
[--oauth-step-up TOOL:SCOPE] [--oauth-refresh-delay-ms N]]
  hostile:     [--discover-refusal SHAPE] (empty-result, other-result, error:CODE, \
legacy-versions; http only: status:N[+body], empty:N[+json|+sse])
  hostile:     [--hostile escapes] (stdio only: [--hostile escapes-exit])
  --modern-only: a 2026-07-28-only server (initialize gets -32022); --stateless: Streamable \
HTTP without sessions
  hostile:     [--hostile KIND] with KIND huge-pages [--page-bytes N] [--pages N], endless-pages, \
stray-response, duplicate-response or malformed-json (stdio or http),\
                [--hostile flood [--flood-count N] [--flood-bytes N] [--flood-ms N]] (stdio)";

/// Which protocol the binary speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Stdio,
    Sse,
    Http,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Args {
    pub(crate) mode: Mode,
    /// 0 means an ephemeral port.
    pub(crate) port: u16,
    pub(crate) boot_id: Option<String>,
    pub(crate) lock_file: Option<PathBuf>,
    pub(crate) extra_tools: usize,
    pub(crate) sse_retry: Duration,
    pub(crate) ignore_stdin_eof: bool,
    /// SIGTERM stays pending forever; only SIGKILL (or SIGINT) ends the process.
    pub(crate) ignore_sigterm: bool,
    /// stdio: exit 0 once the first `tools/list` reply has been flushed.
    pub(crate) exit_after_list: bool,
    /// Remote: `--fail-status` and its companions.
    pub(crate) status_fault: Option<StatusFault>,
    /// `initialize` gets `-32022` (stdio, and Streamable HTTP in remote modes).
    pub(crate) modern_only: bool,
    /// Http: Streamable HTTP without sessions.
    pub(crate) stateless: bool,
    /// Remote: every MCP request gets 307 to this location.
    pub(crate) redirect: Option<String>,
    /// Remote: `--oauth` and its knobs.
    pub(crate) oauth: Option<OAuthOptions>,
    /// How `server/discover` is refused (hostile kind `discover`).
    pub(crate) discover_refusal: Option<DiscoverRefusal>,
    /// `--hostile KIND`: a hostile server instead of the mock (see [`crate::hostile`]).
    pub(crate) hostile: Option<String>,
    /// `--hostile-bytes N`: the size of a flood or an endless line.
    pub(crate) hostile_bytes: Option<usize>,
    /// `--hostile-trigger list|call`: when a session turns hostile.
    pub(crate) hostile_trigger: Option<String>,
    /// `--hostile-pace-ms N`: the wait before each chunk of a legacy SSE burst (`endless-line`
    /// drips one 8 KiB chunk per millisecond unless told otherwise, the others send at once).
    pub(crate) hostile_pace: Option<Duration>,
    /// `--hostile huge-pages`: bytes of JSON per `tools/list` page.
    pub(crate) page_bytes: usize,
    /// `--hostile huge-pages`: pages in the list.
    pub(crate) pages: u32,
    /// `--hostile escapes|escapes-exit` (repeatable): kinds that change the mock itself.
    pub(crate) mods: Hostile,
    /// `--flood-*`: the size of a `--hostile flood`.
    pub(crate) flood: FloodPlan,
}

impl Default for Args {
    fn default() -> Self {
        Self {
            mode: Mode::Stdio,
            port: 0,
            boot_id: None,
            lock_file: None,
            extra_tools: 0,
            sse_retry: Duration::from_millis(100),
            ignore_stdin_eof: false,
            ignore_sigterm: false,
            exit_after_list: false,
            status_fault: None,
            modern_only: false,
            stateless: false,
            redirect: None,
            oauth: None,
            discover_refusal: None,
            hostile: None,
            hostile_bytes: None,
            hostile_trigger: None,
            hostile_pace: None,
            page_bytes: 4 * 1024 * 1024,
            pages: 100,
            mods: Hostile::default(),
            flood: FloodPlan::default(),
        }
    }
}

/// The flags that only refine `--fail-status`.
const COMPANIONS: &str =
    "--fail-every, --fail-count, --fail-methods, --retry-after and --www-authenticate";

/// The flags that only refine `--oauth`.
const OAUTH_KNOBS: &str = "--oauth-access-ttl, --oauth-client, --oauth-step-up and \
--oauth-refresh-delay-ms";

/// Flags that take no value.
const SWITCHES: [&str; 6] = [
    "--ignore-stdin-eof",
    "--ignore-sigterm",
    "--exit-after-list",
    "--modern-only",
    "--stateless",
    "--oauth",
];

fn number<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| format!("{flag}: expected a non-negative integer, got {value:?}"))
}

impl Args {
    /// Parses the arguments that follow the program name.
    pub(crate) fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Self, String> {
        let mut parsed = Self::default();
        // The `--fail-*` companions, gathered until the end (flags may come in any order).
        let mut fault = StatusFault::new(0);
        let (mut status, mut companions) = (None, false);
        // `--oauth` and its knobs, gathered the same way.
        let (mut oauth, mut oauth_on, mut knobs) = (OAuthOptions::default(), false, false);
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => {
                    (flag.to_owned(), Some(value.to_owned()))
                }
                _ => (arg, None),
            };
            if SWITCHES.contains(&flag.as_str()) {
                if inline.is_some() {
                    return Err(format!("{flag} takes no value"));
                }
                match flag.as_str() {
                    "--ignore-stdin-eof" => parsed.ignore_stdin_eof = true,
                    "--ignore-sigterm" => parsed.ignore_sigterm = true,
                    "--exit-after-list" => parsed.exit_after_list = true,
                    "--stateless" => parsed.stateless = true,
                    "--oauth" => oauth_on = true,
                    _ => parsed.modern_only = true,
                }
                continue;
            }
            let value = match inline.or_else(|| args.next()) {
                Some(value) => value,
                None if flag.starts_with("--") => return Err(format!("{flag}: missing value")),
                None => return Err(format!("unexpected argument {flag:?}")),
            };
            if flag.starts_with("--oauth-") {
                oauth_knob(&mut oauth, &flag, &value)?;
                knobs = true;
                continue;
            }
            companions |= flag.starts_with("--fail-") && flag != "--fail-status"
                || flag == "--retry-after"
                || flag == "--www-authenticate";
            match flag.as_str() {
                "--transport" => {
                    parsed.mode = match value.as_str() {
                        "stdio" => Mode::Stdio,
                        "sse" => Mode::Sse,
                        "http" => Mode::Http,
                        other => return Err(format!("--transport: unknown transport {other:?}")),
                    }
                }
                "--port" => parsed.port = number(&flag, &value)?,
                "--boot-id" if !value.is_empty() => parsed.boot_id = Some(value),
                "--lock-file" => parsed.lock_file = Some(PathBuf::from(value)),
                "--extra-tools" => parsed.extra_tools = number(&flag, &value)?,
                "--sse-retry-ms" => {
                    parsed.sse_retry = Duration::from_millis(number(&flag, &value)?);
                }
                "--fail-status" => status = Some(number(&flag, &value)?),
                "--fail-every" => fault.every = number(&flag, &value)?,
                "--fail-count" => fault.count = Some(number(&flag, &value)?),
                "--retry-after" => fault.retry_after = Some(value),
                "--www-authenticate" => fault.www_authenticate = Some(value),
                "--fail-methods" => {
                    let methods = value.split(',').filter(|m| !m.is_empty());
                    fault.methods = methods.map(str::to_owned).collect();
                }
                "--redirect" if !value.is_empty() => parsed.redirect = Some(value),
                "--discover-refusal" => {
                    let shape = value.parse().map_err(|e| format!("{flag}: {e}"))?;
                    parsed.discover_refusal = Some(shape);
                }
                "--hostile" if Hostile::modifies(&value) => parsed.mods.enable(&value)?,
                "--hostile" if crate::hostile::is_kind(&value) => parsed.hostile = Some(value),
                "--hostile" => return Err(format!("--hostile: unknown kind {value:?}")),
                "--hostile-bytes" => parsed.hostile_bytes = Some(number(&flag, &value)?),
                "--hostile-trigger" => parsed.hostile_trigger = Some(value),
                "--hostile-pace-ms" => {
                    parsed.hostile_pace = Some(Duration::from_millis(number(&flag, &value)?));
                }
                "--page-bytes" => parsed.page_bytes = number(&flag, &value)?,
                "--pages" => parsed.pages = number(&flag, &value)?,
                "--flood-count" => parsed.flood.count = number(&flag, &value)?,
                "--flood-bytes" => parsed.flood.bytes = number(&flag, &value)?,
                "--flood-ms" => parsed.flood.limit = Duration::from_millis(number(&flag, &value)?),
                _ => return Err(format!("unexpected argument {flag:?}")),
            }
        }
        parsed.status_fault = match (status, companions) {
            (Some(status), _) => Some(StatusFault { status, ..fault }),
            (None, true) => return Err(format!("{COMPANIONS} need --fail-status")),
            (None, false) => None,
        };
        parsed.oauth = match (oauth_on, knobs) {
            (true, _) => Some(oauth),
            (false, true) => return Err(format!("{OAUTH_KNOBS} need --oauth")),
            (false, false) => None,
        };
        parsed.check_mode()?;
        parsed.check_hostile()?;
        Ok(parsed)
    }

    /// Rejects flags that mean nothing in the chosen mode (fail loud, not silently ignored).
    fn check_mode(&self) -> Result<(), String> {
        let remote_only =
            self.status_fault.is_some() || self.redirect.is_some() || self.oauth.is_some();
        match self.mode {
            Mode::Stdio if remote_only => {
                Err("--fail-status, --redirect and --oauth need --transport sse|http".into())
            }
            Mode::Sse | Mode::Http if self.exit_after_list => {
                Err("--exit-after-list needs --transport stdio".into())
            }
            Mode::Stdio | Mode::Sse if self.stateless => {
                Err("--stateless needs --transport http".into())
            }
            Mode::Stdio | Mode::Sse
                if self
                    .discover_refusal
                    .is_some_and(DiscoverRefusal::http_only) =>
            {
                Err("--discover-refusal status:… and empty:… need --transport http".into())
            }
            Mode::Sse | Mode::Http if self.mods.escapes_exit => {
                Err("--hostile escapes-exit needs --transport stdio".into())
            }
            Mode::Sse | Mode::Http if self.mods.flood => {
                Err("--hostile flood needs --transport stdio".into())
            }
            _ => Ok(()),
        }
    }
}

impl Args {
    /// Rejects a hostile kind this mode has not, and knobs without `--hostile`.
    fn check_hostile(&self) -> Result<(), String> {
        if self.flood != FloodPlan::default() && !self.mods.flood {
            return Err("--flood-count, --flood-bytes and --flood-ms need --hostile flood".into());
        }
        let Some(kind) = &self.hostile else {
            let knobs = self.hostile_bytes.is_some()
                || self.hostile_trigger.is_some()
                || self.hostile_pace.is_some();
            return match knobs {
                true => Err(
                    "--hostile-bytes, --hostile-trigger and --hostile-pace-ms need --hostile"
                        .into(),
                ),
                false => Ok(()),
            };
        };
        let sse = crate::hostile::sse::SseHostility::from_name(kind).is_some();
        let replies = crate::hostile::replies::ReplyKind::parse(kind).is_some();
        match self.mode {
            Mode::Sse if sse => {}
            Mode::Stdio | Mode::Http if replies => {}
            _ if sse => return Err(format!("--hostile {kind} needs --transport sse")),
            _ if replies => return Err(format!("--hostile {kind} needs --transport stdio|http")),
            _ => return Err(format!("--hostile: unknown kind {kind:?}")),
        }
        match self.hostile_trigger.as_deref() {
            None | Some("list" | "call") => Ok(()),
            Some(other) => Err(format!(
                "--hostile-trigger: expected list or call, got {other:?}"
            )),
        }
    }

    /// The hostile SSE server these flags ask for, if any.
    pub(crate) fn hostile_sse(&self) -> Option<crate::hostile::sse::HostileSseOptions> {
        use crate::hostile::sse::{HostileSseOptions, SseHostility, Trigger};
        let kind = SseHostility::from_name(self.hostile.as_deref()?)?;
        let mut opts = HostileSseOptions::new(kind);
        opts.port = self.port;
        if let Some(bytes) = self.hostile_bytes {
            opts.bytes = bytes;
        }
        if kind == SseHostility::EndlessLine {
            // A slow drip: every 8 KiB chunk reaches the client on its own.
            opts.pace = std::time::Duration::from_millis(1);
        }
        if let Some(pace) = self.hostile_pace {
            opts.pace = pace;
        }
        if self.hostile_trigger.as_deref() == Some("call") {
            opts.trigger = Trigger::Manual;
        }
        Some(opts)
    }
}

/// Applies one `--oauth-*` knob.
fn oauth_knob(oauth: &mut OAuthOptions, flag: &str, value: &str) -> Result<(), String> {
    let pair = |what: &str| match value.split_once(':') {
        Some((a, b)) if !a.is_empty() && !b.is_empty() => Ok((a.to_owned(), b.to_owned())),
        _ => Err(format!("{flag}: expected {what}, got {value:?}")),
    };
    match flag {
        "--oauth-access-ttl" => oauth.access_ttl = Duration::from_secs(number(flag, value)?),
        "--oauth-refresh-delay-ms" => {
            oauth.refresh_delay = Duration::from_millis(number(flag, value)?);
        }
        "--oauth-step-up" => oauth.step_up = Some(pair("TOOL:SCOPE")?),
        "--oauth-client" if !value.contains(':') && !value.is_empty() => {
            oauth.clients.push((value.to_owned(), None));
        }
        "--oauth-client" => {
            let (id, secret) = pair("ID[:SECRET]")?;
            oauth.clients.push((id, Some(secret)));
        }
        _ => return Err(format!("unexpected argument {flag:?}")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Args, String> {
        Args::parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn parses_every_flag_in_both_spellings() {
        let args = parse(&[
            "--transport=http",
            "--port",
            "8080",
            "--boot-id",
            "b1",
            "--lock-file=/tmp/x",
            "--extra-tools",
            "3",
            "--sse-retry-ms",
            "5",
            "--ignore-stdin-eof",
        ]);
        let expected = Args {
            mode: Mode::Http,
            port: 8080,
            boot_id: Some("b1".into()),
            lock_file: Some("/tmp/x".into()),
            extra_tools: 3,
            sse_retry: Duration::from_millis(5),
            ignore_stdin_eof: true,
            ..Args::default()
        };
        assert_eq!(args, Ok(expected));
        assert_eq!(parse(&[]), Ok(Args::default()));
        let stdio = parse(&["--exit-after-list", "--ignore-sigterm", "--modern-only"]);
        let expected = Args {
            exit_after_list: true,
            ignore_sigterm: true,
            modern_only: true,
            ..Args::default()
        };
        assert_eq!(stdio, Ok(expected));
        let hostile = parse(&[
            "--hostile",
            "huge-pages",
            "--page-bytes=1024",
            "--pages",
            "3",
        ]);
        let expected = Args {
            hostile: Some("huge-pages".into()),
            page_bytes: 1024,
            pages: 3,
            ..Args::default()
        };
        assert_eq!(hostile, Ok(expected));
        let stateless = parse(&["--stateless", "--transport", "http"]);
        let expected = Args {
            mode: Mode::Http,
            stateless: true,
            ..Args::default()
        };
        assert_eq!(stateless, Ok(expected));
        let refusal = parse(&["--discover-refusal", "error:-32601"]);
        let expected = Args {
            discover_refusal: Some(DiscoverRefusal::Error(-32601)),
            ..Args::default()
        };
        assert_eq!(refusal, Ok(expected));
    }

    #[test]
    fn parses_the_remote_fault_flags() {
        let args = parse(&[
            "--fail-every=3",
            "--retry-after",
            "2",
            "--fail-status",
            "503",
            "--fail-methods",
            "tools/call,ping",
            "--fail-count",
            "4",
            "--www-authenticate",
            "Bearer realm=\"m\"",
            "--modern-only",
            "--redirect",
            "http://127.0.0.1:1/mcp",
            "--transport",
            "http",
        ])
        .expect("valid");
        let fault = StatusFault {
            every: 3,
            count: Some(4),
            retry_after: Some("2".into()),
            www_authenticate: Some("Bearer realm=\"m\"".into()),
            methods: vec!["tools/call".into(), "ping".into()],
            ..StatusFault::new(503)
        };
        assert_eq!(args.status_fault, Some(fault));
        assert!(args.modern_only);
        assert_eq!(args.redirect.as_deref(), Some("http://127.0.0.1:1/mcp"));
    }

    #[test]
    fn parses_the_oauth_flags() {
        let args = parse(&[
            "--oauth-client",
            "app",
            "--oauth",
            "--oauth-client=svc:s3cret",
            "--oauth-access-ttl",
            "5",
            "--oauth-step-up",
            "add:mcp:admin",
            "--oauth-refresh-delay-ms=250",
            "--transport",
            "sse",
        ])
        .expect("valid");
        let expected = OAuthOptions {
            access_ttl: Duration::from_secs(5),
            clients: vec![("app".into(), None), ("svc".into(), Some("s3cret".into()))],
            step_up: Some(("add".into(), "mcp:admin".into())),
            refresh_delay: Duration::from_millis(250),
            ..OAuthOptions::default()
        };
        assert_eq!(args.oauth, Some(expected));
        let plain = parse(&["--oauth", "--transport", "http"]).expect("valid");
        assert_eq!(plain.oauth, Some(OAuthOptions::default()));
    }

    #[test]
    fn parses_a_hostile_flood() {
        let args = parse(&[
            "--hostile",
            "flood",
            "--flood-count=7",
            "--flood-bytes",
            "10",
            "--flood-ms",
            "250",
        ]);
        let expected = Args {
            mods: Hostile {
                flood: true,
                ..Hostile::default()
            },
            flood: FloodPlan {
                count: 7,
                bytes: 10,
                limit: Duration::from_millis(250),
            },
            ..Args::default()
        };
        assert_eq!(args, Ok(expected));
    }

    #[test]
    fn rejects_bad_arguments() {
        for bad in [
            &["--transport", "ws"][..],
            &["--port", "-1"],
            &["--port"],
            &["--boot-id", ""],
            &["stray"],
            &["--nope", "1"],
            &["--ignore-stdin-eof=1"],
            &["--modern-only=yes"],
            &["--stateless"],
            &["--stateless", "--transport", "sse"],
            &["--stateless=1", "--transport", "http"],
            &["--fail-status", "x", "--transport", "http"],
            &["--fail-every", "2", "--transport", "http"],
            &["--retry-after", "2", "--transport", "sse"],
            &["--fail-status", "503"],
            &["--redirect", "http://127.0.0.1:1/"],
            &["--redirect", "", "--transport", "http"],
            &["--hostile", ""],
            &["--hostile", "huge-pages", "--pages", "many"],
            &["--exit-after-list", "--transport", "http"],
            &["--oauth"],
            &["--oauth=1", "--transport", "http"],
            &["--oauth-client", "app", "--transport", "http"],
            &["--oauth", "--oauth-client", "", "--transport", "http"],
            &["--oauth", "--oauth-client", "app:", "--transport", "http"],
            &["--oauth", "--oauth-step-up", "add", "--transport", "http"],
            &[
                "--oauth",
                "--oauth-access-ttl",
                "soon",
                "--transport",
                "http",
            ],
            &["--oauth", "--oauth-nope", "1", "--transport", "http"],
            &["--discover-refusal", "nope"],
            &["--discover-refusal", "status:404"],
            &["--discover-refusal", "empty:202", "--transport", "sse"],
            &["--hostile", "flood", "--transport", "http"],
            &["--hostile", "flood", "--flood-count", "-1"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
