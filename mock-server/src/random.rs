//! Random identifiers: boot ids, session ids, `confirm` nonces.

use std::hash::{BuildHasher, Hasher};

/// `len` random lowercase hex digits (std's per-instance random hasher keys; no extra crate).
pub(crate) fn random_hex(len: usize) -> String {
    let mut out = String::with_capacity(len + 16);
    while out.len() < len {
        let mut hasher = std::hash::RandomState::new().build_hasher();
        hasher.write_usize(out.len());
        out.push_str(&format!("{:016x}", hasher.finish()));
    }
    out.truncate(len);
    out
}
