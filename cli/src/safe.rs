//! What the CLI writes for a person goes through here: URLs lose their credentials and control
//! characters are shown, not obeyed (see [`mcp_resilient::text`]).
//!
//! Three paths lead to a terminal, and each is covered once:
//!
//! - our messages and errors on stderr: [`eprint`];
//! - human lines on stdout (`tools`, `watch`, the demo): [`line`] and [`text`];
//! - log lines (ours, rmcp's, reqwest's, a child's stderr): [`Stderr`], the tracing writer.
//!
//! JSON output (`--json`, `call`) goes through [`json`]: serde escapes C0 controls, [`json`] also
//! DEL, C1 and bidi controls, and it stays plain JSON that gives back the server's strings
//! unchanged. A tool's definitions and results are the server's content: they are not redacted.

use std::{borrow::Cow, io::Write};

use crate::text::redact;
use crate::{
    escape::{for_terminal, for_terminal_line, is_terminal_control},
    status_line,
};

/// `message` as one of our stderr lines: `mcp-resilient: <message>`, redacted and escaped.
pub(crate) fn eprint(prefix: &str, message: impl std::fmt::Display) {
    let message = text(&message.to_string());
    status_line::suspend(|| eprintln!("{prefix}: {message}"));
}

/// One line of what a command is waiting for, with server text inside (a cause's detail): as
/// [`eprint`] would print it, on a terminal in place of the one before (`status_line`).
pub(crate) fn status(prefix: &str, message: &str, in_place: bool) {
    let message = line(&redact(message)).into_owned();
    match in_place {
        true => status_line::show(&format!("{prefix}: {message}")),
        false => status_line::suspend(|| eprintln!("{prefix}: {message}")),
    }
}

/// Server text on one line (a name, a description's first line, an event): escaped, `\n` too.
pub(crate) fn line(text: &str) -> Cow<'_, str> {
    for_terminal_line(text)
}

/// Our own message with server text inside (a cause's detail): redacted, then escaped;
/// newlines stay.
pub(crate) fn text(message: &str) -> String {
    for_terminal(&redact(message)).into_owned()
}

/// The tracing writer: stderr, each log line redacted and escaped. Logs are written without
/// ANSI colours (`with_ansi(false)`), so every escape byte left would be a server's.
pub(crate) struct Stderr;

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Stderr {
    type Writer = SafeWriter;

    fn make_writer(&'a self) -> Self::Writer {
        SafeWriter
    }
}

/// One log line's writer. The formatter hands over each event whole, so a URL is never split
/// across two writes.
pub(crate) struct SafeWriter;

impl Write for SafeWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let raw = String::from_utf8_lossy(buf);
        let safe = for_terminal(&redact(&raw)).into_owned();
        status_line::suspend(|| std::io::stderr().write_all(safe.as_bytes()))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// `value` as compact JSON whose strings also escape what serde leaves raw and a terminal may
/// obey: DEL, C1 controls (the one-byte CSI `U+009B` among them), bidi overrides. Still plain
/// JSON: any parser gives back the original strings.
pub(crate) fn json(value: &impl serde::Serialize) -> String {
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, TerminalJson);
    if value.serialize(&mut serializer).is_err() {
        return "null".to_owned();
    }
    // The formatter writes only what serde gave it (valid UTF-8) and ASCII escapes.
    String::from_utf8(out).unwrap_or_default()
}

/// serde_json's compact format, with [`is_terminal_control`] characters written as `\uXXXX`.
struct TerminalJson;

impl serde_json::ser::Formatter for TerminalJson {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut rest = fragment;
        while let Some(at) = rest.find(is_terminal_control) {
            writer.write_all(&rest.as_bytes()[..at])?;
            let c = rest[at..].chars().next().unwrap_or(' ');
            write!(writer, "\\u{:04x}", u32::from(c))?;
            rest = &rest[at + c.len_utf8()..];
        }
        writer.write_all(rest.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escapes_what_a_terminal_may_obey_and_still_round_trips() {
        let hostile = "a\u{1b}[2J\u{9b}31m\u{7f}\u{202e}z \"q\" ü";
        let value = serde_json::json!({ "text": hostile });
        let line = json(&value);
        assert!(
            !line.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{line}"
        );
        assert!(
            line.contains(r"\u009b") && line.contains(r"\u202e"),
            "{line}"
        );
        let back: serde_json::Value = serde_json::from_str(&line).expect("valid JSON");
        assert_eq!(back, value);
    }
}
