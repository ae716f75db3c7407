//! Human-readable durations: `250ms`, `5s`, `1.5s`, `1m30s`, `2h`.

use std::time::Duration;

/// The longest timeout, interval or delay a configuration may set: 24 hours. Longer is a mistake
/// (a unit mixed up, `u64::MAX` meant as "forever"), refused by
/// [`ServerConfig::resolve`](super::ServerConfig::resolve) with the field's path.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 60 * 60);

/// A duration [`parse_duration`] could not read. Its `Display` says what is wrong and quotes
/// the input: ``unknown unit `x` in `5x`; use ns, us, ms, s, m, h or d``.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct DurationError {
    input: String,
    problem: Problem,
}

/// What is wrong with a duration.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Problem {
    Empty,
    Negative,
    NoNumber,
    MissingUnit(String),
    UnknownUnit(String),
    InvalidNumber(String),
    TooLarge,
}

impl DurationError {
    fn new(input: &str, problem: Problem) -> Self {
        DurationError {
            input: input.to_owned(),
            problem,
        }
    }

    /// The text that did not parse, without surrounding whitespace.
    pub fn input(&self) -> &str {
        &self.input
    }

    fn describe(&self) -> String {
        let input = &self.input;
        match &self.problem {
            Problem::Empty => "empty duration; expected e.g. 500ms, 5s or 1m".to_owned(),
            Problem::Negative => format!("negative duration `{input}`"),
            Problem::NoNumber => format!("invalid duration `{input}`: expected a number"),
            Problem::MissingUnit(number) => {
                format!("missing unit in `{input}`; write e.g. {number}s or {number}ms")
            }
            Problem::UnknownUnit(unit) => {
                format!("unknown unit `{unit}` in `{input}`; use ns, us, ms, s, m, h or d")
            }
            Problem::InvalidNumber(number) => format!("invalid number `{number}` in `{input}`"),
            Problem::TooLarge => format!("duration `{input}` is too large"),
        }
    }
}

/// Nanoseconds per unit, longest suffix first so `ms` is not read as `m` + `s`.
const UNITS: [(&str, u128); 8] = [
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
    ("d", 86_400_000_000_000),
];

/// Parses a duration such as `250ms`, `5s`, `1.5s`, `1m`, `2h`, `0s` or `1m30s`.
///
/// Units: `ns`, `us` (or `µs`), `ms`, `s`, `m`, `h`, `d`. Several `<number><unit>` parts may follow
/// each other and are added up, so every [`format_duration`] output parses back to the same value.
/// Rejected: an empty string, a sign (durations are never negative), a number without a unit
/// (`"5"` could mean seconds or milliseconds), unknown units, `inf`/`NaN`, values that overflow
/// [`Duration`]. Surrounding whitespace is ignored.
pub fn parse_duration(s: &str) -> Result<Duration, DurationError> {
    let input = s.trim();
    if input.is_empty() {
        return Err(DurationError::new(input, Problem::Empty));
    }
    if input.starts_with('-') {
        return Err(DurationError::new(input, Problem::Negative));
    }
    let mut rest = input;
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_len);
        if number.is_empty() {
            return Err(DurationError::new(input, Problem::NoNumber));
        }
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        if unit.is_empty() {
            return Err(DurationError::new(
                input,
                Problem::MissingUnit(number.to_owned()),
            ));
        }
        let Some(&(_, per_unit)) = UNITS.iter().find(|(name, _)| *name == unit) else {
            return Err(DurationError::new(
                input,
                Problem::UnknownUnit(unit.to_owned()),
            ));
        };
        let part = scaled(number, per_unit)
            .ok_or_else(|| DurationError::new(input, Problem::InvalidNumber(number.to_owned())))?;
        total = total
            .checked_add(part)
            .ok_or_else(|| DurationError::new(input, Problem::TooLarge))?;
        rest = after;
    }
    let secs = u64::try_from(total / 1_000_000_000)
        .map_err(|_| DurationError::new(input, Problem::TooLarge))?;
    // The remainder is below 1e9, so it always fits in a u32.
    let nanos = (total % 1_000_000_000) as u32;
    Ok(Duration::new(secs, nanos))
}

/// `number` (digits, at most one `.`) times `per_unit` nanoseconds, truncated to whole
/// nanoseconds; `None` if malformed or overflowing.
fn scaled(number: &str, per_unit: u128) -> Option<u128> {
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    if int.is_empty() && frac.is_empty() || frac.contains('.') {
        return None;
    }
    let int_value: u128 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let mut value = int_value.checked_mul(per_unit)?;
    // Digits beyond 18 cannot change a nanosecond count of any unit up to a day.
    let frac = &frac[..frac.len().min(18)];
    if !frac.is_empty() {
        let frac_value: u128 = frac.parse().ok()?;
        let scale = 10u128.pow(frac.len() as u32);
        value = value.checked_add(frac_value.checked_mul(per_unit)? / scale)?;
    }
    Some(value)
}

/// Formats a duration short and exact: `0s`, `500ms`, `30s`, `1m30s`, `2h`, `1s250ms`, `1500ns`.
///
/// Zero parts are left out and the result always parses back with [`parse_duration`].
pub fn format_duration(d: Duration) -> String {
    if d.is_zero() {
        return "0s".to_owned();
    }
    let secs = d.as_secs();
    let nanos = d.subsec_nanos();
    let parts = [
        (secs / 3600, "h"),
        (secs / 60 % 60, "m"),
        (secs % 60, "s"),
        (u64::from(nanos / 1_000_000), "ms"),
        (u64::from(nanos / 1_000 % 1_000), "us"),
        (u64::from(nanos % 1_000), "ns"),
    ];
    parts
        .iter()
        .filter(|(value, _)| *value > 0)
        .map(|(value, unit)| format!("{value}{unit}"))
        .collect()
}
