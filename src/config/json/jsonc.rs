//! JSON with comments: VS Code reads `mcp.json` as JSONC (`//` and `/* */` comments, trailing
//! commas), and users copy examples that have them.

/// Blanks out comments and trailing commas so strict JSON remains.
///
/// Every removed byte becomes a space (a newline stays a newline), so line and column numbers in
/// parse errors still point into the user's file. Strings, escapes included, are left alone; an
/// unterminated comment or string is left to the JSON parser to report.
pub(super) fn strip_jsonc(text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    // The comma that may turn out to be trailing: the last one seen outside a string with only
    // whitespace and comments after it so far.
    let mut pending_comma: Option<usize> = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                pending_comma = None;
                i = skip_string(&bytes, i);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = find(&bytes, i, b"\n").unwrap_or(bytes.len());
                blank(&mut bytes[i..end]);
                i = end;
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                // Unterminated: left as is for the parser to reject.
                if let Some(close) = find(&bytes, i + 2, b"*/") {
                    blank(&mut bytes[i..close + 2]);
                    i = close + 2;
                    continue;
                }
            }
            b',' => pending_comma = Some(i),
            b'}' | b']' => {
                if let Some(comma) = pending_comma.take() {
                    bytes[comma] = b' ';
                }
            }
            b if b.is_ascii_whitespace() => {}
            _ => pending_comma = None,
        }
        i += 1;
    }
    // Only ASCII bytes were written, each over a whole comment or a comma, so this is lossless.
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The index just past the string that starts at `start` (a `"`), or the end of the input.
fn skip_string(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

fn blank(bytes: &mut [u8]) {
    for b in bytes {
        if *b != b'\n' && *b != b'\r' {
            *b = b' ';
        }
    }
}
