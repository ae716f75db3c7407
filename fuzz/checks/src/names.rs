//! Public-name normalization ([`mcp_resilient::registry::public_name`]): the grammar, determinism, and
//! the injectivity the names module promises.

use mcp_resilient::registry::{MAX_PUBLIC_NAME, public_name as name_of};

/// `data` is `server \0 tool`, optionally followed by `\0 server \0 tool` for a second identity
/// (invalid UTF-8 is replaced). For each identity: the name matches `mcp__[A-Za-z0-9_-]*` within
/// 64 characters, is the same when computed twice, is `mcp__<server>__<tool>` verbatim when the
/// module says the identity is lossless, and is not the name of another identity read back from
/// it. Two different identities get two different names.
pub fn public_name(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(4, '\0');
    let first = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    check(first.0, first.1);
    if let (Some(server), Some(tool)) = (parts.next(), parts.next()) {
        check(server, tool);
        if first != (server, tool) {
            assert_ne!(
                name_of(first.0, first.1),
                name_of(server, tool),
                "{first:?} and {:?} share a name",
                (server, tool)
            );
        }
    }
}

fn check(server: &str, tool: &str) {
    let name = name_of(server, tool);
    assert!(
        (1..=MAX_PUBLIC_NAME).contains(&name.len())
            && name.starts_with("mcp__")
            && name.bytes().all(|b| allowed(b as char)),
        "{name:?} breaks the grammar"
    );
    assert_eq!(name, name_of(server, tool), "not deterministic");
    if lossless(server, tool) {
        assert_eq!(
            name,
            format!("mcp__{server}__{tool}"),
            "a lossless name was changed"
        );
    }
    // The identity this name reads as, if it is the one that gets this name, must be ours:
    // otherwise two identities share it.
    if let Some((read_server, read_tool)) = read_back(&name)
        && name_of(read_server, read_tool) == name
    {
        assert_eq!(
            (read_server, read_tool),
            (server, tool),
            "two identities share {name}"
        );
    }
}

fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Lossless as the names module defines it (its invariant 2).
fn lossless(server: &str, tool: &str) -> bool {
    let name_len = "mcp__".len() + server.len() + "__".len() + tool.len();
    !server.is_empty()
        && !tool.is_empty()
        && server.chars().chain(tool.chars()).all(allowed)
        && !server.contains("__")
        && !server.ends_with('_')
        && !ends_like_hash(tool)
        && name_len <= MAX_PUBLIC_NAME
        && !(name_len == MAX_PUBLIC_NAME && ends_like_hash(&format!("__{tool}")))
}

/// `_` and 12 lowercase hex digits at the end, the suffix of a hashed name.
fn ends_like_hash(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() > 12
        && bytes[bytes.len() - 13] == b'_'
        && bytes[bytes.len() - 12..]
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
}

/// The identity a name reads as: server up to the first `__` after the prefix, tool after it.
fn read_back(name: &str) -> Option<(&str, &str)> {
    name.strip_prefix("mcp__")?.split_once("__")
}
