//! The one line a waiting command keeps rewriting at the bottom of a terminal's stderr (what
//! `tools` and `call` are waiting for; see `connect::progress`).
//!
//! # Invariants
//!
//! 1. At most one line is shown, and only by a caller that checked [`is_terminal`].
//! 2. Everything else written to stderr while it is shown (our messages, log lines) goes through
//!    [`suspend`]: the line is erased first and drawn again after, so no text lands behind it.
//! 3. Autowrap is off only while the line is drawn: a line wider than the terminal is cut at its
//!    edge instead of wrapping onto a second row, which `\r` could not erase. It is on again
//!    before anything else is written, so an interrupted command leaves the terminal as it was.
//! 4. The lock is held only around synchronous writes to stderr, never across an `.await`.

use std::{
    io::{IsTerminal, Write},
    sync::{Mutex, MutexGuard, PoisonError},
};

/// The text shown now (already escaped); `None` when no line is shown. Written only here.
static SHOWN: Mutex<Option<String>> = Mutex::new(None);

/// Back to the first column, and erase the row.
const ERASE: &str = "\r\x1b[2K";
/// DECAWM off and on again (invariant 3).
const NO_WRAP: &str = "\x1b[?7l";
const WRAP: &str = "\x1b[?7h";

/// Whether stderr is a terminal, where a line can be rewritten in place.
pub(crate) fn is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// Shows `text` (safe for a terminal, one line) instead of the line shown before.
pub(crate) fn show(text: &str) {
    let mut shown = lock();
    draw(text);
    *shown = Some(text.to_owned());
}

/// Erases the line, if one is shown.
pub(crate) fn clear() {
    if lock().take().is_some() {
        write_raw(ERASE);
    }
}

/// Runs `write`, which writes whole lines to stderr, with the line erased; draws it again after.
pub(crate) fn suspend<T>(write: impl FnOnce() -> T) -> T {
    let shown = lock();
    if shown.is_some() {
        write_raw(ERASE);
    }
    let out = write();
    if let Some(text) = &*shown {
        draw(text);
    }
    out
}

fn lock() -> MutexGuard<'static, Option<String>> {
    SHOWN.lock().unwrap_or_else(PoisonError::into_inner)
}

fn draw(text: &str) {
    write_raw(&format!("{ERASE}{NO_WRAP}{text}{WRAP}"));
}

fn write_raw(bytes: &str) {
    let mut stderr = std::io::stderr().lock();
    // A terminal that is gone cannot be told anything else either.
    let _ = stderr.write_all(bytes.as_bytes());
    let _ = stderr.flush();
}
