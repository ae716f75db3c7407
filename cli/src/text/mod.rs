//! The command line's own text helpers: redaction of URLs in what it prints, did-you-mean, and
//! durations as people write them. The library redacts what it hands out (its errors, events
//! and `Debug` output) with a crate-private copy of the same rules; this one covers everything
//! else the command line prints.

mod redact;
mod suggest;

use std::time::Duration;

pub(crate) use redact::{redact, redact_url};
pub(crate) use suggest::closest;

/// A duration as people write it in a sentence: `800 ms`, `2.5 s`, `30 s` (milliseconds below a
/// second, else seconds with one decimal when there is a fraction). For messages; not parsable.
pub(crate) fn human_duration(d: Duration) -> String {
    let ms = d.as_millis();
    match ms {
        0..1000 => format!("{ms} ms"),
        _ if ms.is_multiple_of(1000) => format!("{} s", ms / 1000),
        _ => format!("{:.1} s", d.as_secs_f64()),
    }
}
