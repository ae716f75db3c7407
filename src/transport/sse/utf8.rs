//! Incremental UTF-8 validation of a byte stream that arrives in arbitrary chunks.
//!
//! # Invariants
//!
//! 1. Each byte is validated once, except the at most 3 bytes of a character split across
//!    chunks, which are held here until its last byte arrives and then validated together.
//! 2. The first byte that cannot be part of UTF-8 is reported by the chunk that brings it, with
//!    its offset in the stream: a bad byte never waits for more input.

/// The valid part of one chunk, in stream order: a character completed from the previous
/// chunk (`head`), then whole characters (`body`). `invalid` is the stream offset where UTF-8
/// broke right after them, if it did.
pub(super) struct Valid<'a> {
    head: ([u8; 4], usize),
    pub(super) body: &'a [u8],
    pub(super) invalid: Option<u64>,
}

impl Valid<'_> {
    /// The character completed from the previous chunk (often empty).
    pub(super) fn head(&self) -> &[u8] {
        &self.head.0[..self.head.1]
    }
}

/// The validator's state between chunks.
#[derive(Debug, Default)]
pub(super) struct Utf8Check {
    /// Stream offset of the next byte pushed.
    offset: u64,
    /// The first bytes of a character whose last byte has not arrived yet.
    carry: [u8; 4],
    carried: usize,
}

impl Utf8Check {
    /// Validates the next chunk.
    pub(super) fn push<'a>(&mut self, chunk: &'a [u8]) -> Valid<'a> {
        let base = self.offset;
        self.offset += chunk.len() as u64;
        let mut valid = Valid {
            head: ([0; 4], 0),
            body: &[],
            invalid: None,
        };
        let mut start = 0;
        if self.carried > 0 {
            let carry_offset = base - self.carried as u64;
            let need = width(self.carry[0]).saturating_sub(self.carried);
            let take = need.min(chunk.len());
            let end = self.carried + take;
            if need == 0 || end > self.carry.len() {
                valid.invalid = Some(carry_offset);
                return valid;
            }
            self.carry[self.carried..end].copy_from_slice(&chunk[..take]);
            self.carried = end;
            match std::str::from_utf8(&self.carry[..end]) {
                Ok(_) => {
                    valid.head = (self.carry, end);
                    self.carried = 0;
                    start = take;
                }
                // Still incomplete: the chunk was shorter than the character's rest.
                Err(e) if e.error_len().is_none() => return valid,
                Err(_) => {
                    valid.invalid = Some(carry_offset);
                    return valid;
                }
            }
        }
        let rest = &chunk[start..];
        match std::str::from_utf8(rest) {
            Ok(_) => valid.body = rest,
            Err(e) => {
                let good = e.valid_up_to();
                valid.body = &rest[..good];
                let tail = &rest[good..];
                match e.error_len() {
                    // At most 3 bytes: a longer valid prefix would be a whole character.
                    None if tail.len() < self.carry.len() => {
                        self.carry[..tail.len()].copy_from_slice(tail);
                        self.carried = tail.len();
                    }
                    _ => valid.invalid = Some(base + (start + good) as u64),
                }
            }
        }
        valid
    }

    /// At the end of the stream: where a character left incomplete began, if one was.
    pub(super) fn finish(&self) -> Option<u64> {
        (self.carried > 0).then(|| self.offset - self.carried as u64)
    }
}

/// The length of the character that `first` begins (a valid leading byte of 2 to 4 bytes;
/// anything else gives 0 or 1, which the caller treats as invalid).
fn width(first: u8) -> usize {
    match first {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        0x00..=0x7F => 1,
        _ => 0,
    }
}
