//! `--lock-file`: proof that no two processes of one server are ever alive at once.
//!
//! Each process takes an exclusive, non-blocking `flock` on the file and keeps it until it dies;
//! the kernel releases it on any exit, SIGKILL included. A process that finds the lock taken
//! records itself in `<PATH>.overlap`, which a test then finds non-empty.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

/// Exit code of a process that found another live instance holding the lock.
pub(crate) const OVERLAP_EXIT_CODE: u8 = 99;

/// Result of trying to take the lock.
pub(crate) enum Lock {
    /// We hold it; keep this value alive for the whole process life.
    Held(#[allow(dead_code, reason = "held for its Drop")] Flock<File>),
    /// Another live process holds it; the overlap has been recorded.
    Overlap,
}

/// Takes the lock on `path` (creating the file), or records an overlap.
pub(crate) fn take(path: &Path) -> io::Result<Lock> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => Ok(Lock::Held(lock)),
        Err((_, Errno::EWOULDBLOCK)) => {
            let mut overlap_path = path.as_os_str().to_owned();
            overlap_path.push(".overlap");
            let mut overlap = OpenOptions::new()
                .create(true)
                .append(true)
                .open(overlap_path)?;
            overlap.write_all(format!("overlap {}\n", std::process::id()).as_bytes())?;
            Ok(Lock::Overlap)
        }
        Err((_, errno)) => Err(io::Error::from(errno)),
    }
}
