//! Command-line arguments of the proxies, parsed by hand like the mock server's.

use std::net::SocketAddr;

use super::fault::GatewayFault;

pub(super) const USAGE: &str = "\
usage: proxy tcp --upstream 127.0.0.1:PORT [--port N]
       proxy http --upstream http://127.0.0.1:PORT [--port N]
                  [--fail-status N --fail-every K [--retry-after S] [--fail-methods a,b] [--seed N]]
tcp reads commands on stdin, one per line, and answers each with one line:
  pass | blackhole | refuse | reset -> OK <command>;  stats -> {\"mode\":…,\"open\":…,\"accepted\":…}
http serves until stdin ends or a signal, then prints {\"injected\":…,\"forwarded\":…}";

/// Which proxy to run, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ProxyArgs {
    Tcp {
        upstream: SocketAddr,
        /// 0 means an ephemeral port.
        port: u16,
    },
    Http {
        upstream: String,
        /// 0 means an ephemeral port.
        port: u16,
        fault: Option<GatewayFault>,
    },
}

const NEEDS_FAULT: &str =
    "--fail-status and --fail-every go together, and the other fault options need both";

fn number<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| format!("{flag}: expected a non-negative integer, got {value:?}"))
}

/// The `--flag value` / `--flag=value` pairs after the form, in order.
fn pairs<I: Iterator<Item = String>>(mut args: I) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    while let Some(arg) = args.next() {
        let (flag, value) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag.to_owned(), value.to_owned()),
            _ if arg.starts_with("--") => match args.next() {
                Some(value) => (arg, value),
                None => return Err(format!("{arg}: missing value")),
            },
            _ => return Err(format!("unexpected argument {arg:?}")),
        };
        pairs.push((flag, value));
    }
    Ok(pairs)
}

impl ProxyArgs {
    /// Parses the arguments that follow the program (or subcommand) name.
    pub(super) fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Self, String> {
        let mut args = args.into_iter();
        let form = args.next().ok_or("missing form: tcp or http")?;
        let (mut upstream, mut port) = (None, 0);
        let mut fault = GatewayFault::new(0, 0);
        let (mut status, mut every) = (None, None);
        // Set by the options that only make sense with a fault.
        let mut refines_fault = false;
        for (flag, value) in pairs(args)? {
            match (form.as_str(), flag.as_str()) {
                (_, "--upstream") => upstream = Some(value),
                (_, "--port") => port = number(&flag, &value)?,
                ("http", "--fail-status") => status = Some(number::<u16>(&flag, &value)?),
                ("http", "--fail-every") => every = Some(number::<u32>(&flag, &value)?),
                ("http", "--retry-after") => {
                    fault.retry_after = Some(value);
                    refines_fault = true;
                }
                ("http", "--fail-methods") => {
                    let methods = value.split(',').filter(|m| !m.is_empty());
                    fault.methods = methods.map(str::to_owned).collect();
                    refines_fault = true;
                }
                ("http", "--seed") => {
                    fault.seed = Some(number(&flag, &value)?);
                    refines_fault = true;
                }
                _ => return Err(format!("unexpected argument {flag:?}")),
            }
        }
        let upstream = upstream.ok_or("--upstream is required")?;
        match form.as_str() {
            "tcp" => {
                let upstream = upstream.parse().map_err(|_| {
                    format!("--upstream: expected 127.0.0.1:PORT, got {upstream:?}")
                })?;
                Ok(ProxyArgs::Tcp { upstream, port })
            }
            "http" => {
                let fault = match (status, every) {
                    (Some(status), Some(every)) => Some(GatewayFault {
                        status,
                        every,
                        ..fault
                    }),
                    (None, None) if !refines_fault => None,
                    _ => return Err(NEEDS_FAULT.into()),
                };
                Ok(ProxyArgs::Http {
                    upstream,
                    port,
                    fault,
                })
            }
            other => Err(format!("unknown form {other:?}: expected tcp or http")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<ProxyArgs, String> {
        ProxyArgs::parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn parses_both_forms_in_both_spellings() {
        assert_eq!(
            parse(&["tcp", "--upstream", "127.0.0.1:9", "--port=7"]),
            Ok(ProxyArgs::Tcp {
                upstream: "127.0.0.1:9".parse().unwrap(),
                port: 7
            })
        );
        let http = parse(&[
            "http",
            "--upstream=http://127.0.0.1:9",
            "--fail-status",
            "429",
            "--fail-every=3",
            "--retry-after",
            "2",
            "--fail-methods",
            "tools/call,ping",
            "--seed",
            "11",
        ]);
        let fault = GatewayFault {
            retry_after: Some("2".into()),
            methods: vec!["tools/call".into(), "ping".into()],
            seed: Some(11),
            ..GatewayFault::new(429, 3)
        };
        let expected = ProxyArgs::Http {
            upstream: "http://127.0.0.1:9".into(),
            port: 0,
            fault: Some(fault),
        };
        assert_eq!(http, Ok(expected));
        let plain = parse(&["http", "--upstream", "http://127.0.0.1:9"]);
        assert_eq!(
            plain,
            Ok(ProxyArgs::Http {
                upstream: "http://127.0.0.1:9".into(),
                port: 0,
                fault: None
            })
        );
    }

    #[test]
    fn rejects_bad_arguments() {
        for bad in [
            &[][..],
            &["udp", "--upstream", "127.0.0.1:9"],
            &["tcp"],
            &["tcp", "--upstream", "localhost"],
            &["tcp", "--upstream", "127.0.0.1:9", "--fail-status", "429"],
            &["tcp", "--upstream", "127.0.0.1:9", "--port"],
            &[
                "http",
                "--upstream",
                "http://127.0.0.1:9",
                "--fail-status",
                "429",
            ],
            &["http", "--upstream", "http://127.0.0.1:9", "--seed", "1"],
            &["http", "--upstream", "http://127.0.0.1:9", "stray"],
            &[
                "http",
                "--upstream",
                "http://127.0.0.1:9",
                "--fail-every",
                "-1",
                "--fail-status",
                "1",
            ],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
