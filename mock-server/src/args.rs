//! Command-line arguments, parsed by hand (the set is tiny and fixed).

use std::path::PathBuf;
use std::time::Duration;

pub(crate) const USAGE: &str = "usage: mcp-mock-server [--transport stdio|sse|http] [--port N] \
[--boot-id ID] [--lock-file PATH] [--extra-tools N] [--sse-retry-ms N] [--ignore-stdin-eof]";

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
        }
    }
}

fn number<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| format!("{flag}: expected a non-negative integer, got {value:?}"))
}

impl Args {
    /// Parses the arguments that follow the program name.
    pub(crate) fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Self, String> {
        let mut parsed = Self::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => {
                    (flag.to_owned(), Some(value.to_owned()))
                }
                _ => (arg, None),
            };
            if flag == "--ignore-stdin-eof" {
                if inline.is_some() {
                    return Err("--ignore-stdin-eof takes no value".into());
                }
                parsed.ignore_stdin_eof = true;
                continue;
            }
            let value = match inline.or_else(|| args.next()) {
                Some(value) => value,
                None if flag.starts_with("--") => return Err(format!("{flag}: missing value")),
                None => return Err(format!("unexpected argument {flag:?}")),
            };
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
                _ => return Err(format!("unexpected argument {flag:?}")),
            }
        }
        Ok(parsed)
    }
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
        };
        assert_eq!(args, Ok(expected));
        assert_eq!(parse(&[]), Ok(Args::default()));
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
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
