//! Unknown keys in a server entry, reported with the nearest known key when one is close:
//! `comand` gets "did you mean `command`?", `foo` gets no guess.
//!
//! The known keys are read from the entry structs themselves (the field list serde's derive
//! passes to `deserialize_struct`), so a key added there is known here without a second list.

use serde::{
    Deserialize,
    de::{self, Deserializer, Visitor, value::Error as ValueError},
    forward_to_deserialize_any,
};
use serde_json::{Map, Value};

use super::{
    entry::{Entry, HeartbeatJson, ReconnectJson},
    limits::LimitsJson,
};
use crate::config::ConfigError;

/// Checks the keys of an entry and of its `reconnect`, `heartbeat` and `limits` blocks; the
/// error's path is the unknown key, relative to the entry.
pub(super) fn check_entry_keys(entry: &Map<String, Value>) -> Result<(), ConfigError> {
    check(entry, fields_of::<Entry>(), "")?;
    let blocks = [
        ("reconnect", fields_of::<ReconnectJson>()),
        ("heartbeat", fields_of::<HeartbeatJson>()),
        ("limits", fields_of::<LimitsJson>()),
    ];
    for (block, known) in blocks {
        if let Some(Value::Object(inner)) = entry.get(block) {
            check(inner, known, block)?;
        }
    }
    Ok(())
}

fn check(map: &Map<String, Value>, known: &[&str], prefix: &str) -> Result<(), ConfigError> {
    let Some(key) = map.keys().find(|key| !known.contains(&key.as_str())) else {
        return Ok(());
    };
    let path = if prefix.is_empty() {
        key.clone()
    } else {
        format!("{prefix}.{key}")
    };
    let message = match crate::text::closest(key, known.iter().copied()) {
        Some(near) => format!("unknown field `{key}`; did you mean `{near}`?"),
        None => format!("unknown field `{key}`"),
    };
    Err(ConfigError::new(path, message))
}

/// The JSON keys `T`'s derived `Deserialize` accepts.
fn fields_of<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    // The probe always fails once it has the list; the error carries nothing.
    let _ = T::deserialize(FieldProbe(&mut fields));
    fields
}

/// A deserializer that only records the field list of the struct asked of it.
struct FieldProbe<'a>(&'a mut &'static [&'static str]);

impl<'de> Deserializer<'de> for FieldProbe<'_> {
    type Error = ValueError;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, ValueError> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, ValueError> {
        *self.0 = fields;
        Err(de::Error::custom("fields recorded"))
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}
