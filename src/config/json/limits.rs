//! The `limits` block of an entry, and sizes in JSON (an integer, or a string such as
//! `"16MiB"`).
//!
//! Two older keys say the same as a field of the block and are still read: `maxToolPages`
//! (`limits.maxListPages`) and `maxEventBytes` (`limits.maxSseEventBytes`, remote servers only).
//! An entry that gives one of them and its field too is refused.

use std::fmt;

use serde::{
    Deserialize,
    de::{self, Deserializer, Visitor},
};

use crate::config::{ConfigError, Limits, parse_bytes};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct LimitsJson {
    max_list_bytes: Option<JsonBytes>,
    max_list_items: Option<usize>,
    pub(super) max_list_pages: Option<u32>,
    max_message_bytes: Option<JsonBytes>,
    pub(super) max_sse_event_bytes: Option<JsonBytes>,
    max_sse_line_bytes: Option<JsonBytes>,
    max_buffered_notifications: Option<usize>,
    max_buffered_notification_bytes: Option<JsonBytes>,
}

impl LimitsJson {
    /// The limits with this block's fields applied over the defaults, and the older keys
    /// (`maxToolPages`, `maxEventBytes`) where the block does not give their field. `renames`
    /// learns which older key was used, so a resolve error names it.
    pub(super) fn into_limits(
        self,
        tool_pages: Option<u32>,
        event_bytes: Option<usize>,
        renames: &mut Vec<(&'static str, &'static str)>,
    ) -> Result<Limits, ConfigError> {
        if tool_pages.is_some() && self.max_list_pages.is_some() {
            return Err(ConfigError::new(
                "maxToolPages",
                "says the same as `limits.maxListPages`; give one of them",
            ));
        }
        if event_bytes.is_some() && self.max_sse_event_bytes.is_some() {
            return Err(ConfigError::new(
                "maxEventBytes",
                "says the same as `limits.maxSseEventBytes`; give one of them",
            ));
        }
        if tool_pages.is_some() {
            renames.push(("limits.maxListPages", "maxToolPages"));
        }
        if event_bytes.is_some() {
            renames.push(("limits.maxSseEventBytes", "maxEventBytes"));
        }
        let mut limits = Limits::default();
        let bytes = |value: Option<JsonBytes>| value.map(|b| b.0);
        let fields = [
            (&mut limits.max_list_bytes, bytes(self.max_list_bytes)),
            (&mut limits.max_list_items, self.max_list_items),
            (&mut limits.max_message_bytes, bytes(self.max_message_bytes)),
            (
                &mut limits.max_sse_event_bytes,
                bytes(self.max_sse_event_bytes).or(event_bytes),
            ),
            (
                &mut limits.max_sse_line_bytes,
                bytes(self.max_sse_line_bytes),
            ),
            (
                &mut limits.max_buffered_notifications,
                self.max_buffered_notifications,
            ),
            (
                &mut limits.max_buffered_notification_bytes,
                bytes(self.max_buffered_notification_bytes),
            ),
        ];
        for (field, value) in fields {
            if let Some(value) = value {
                *field = value;
            }
        }
        if let Some(pages) = self.max_list_pages.or(tool_pages) {
            limits.max_list_pages = pages;
        }
        Ok(limits)
    }
}

/// A size read from JSON: `1048576`, `"512KiB"`, `"16 MiB"` (see [`parse_bytes`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct JsonBytes(pub(super) usize);

impl<'de> Deserialize<'de> for JsonBytes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(BytesVisitor)
    }
}

struct BytesVisitor;

impl Visitor<'_> for BytesVisitor {
    type Value = JsonBytes;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a size such as 1048576, \"512KiB\" or \"16MiB\"")
    }

    fn visit_u64<E: de::Error>(self, bytes: u64) -> Result<Self::Value, E> {
        usize::try_from(bytes)
            .map(JsonBytes)
            .map_err(|_| E::custom(format!("size {bytes} is too large")))
    }

    fn visit_i64<E: de::Error>(self, bytes: i64) -> Result<Self::Value, E> {
        u64::try_from(bytes)
            .map_err(|_| E::custom(format!("negative size {bytes}")))
            .and_then(|bytes| self.visit_u64(bytes))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Self::Value, E> {
        Err(E::custom(format!(
            "fractional number {value}: write a whole number of bytes, or a string such as \"16MiB\""
        )))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Self::Value, E> {
        parse_bytes(value).map(JsonBytes).map_err(E::custom)
    }
}
