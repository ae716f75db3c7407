//! Hostile mode: a server that answers, but answers badly. A resilience layer must not become
//! the failure when a server sends too much, too fast, malformed, or text meant to drive the
//! terminal of whoever reads it. Each kind lives in its own file and is turned on with
//! `--hostile KIND` (repeatable).
//!
//! Kinds: `escapes` and `escapes-exit` ([`escapes`]).

pub mod escapes;

/// The hostile kinds turned on for one server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hostile {
    /// Tool names, titles, descriptions, results, errors, instructions and stderr carry terminal
    /// escape sequences ([`escapes`]).
    ///
    /// # Default
    /// `false`
    pub escapes: bool,
    /// stdio: write escape sequences to stderr at start, then exit 3 before serving.
    ///
    /// # Default
    /// `false`
    pub escapes_exit: bool,
}

impl Hostile {
    /// Turns on `kind` (the value of one `--hostile`).
    pub(crate) fn enable(&mut self, kind: &str) -> Result<(), String> {
        match kind {
            "escapes" => self.escapes = true,
            "escapes-exit" => self.escapes_exit = true,
            other => return Err(format!("--hostile: unknown kind {other:?}")),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::args::Args;

    fn parse(args: &[&str]) -> Result<Args, String> {
        Args::parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn hostile_kinds_are_parsed_and_checked_against_the_mode() {
        let args = parse(&["--hostile", "escapes", "--hostile=escapes-exit"]).expect("valid");
        assert!(args.hostile.escapes && args.hostile.escapes_exit);
        let remote = parse(&["--hostile", "escapes", "--transport", "http"]).expect("valid");
        assert!(remote.hostile.escapes);
        for bad in [
            &["--hostile", "nope"][..],
            &["--hostile"],
            &["--hostile", "escapes-exit", "--transport", "sse"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
