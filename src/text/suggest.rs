//! The closest of some known words to one a person typed: a config key, a tool name.

/// The word of `known` closest to `wanted` (case-insensitive optimal string alignment), when
/// it is close enough to be a typo: at most 3 edits, and fewer than a third of the longer
/// word's characters. So `arg` finds `args` and `timout` finds `timeout`, but `cmd` does not
/// find `cwd`: one edit in three characters is a different word.
pub fn closest<'k>(wanted: &str, known: impl IntoIterator<Item = &'k str>) -> Option<&'k str> {
    let wanted = wanted.to_lowercase();
    known
        .into_iter()
        .map(|key| {
            let key_lower = key.to_lowercase();
            let longer = wanted.chars().count().max(key_lower.chars().count());
            (strsim::osa_distance(&wanted, &key_lower), longer, key)
        })
        .filter(|(distance, longer, _)| *distance <= 3 && distance * 3 < *longer)
        .min_by_key(|(distance, _, _)| *distance)
        .map(|(_, _, key)| key)
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn a_typo_finds_its_word_and_a_different_word_does_not() {
        assert_eq!(closest("echoo", ["echo", "add", "sleep"]), Some("echo"));
        assert_eq!(closest("timout", ["timeout", "env"]), Some("timeout"));
        assert_eq!(closest("ECHO", ["echo"]), Some("echo"));
        assert_eq!(closest("cmd", ["cwd"]), None);
        assert_eq!(closest("anything", []), None);
    }
}
