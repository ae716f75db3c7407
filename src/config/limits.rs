//! [`Limits`]: the bounds on everything a server controls, in one place. Over 300 lines: each
//! bound, its default, its setter and its getter.
//!
//! A resilience layer must never become the failure: a server that answers too much must not
//! take the host's memory with it. Each bound below is checked before (or while) the bytes are
//! kept, and one exceeded is a verdict, not an out-of-memory: the generation (or the attempt)
//! ends with cause [`LimitExceeded`](crate::state::Cause::LimitExceeded), whose detail names the
//! limit and the value seen, and the next attempt follows the rules for permanent refusals (tried
//! again only at `reconnect.max_delay`). README's "Limits" lists them with their defaults.
//!
//! Why these defaults: real tool lists are a few hundred KB (a hundred tools with schemas);
//! 4 MiB is ten times that. One byte of tool JSON costs about 17 bytes of memory once rmcp has
//! parsed it (schemas become `serde_json` map trees), so the list bound, not the page size,
//! decides what a hostile list costs: under 100 MB with this default (BENCHMARKS.md § 11). One
//! message is bounded like rmcp bounds it (16 MiB): a tool result can carry an image.

use std::fmt;

use super::ConfigError;

/// Bounds on what one server may send. Set with
/// [`ServerConfig::limits`](super::ServerConfig::limits), or the `limits` block of a JSON entry
/// (`maxListBytes`, …; sizes as integers or strings such as `"32MiB"`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Most bytes of JSON one list may have across all its pages: the tool list of a
    /// generation, and each prompt or resource list the proxy reads for its host. Counted page
    /// by page; the listing stops at the page that passes it. At least 1024.
    ///
    /// # Default
    /// 4 MiB
    pub(crate) max_list_bytes: usize,
    /// Most items (tools, prompts, resources) one list may have across all its pages. At
    /// least 1.
    ///
    /// # Default
    /// 10 000
    pub(crate) max_list_items: usize,
    /// Most pages one list may take (a cursor that never ends). At least 1.
    ///
    /// # Default
    /// 100
    pub(crate) max_list_pages: u32,
    /// Largest single message: a stdio line, a Streamable HTTP JSON body. At least 1024.
    ///
    /// # Default
    /// 16 MiB
    pub(crate) max_message_bytes: usize,
    /// Largest single SSE event (legacy SSE, and Streamable HTTP response streams). At least
    /// 1024.
    ///
    /// # Default
    /// 16 MiB
    pub(crate) max_sse_event_bytes: usize,
    /// Longest single SSE line. One line usually carries a whole message (`data: {…}`), so it
    /// is bounded like an event; a line longer than `max_sse_event_bytes` is stopped by that
    /// bound anyway. At least 1024.
    ///
    /// # Default
    /// 16 MiB
    pub(crate) max_sse_line_bytes: usize,
    /// Most server-to-host notifications (log messages, progress) waiting for a host that
    /// reads slowly; past it they are dropped and counted. Responses and `list_changed` are
    /// never dropped. At least 1.
    ///
    /// # Default
    /// 1024
    pub(crate) max_buffered_notifications: usize,
    /// Most bytes of those waiting notifications. At least 1024.
    ///
    /// # Default
    /// 8 MiB
    pub(crate) max_buffered_notification_bytes: usize,
}

const MIB: usize = 1024 * 1024;

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_list_bytes: 4 * MIB,
            max_list_items: 10_000,
            max_list_pages: 100,
            max_message_bytes: 16 * MIB,
            max_sse_event_bytes: 16 * MIB,
            max_sse_line_bytes: 16 * MIB,
            max_buffered_notifications: 1024,
            max_buffered_notification_bytes: 8 * MIB,
        }
    }
}

impl Limits {
    /// Sets the most bytes of JSON one list may have across all its pages (tool, prompt and resource lists). At least 1024.
    ///
    /// Default: 4 MiB.
    pub fn max_list_bytes(mut self, value: usize) -> Self {
        self.max_list_bytes = value;
        self
    }

    /// Sets the most items one list may have across all its pages. At least 1.
    ///
    /// Default: 10 000.
    pub fn max_list_items(mut self, value: usize) -> Self {
        self.max_list_items = value;
        self
    }

    /// Sets the most pages one list may take. At least 1.
    ///
    /// Default: 100.
    pub fn max_list_pages(mut self, value: u32) -> Self {
        self.max_list_pages = value;
        self
    }

    /// Sets the largest single message (a stdio line, a Streamable HTTP JSON body). At least 1024.
    ///
    /// Default: 16 MiB.
    pub fn max_message_bytes(mut self, value: usize) -> Self {
        self.max_message_bytes = value;
        self
    }

    /// Sets the largest single SSE event. At least 1024.
    ///
    /// Default: 16 MiB.
    pub fn max_sse_event_bytes(mut self, value: usize) -> Self {
        self.max_sse_event_bytes = value;
        self
    }

    /// Sets the longest single SSE line. At least 1024.
    ///
    /// Default: 16 MiB.
    pub fn max_sse_line_bytes(mut self, value: usize) -> Self {
        self.max_sse_line_bytes = value;
        self
    }

    /// Sets the most server-to-host notifications waiting for a host that reads slowly; past it they are dropped and counted. At least 1.
    ///
    /// Default: 1024.
    pub fn max_buffered_notifications(mut self, value: usize) -> Self {
        self.max_buffered_notifications = value;
        self
    }

    /// Sets the most bytes of those waiting notifications. At least 1024.
    ///
    /// Default: 8 MiB.
    pub fn max_buffered_notification_bytes(mut self, value: usize) -> Self {
        self.max_buffered_notification_bytes = value;
        self
    }

    /// The most server-to-host notifications waiting for a host that reads slowly; past it they are dropped and counted. Default: 1024.
    pub fn get_max_buffered_notifications(&self) -> usize {
        self.max_buffered_notifications
    }

    /// The most bytes of those waiting notifications. Default: 8 MiB.
    pub fn get_max_buffered_notification_bytes(&self) -> usize {
        self.max_buffered_notification_bytes
    }
}

impl Limits {
    /// The bounds [`ServerConfig::resolve`](super::ServerConfig::resolve) checks; the error
    /// path is `limits.<field>`.
    pub(super) fn check(&self) -> Result<(), ConfigError> {
        let sizes = [
            ("max_list_bytes", self.max_list_bytes),
            ("max_message_bytes", self.max_message_bytes),
            ("max_sse_event_bytes", self.max_sse_event_bytes),
            ("max_sse_line_bytes", self.max_sse_line_bytes),
            (
                "max_buffered_notification_bytes",
                self.max_buffered_notification_bytes,
            ),
        ];
        for (field, value) in sizes {
            if value < 1024 {
                return Err(ConfigError::new(
                    format!("limits.{field}"),
                    format!("must be at least 1024, got {value}"),
                ));
            }
        }
        let counts = [
            ("max_list_items", self.max_list_items),
            ("max_list_pages", self.max_list_pages as usize),
            (
                "max_buffered_notifications",
                self.max_buffered_notifications,
            ),
        ];
        for (field, value) in counts {
            if value == 0 {
                return Err(ConfigError::new(
                    format!("limits.{field}"),
                    "must be at least 1, got 0",
                ));
            }
        }
        Ok(())
    }
}

/// A byte count as people read it: `16 MiB`, `1.5 KiB`, `812 B`.
pub(crate) struct Bytes(pub(crate) usize);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
        if self.0 < 1024 {
            return write!(f, "{} B", self.0);
        }
        let mut value = self.0 as f64 / 1024.0;
        let mut unit = 0;
        while value >= 1024.0 && unit + 1 < UNITS.len() {
            value /= 1024.0;
            unit += 1;
        }
        let rounded = (value * 10.0).round() / 10.0;
        if rounded.fract() == 0.0 {
            write!(f, "{rounded:.0} {}", UNITS[unit])
        } else {
            write!(f, "{rounded:.1} {}", UNITS[unit])
        }
    }
}

/// Parses a size: an integer number of bytes, optionally followed by `B`, `KiB`, `MiB` or `GiB`
/// (case-insensitive, spaces allowed): `1048576`, `"512KiB"`, `"16 MiB"`.
#[cfg_attr(not(feature = "config-files"), allow(dead_code))]
pub(crate) fn parse_bytes(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: usize = number
        .parse()
        .map_err(|_| format!("invalid size `{text}`; expected e.g. 1048576, 512KiB or 16MiB"))?;
    let unit = unit.trim();
    let scale: usize = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kib" => 1024,
        "mib" => MIB,
        "gib" => 1024 * MIB,
        _ => {
            return Err(format!(
                "unknown unit `{unit}` in `{text}`; use B, KiB, MiB or GiB"
            ));
        }
    };
    number
        .checked_mul(scale)
        .ok_or_else(|| format!("size `{text}` is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_print_in_binary_units() {
        assert_eq!(parse_bytes("1048576"), Ok(MIB));
        assert_eq!(parse_bytes("512KiB"), Ok(512 * 1024));
        assert_eq!(parse_bytes(" 16 mib "), Ok(16 * MIB));
        assert_eq!(parse_bytes("1GiB"), Ok(1024 * MIB));
        for bad in ["", "MiB", "-1", "1.5MiB", "4MB", "99999999999999999999GiB"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
        let shown: Vec<String> = [812, 1536, 16 * MIB, 8 * MIB + MIB / 2, 3 * 1024 * MIB]
            .map(|n| Bytes(n).to_string())
            .into();
        assert_eq!(shown, ["812 B", "1.5 KiB", "16 MiB", "8.5 MiB", "3 GiB"]);
    }

    #[test]
    fn the_defaults_pass_their_own_checks_and_zero_does_not() {
        assert_eq!(Limits::default().check(), Ok(()));
        let zero_pages = Limits {
            max_list_pages: 0,
            ..Limits::default()
        };
        let error = zero_pages.check().expect_err("zero pages");
        assert_eq!(error.path, "limits.max_list_pages");
        let tiny = Limits {
            max_message_bytes: 100,
            ..Limits::default()
        };
        assert_eq!(
            tiny.check().expect_err("tiny").to_string(),
            "limits.max_message_bytes: must be at least 1024, got 100"
        );
    }
}
