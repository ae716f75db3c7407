//! The files a config names (`envFile`, `${file:…}`), read whole but bounded.
//!
//! Both hold a few variables or one secret. A path the user mistyped (or a variable that
//! expanded to `/dev/zero`, a log file, a disk image) must cost an error, not the memory of
//! every process that loads the config.

use std::{io::Read, path::Path};

/// The largest file a config may name: far above any real `.env` or secret file.
pub(super) const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The text of `path`, or why it cannot be had: unreadable, not UTF-8, or larger than
/// [`MAX_FILE_BYTES`].
pub(super) fn read_small(path: &Path) -> std::io::Result<String> {
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {} KiB",
            MAX_FILE_BYTES / 1024
        )));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_past_the_bound_is_an_error_and_one_at_it_is_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let at = dir.path().join("at");
        std::fs::write(&at, "x".repeat(MAX_FILE_BYTES as usize)).expect("write");
        assert_eq!(read_small(&at).expect("read").len() as u64, MAX_FILE_BYTES);
        let past = dir.path().join("past");
        std::fs::write(&past, "x".repeat(MAX_FILE_BYTES as usize + 1)).expect("write");
        let err = read_small(&past).expect_err("too large");
        assert_eq!(err.to_string(), "larger than 1024 KiB");
    }

    #[test]
    fn an_endless_device_costs_the_bound_not_the_memory() {
        // Before: `read_to_string("/dev/zero")` grew until the process ran out of memory.
        let err = read_small(Path::new("/dev/zero")).expect_err("endless");
        assert_eq!(err.to_string(), "larger than 1024 KiB");
    }
}
