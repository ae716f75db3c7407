//! An error in one line for a person: its own words and its deepest cause.

/// The error's own words followed by its deepest cause (`error sending request: connection
/// refused`), without the layers in between.
///
/// URLs in it are redacted ([`crate::text::redact`]): reqwest's text names the request's URL,
/// query and all.
pub(crate) fn innermost(error: &(dyn std::error::Error + 'static)) -> String {
    let mut deepest = error;
    while let Some(next) = deepest.source() {
        deepest = next;
    }
    let text = if std::ptr::addr_eq(deepest, error) {
        error.to_string()
    } else {
        format!("{error}: {deepest}")
    };
    super::redact(&text).into_owned()
}
