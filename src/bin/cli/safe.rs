//! What the CLI writes for a person goes through here: URLs lose their credentials and control
//! characters are shown, not obeyed (see [`mcp_resilient::text`]).
//!
//! Three paths lead to a terminal, and each is covered once:
//!
//! - our messages and errors on stderr: [`eprint`];
//! - human lines on stdout (`tools`, `watch`, the demo): [`line`] and [`text`];
//! - log lines (ours, rmcp's, reqwest's, a child's stderr): [`Stderr`], the tracing writer.
//!
//! JSON output (`--json`, `call`) is left alone: serde already escapes every control character,
//! and a tool's own definitions and results are the server's content, printed as they are.

use std::{borrow::Cow, io::Write};

use mcp_resilient::text::{for_terminal, for_terminal_line, redact};

/// `message` as one of our stderr lines: `mcp-resilient: <message>`, redacted and escaped.
pub(crate) fn eprint(prefix: &str, message: impl std::fmt::Display) {
    eprintln!("{prefix}: {}", text(&message.to_string()));
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
        std::io::stderr().write_all(safe.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}
