//! Public tool names: `mcp__<server>__<tool>`, within `[A-Za-z0-9_-]{1,64}`.
//!
//! # Invariants
//!
//! 1. The name is a pure function of `(server, tool)`: the same identity always gets the same
//!    name, on every host, across reconnects and restarts.
//! 2. Distinct identities never share a name. A name is *lossless* only when it can be parsed
//!    back unambiguously: every character was allowed, nothing was cut, the server part has no
//!    `__` and does not end in `_` (so the first `__` after the prefix is the separator), and the
//!    tool part does not itself end like a hash suffix, and neither does a name of the full 64
//!    characters (a hashed name cut to fit can leave the separator right before its suffix:
//!    `mcp__<45 chars>__<hash>`). Lossless names are therefore injective. Every other name ends
//!    in `_` + 12 hex digits of SHA-256 over `server \0 tool`, which no lossless name does; two
//!    hashed names collide only if 48 bits of SHA-256 do. The registry still refuses a publish
//!    that would make two identities share a name (defence in depth).

use sha2::{Digest, Sha256};

/// The longest public name.
pub const MAX_PUBLIC_NAME: usize = 64;
const PREFIX: &str = "mcp__";
const SEPARATOR: &str = "__";
const HASH_HEX: usize = 12;

/// The public name of tool `tool` of server `server`.
///
/// ```
/// use mcp_resilient::registry::public_name;
/// assert_eq!(public_name("weather", "get_forecast"), "mcp__weather__get_forecast");
/// let odd = public_name("weather", "get forecast!");
/// assert!(odd.starts_with("mcp__weather__get_forecast__") && odd.len() <= 64);
/// ```
pub fn public_name(server: &str, tool: &str) -> String {
    let mut lossy = server.contains(SEPARATOR) || server.ends_with('_') || looks_hashed(tool);
    let mut name = String::with_capacity(PREFIX.len() + server.len() + tool.len() + 2);
    name.push_str(PREFIX);
    lossy |= push_normalized(&mut name, server);
    name.push_str(SEPARATOR);
    lossy |= push_normalized(&mut name, tool);
    // A cut hashed name is `name[..51] + "_" + hash`: when `name[50]` is the separator's first
    // `_`, it reads as server + `__` + a 12-hex tool, a lossless name of exactly 64 characters.
    lossy |= name.len() == MAX_PUBLIC_NAME && looks_hashed(&name);
    if !lossy && name.len() <= MAX_PUBLIC_NAME {
        return name;
    }
    let suffix = hash_suffix(server, tool);
    name.truncate(MAX_PUBLIC_NAME - suffix.len() - 1);
    name.push('_');
    name.push_str(&suffix);
    name
}

/// Appends `part` with every character outside `[A-Za-z0-9_-]` replaced by `_`; true if any was.
fn push_normalized(out: &mut String, part: &str) -> bool {
    let mut replaced = part.is_empty();
    for c in part.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else {
            out.push('_');
            replaced = true;
        }
    }
    replaced
}

/// True when `tool` ends like a hash suffix (`_` + 12 lowercase hex), which lossless names must not.
fn looks_hashed(tool: &str) -> bool {
    let bytes = tool.as_bytes();
    bytes.len() > HASH_HEX
        && bytes[bytes.len() - HASH_HEX - 1] == b'_'
        && bytes[bytes.len() - HASH_HEX..]
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
}

fn hash_suffix(server: &str, tool: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(server.as_bytes());
    hasher.update([0u8]);
    hasher.update(tool.as_bytes());
    let digest = hasher.finalize();
    digest[..HASH_HEX / 2]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        (1..=MAX_PUBLIC_NAME).contains(&name.len())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    #[test]
    fn plain_names_are_kept_verbatim() {
        assert_eq!(public_name("fs", "read_file"), "mcp__fs__read_file");
        assert_eq!(public_name("my-srv", "do-it"), "mcp__my-srv__do-it");
    }

    #[test]
    fn invalid_characters_are_replaced_and_hashed() {
        let name = public_name("fs", "read.file");
        assert!(name.starts_with("mcp__fs__read_file_"), "{name}");
        assert_eq!(name.len(), "mcp__fs__read_file_".len() + HASH_HEX);
        assert!(valid(&name));
    }

    #[test]
    fn names_that_normalize_alike_stay_distinct() {
        let a = public_name("fs", "read.file");
        let b = public_name("fs", "read file");
        let c = public_name("fs", "read_file");
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_ne!(b, c);
    }

    #[test]
    fn separator_ambiguity_is_resolved_by_hashing() {
        // Without the rule both would be `mcp__a__b__c`.
        let a = public_name("a", "b__c");
        let b = public_name("a__b", "c");
        assert_ne!(a, b);
        assert_eq!(a, "mcp__a__b__c");
        assert!(b.starts_with("mcp__a__b__c_"));
        // A server ending in '_' against a tool starting with '_'.
        assert_ne!(public_name("a_", "b"), public_name("a", "_b"));
    }

    #[test]
    fn a_tool_named_like_a_hashed_name_cannot_shadow_it() {
        let hashed = public_name("s", "x.y");
        let tool_part = &hashed["mcp__s__".len()..];
        let forged = public_name("s", tool_part);
        assert_ne!(forged, hashed);
    }

    #[test]
    fn a_cut_hashed_name_cannot_be_taken_by_a_tool_named_after_its_hash() {
        // Found by the `names` fuzz target: a 45-character server's hashed name is cut to
        // `mcp__<server>_` + `_` + hash, which was also the lossless name of the tool `<hash>`.
        let server = "s".repeat(45);
        let hashed = public_name(&server, "x.y");
        let hash = &hashed[hashed.len() - HASH_HEX..];
        assert_eq!(hashed, format!("mcp__{server}__{hash}"));
        let forged = public_name(&server, hash);
        assert_ne!(forged, hashed);
        assert!(valid(&forged) && forged.len() == MAX_PUBLIC_NAME);
        // One character shorter or a longer tool is still kept verbatim.
        assert_eq!(
            public_name(&server[1..], hash),
            format!("mcp__{}__{hash}", &server[1..])
        );
    }

    #[test]
    fn long_names_are_cut_to_64_with_a_hash() {
        let tool = "t".repeat(100);
        let a = public_name("server", &tool);
        let b = public_name("server", &format!("{tool}x"));
        assert_eq!(a.len(), MAX_PUBLIC_NAME);
        assert!(valid(&a) && valid(&b));
        assert_ne!(a, b);
    }

    #[test]
    fn unicode_and_empty_names_are_valid_and_distinct() {
        let a = public_name("s", "résumé");
        let b = public_name("s", "r_sum_");
        let c = public_name("s", "");
        assert!(valid(&a) && valid(&c));
        assert_ne!(a, b);
        assert_ne!(c, public_name("s", "_"));
    }

    #[test]
    fn names_are_deterministic() {
        assert_eq!(public_name("s", "a b"), public_name("s", "a b"));
        // Pinned value: changing the hash input would rename every tool on every host.
        assert_eq!(
            public_name("s", "a b"),
            format!("mcp__s__a_b_{}", hash_suffix("s", "a b"))
        );
        assert_eq!(hash_suffix("s", "a b").len(), HASH_HEX);
    }
}
