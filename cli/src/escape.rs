//! Control characters shown instead of obeyed: [`for_terminal`], [`for_terminal_line`].

use std::{borrow::Cow, fmt::Write};

/// `text` safe to print on a terminal: every control character that could move the cursor,
/// recolour, retitle or clear the screen, write the clipboard (OSC 52) or reorder what is shown
/// is written as a visible `\u{…}` escape. Kept as they are: `\n` and `\t`.
///
/// Escaped: C0 controls (`U+0000`–`U+001F`: ESC, BEL, CR, backspace …), DEL (`U+007F`), C1
/// controls (`U+0080`–`U+009F`, among them the one-byte CSI `U+009B`), and the bidirectional
/// overrides and isolates (`U+202A`–`U+202E`, `U+2066`–`U+2069`).
///
pub(crate) fn for_terminal(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

/// Like [`for_terminal`], for text that must stay on one line (a table row, a name): `\n` is
/// escaped too. `\t` is kept.
pub(crate) fn for_terminal_line(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// Whether a terminal may obey `c` rather than show it: what [`for_terminal_line`] escapes (C0
/// controls but `\t`, DEL, C1 controls, bidi overrides and isolates). For writers of other
/// formats (a JSON string: serde escapes C0 controls, not DEL, C1 or bidi).
pub(crate) fn is_terminal_control(c: char) -> bool {
    is_unsafe(c, false)
}

fn escape(text: &str, keep_newlines: bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| is_unsafe(c, keep_newlines);
    let Some(first) = text.find(unsafe_char) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        if unsafe_char(c) {
            // Writing to a String cannot fail.
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn is_unsafe(c: char, keep_newlines: bool) -> bool {
    match c {
        '\t' => false,
        '\n' => !keep_newlines,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_clear_screen_clipboard_and_csi_are_shown_not_obeyed() {
        let hostile = "a\u{1b}]0;title\u{7}b\u{1b}[2Jc\u{1b}]52;c;aGk=\u{7}d\u{9b}31me\r\u{8}f";
        let safe = for_terminal(hostile);
        assert_eq!(
            safe,
            "a\\u{1b}]0;title\\u{7}b\\u{1b}[2Jc\\u{1b}]52;c;aGk=\\u{7}d\\u{9b}31me\\u{d}\\u{8}f"
        );
        assert!(!safe.chars().any(|c| c.is_control()));
    }

    #[test]
    fn newlines_and_tabs_stay_unless_the_text_must_fit_one_line() {
        assert_eq!(for_terminal("a\n\tb"), "a\n\tb");
        assert_eq!(for_terminal_line("a\n\tb"), "a\\u{a}\tb");
    }

    #[test]
    fn bidi_overrides_and_del_are_escaped_and_plain_text_is_borrowed() {
        assert_eq!(
            for_terminal("x\u{202e}y\u{2066}\u{7f}"),
            "x\\u{202e}y\\u{2066}\\u{7f}"
        );
        let plain = "déjà vu — 漢字 ok";
        assert!(matches!(for_terminal(plain), Cow::Borrowed(p) if p == plain));
    }

    #[test]
    fn every_control_character_is_escaped_on_one_line() {
        for code in (0u32..0x20).chain(0x7f..0xa0) {
            let c = char::from_u32(code).unwrap_or('?');
            let text = format!("<{c}>");
            let safe = for_terminal_line(&text);
            let kept = |c: char| c.is_control() && c != '\t';
            assert!(!safe.chars().any(kept), "U+{code:04X}: {safe:?}");
        }
    }
}
