//! Text that leaves the crate for a person: URLs without their credentials, the closest known
//! word to a mistyped one, and durations as a sentence says them. Public so that a program
//! printing a server's text or a URL beside the library's own output applies the same rules
//! (one copy of the redaction rules, which two copies could let drift): the command line and
//! the gateway do.
//!
//! A URL can carry a credential: `https://user:secret@host/mcp` or `…/mcp?api_key=…`. Every
//! `Display`, `Debug`, log line, event and error of this crate shows URLs through [`redact`] or
//! [`redact_url`]: the scheme, host, port and path stay (the message stays useful), the
//! userinfo becomes `REDACTED@`, every query value and the fragment become `REDACTED`.
//! (Escaping server text for a terminal is the command line's business: it is the one that
//! prints to one.)
//!
//! # Invariants
//!
//! 1. [`redact`] never returns the userinfo, a query value or the fragment of any
//!    `scheme://` URL in its input, wherever in the text the URL stands.
//! 2. Text with nothing to change is returned borrowed, unchanged.

mod cause;
mod redact;
mod suggest;

pub(crate) use cause::innermost;
pub use redact::{redact, redact_url};
pub use suggest::closest;

use std::time::Duration;

/// A duration as people write it in a sentence: `800 ms`, `2.5 s`, `30 s` (milliseconds below a
/// second, else seconds with one decimal when there is a fraction). For messages; not parsable
/// (the config format's is [`crate::config::format_duration`]).
pub fn human_duration(d: Duration) -> String {
    let ms = d.as_millis();
    match ms {
        0..1000 => format!("{ms} ms"),
        _ if ms.is_multiple_of(1000) => format!("{} s", ms / 1000),
        _ => format!("{:.1} s", d.as_secs_f64()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_reads_as_a_sentence_says_it() {
        assert_eq!(human_duration(Duration::from_millis(800)), "800 ms");
        assert_eq!(human_duration(Duration::from_millis(2500)), "2.5 s");
        assert_eq!(human_duration(Duration::from_secs(30)), "30 s");
    }
}
