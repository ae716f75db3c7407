//! Text that leaves the crate for a person: URLs without their credentials, and server text
//! that cannot drive a terminal.
//!
//! Two dangers share this module because they meet at the same places (an error detail, a log
//! line, a `watch` line):
//!
//! - A URL can carry a credential: `https://user:secret@host/mcp` or `…/mcp?api_key=…`. Every
//!   `Display`, `Debug`, log line, event and error of this crate shows URLs through [`redact`] or
//!   [`redact_url`]: the scheme, host, port and path stay (the message stays useful), the
//!   userinfo becomes `REDACTED@`, every query value and the fragment become `REDACTED`.
//! - A server controls the text of its tool names, descriptions, errors and its stderr. Printed
//!   raw, `ESC ]0;…BEL` retitles the terminal, `ESC [2J` clears it and OSC 52 writes the
//!   clipboard. [`for_terminal`] and [`for_terminal_line`] escape every control character so
//!   that it is shown, not obeyed. [`is_terminal_control`] says which characters those are, for
//!   writers of JSON (serde escapes C0 controls itself, but not DEL, C1 or bidi controls).
//!
//! # Invariants
//!
//! 1. [`redact`] never returns the userinfo, a query value or the fragment of any
//!    `scheme://` URL in its input, wherever in the text the URL stands.
//! 2. The output of [`for_terminal_line`] holds no C0 control but `\t`, no DEL, C1 control or
//!    bidi override; [`for_terminal`] keeps `\n` too.
//! 3. Text with nothing to change is returned borrowed, unchanged.

mod escape;
mod redact;

pub use escape::{for_terminal, for_terminal_line, is_terminal_control};
pub use redact::{REDACTED, redact, redact_url};
