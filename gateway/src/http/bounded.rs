//! Reading a file an option names (tokens, an access policy) through a bound: read up to one
//! byte past it rather than trusting a size looked up first, since a FIFO or a growing file has
//! no size to trust.

use std::{io::Read, path::Path};

/// Why [`read`] gave no text.
pub(in crate::http) enum ReadError {
    /// The file could not be opened or read (or is not UTF-8).
    Io(std::io::Error),
    /// The file holds more than the bound.
    TooLarge,
}

/// The whole text of `path`, when it is at most `max` bytes.
pub(in crate::http) fn read(path: &Path, max: u64) -> Result<String, ReadError> {
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(max + 1).read_to_string(&mut text))
        .map_err(ReadError::Io)?;
    match text.len() as u64 > max {
        true => Err(ReadError::TooLarge),
        false => Ok(text),
    }
}
