//! The targets' promises checked on stable, over a seeded generator, where that is cheaper than
//! fuzzing: every run of `cargo test` walks the same identities.

use std::collections::HashMap;

use rand::{Rng, SeedableRng, rngs::StdRng};

use mcp_resilient::registry::public_name;

/// Characters that reach every rule of the names module: allowed ones, the separator's `_`,
/// hex digits (the hash suffix), and ones that must be replaced.
const ALPHABET: &[char] = &[
    'a', 'b', 'f', 'x', 'A', '0', '7', '9', '_', '_', '_', '-', '.', ' ', 'é', '/',
];

fn text(rng: &mut StdRng, max_len: usize) -> String {
    let len = rng.random_range(0..=max_len);
    (0..len)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())])
        .collect()
}

/// A `server`/`tool` pair, biased to the lengths around the 64-character cut.
fn identity(rng: &mut StdRng) -> (String, String) {
    let server = if rng.random_bool(0.3) {
        text(rng, 70)
    } else {
        text(rng, 8)
    };
    (server, text(rng, 70))
}

#[test]
fn names_are_valid_deterministic_and_read_back_only_to_their_own_identity() {
    let mut rng = StdRng::seed_from_u64(15);
    for _ in 0..20_000 {
        let (server, tool) = identity(&mut rng);
        super::public_name(format!("{server}\0{tool}").as_bytes());
    }
}

#[test]
fn distinct_identities_never_share_a_name() {
    let mut rng = StdRng::seed_from_u64(1511);
    let mut owners: HashMap<String, (String, String)> = HashMap::new();
    for _ in 0..20_000 {
        let identity = identity(&mut rng);
        let name = public_name(&identity.0, &identity.1);
        if let Some(owner) = owners.get(&name) {
            assert_eq!(owner, &identity, "two identities share {name}");
        }
        owners.insert(name, identity);
    }
}

#[test]
fn a_name_made_of_another_names_hash_is_not_that_name() {
    // The hashed name of (server, tool) read back as an identity is (server', hash...): that
    // identity, named in turn, must get a name of its own. Walks every server length around
    // the cut, where the hash suffix can follow the separator.
    let mut rng = StdRng::seed_from_u64(7);
    for len in 30..=64 {
        for _ in 0..50 {
            let server: String = (0..len)
                .map(|_| ['a', 'b', '-', '0'][rng.random_range(0..4)])
                .collect();
            let tool = text(&mut rng, 20);
            let name = public_name(&server, &tool);
            super::public_name(format!("{server}\0{tool}").as_bytes());
            if let Some((read_server, read_tool)) = name["mcp__".len()..].split_once("__") {
                super::public_name(
                    format!("{read_server}\0{read_tool}\0{server}\0{tool}").as_bytes(),
                );
            }
        }
    }
}
