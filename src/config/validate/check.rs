//! The shape of one check: a result naming the offending field, and the duration bounds most
//! fields share.

use std::time::Duration;

use crate::config::{ConfigError, MAX_DURATION, format_duration};

/// One check: `Err` names the field and what is wrong with it.
pub(super) type Check = Result<(), ConfigError>;

/// Greater than zero and at most [`MAX_DURATION`].
pub(super) fn positive(path: &str, d: Duration) -> Check {
    if d.is_zero() {
        return fail(path, "must be greater than zero, got 0s");
    }
    at_most(path, d)
}

/// At most [`MAX_DURATION`]: beyond it a duration is a mistake (a unit mixed up, `u64::MAX`
/// meant as "forever"), and clock arithmetic near the limit of `Instant` would overflow.
pub(super) fn at_most(path: &str, d: Duration) -> Check {
    if d > MAX_DURATION {
        return fail(
            path,
            format!(
                "must be at most {}, got {}",
                format_duration(MAX_DURATION),
                format_duration(d)
            ),
        );
    }
    Ok(())
}

pub(super) fn fail(path: &str, message: impl Into<String>) -> Check {
    Err(ConfigError::new(path, message))
}
