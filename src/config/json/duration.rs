//! Durations in JSON: a string per [`parse_duration`] or an integer number of milliseconds.

use std::{fmt, time::Duration};

use serde::de::{self, Deserialize, Deserializer, Visitor};

use crate::config::parse_duration;

/// A duration read from JSON: `"1.5s"`, `"250ms"`, or `250` (milliseconds).
#[derive(Debug, Clone, Copy)]
pub(super) struct JsonDuration(Duration);

impl From<JsonDuration> for Duration {
    fn from(value: JsonDuration) -> Self {
        value.0
    }
}

impl<'de> Deserialize<'de> for JsonDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(DurationVisitor)
    }
}

struct DurationVisitor;

impl Visitor<'_> for DurationVisitor {
    type Value = JsonDuration;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a duration such as \"500ms\", \"1.5s\" or an integer number of milliseconds")
    }

    fn visit_u64<E: de::Error>(self, millis: u64) -> Result<Self::Value, E> {
        Ok(JsonDuration(Duration::from_millis(millis)))
    }

    fn visit_i64<E: de::Error>(self, millis: i64) -> Result<Self::Value, E> {
        u64::try_from(millis)
            .map(|millis| JsonDuration(Duration::from_millis(millis)))
            .map_err(|_| E::custom(format!("negative duration {millis}")))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Self::Value, E> {
        Err(E::custom(format!(
            "fractional number {value}: write milliseconds as an integer, or a string such as \"1.5s\""
        )))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Self::Value, E> {
        parse_duration(value).map(JsonDuration).map_err(E::custom)
    }
}

/// Cline's `timeout`: a number of seconds (`60`, `1.5`), its default 60 like our `callTimeout`.
#[derive(Debug, Clone, Copy)]
pub(super) struct JsonSeconds(Duration);

impl From<JsonSeconds> for Duration {
    fn from(value: JsonSeconds) -> Self {
        value.0
    }
}

impl<'de> Deserialize<'de> for JsonSeconds {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SecondsVisitor)
    }
}

struct SecondsVisitor;

impl Visitor<'_> for SecondsVisitor {
    type Value = JsonSeconds;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number of seconds, such as 60")
    }

    fn visit_u64<E: de::Error>(self, secs: u64) -> Result<Self::Value, E> {
        Ok(JsonSeconds(Duration::from_secs(secs)))
    }

    fn visit_i64<E: de::Error>(self, secs: i64) -> Result<Self::Value, E> {
        u64::try_from(secs)
            .map(|secs| JsonSeconds(Duration::from_secs(secs)))
            .map_err(|_| E::custom(format!("negative timeout {secs}")))
    }

    fn visit_f64<E: de::Error>(self, secs: f64) -> Result<Self::Value, E> {
        Duration::try_from_secs_f64(secs)
            .map(JsonSeconds)
            .map_err(|_| E::custom(format!("invalid timeout {secs}: expected seconds")))
    }
}
