//! Text that leaves the crate for a person: URLs without their credentials, and the closest
//! known word to a mistyped one.
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
pub(crate) use redact::{redact, redact_url};
pub(crate) use suggest::closest;
