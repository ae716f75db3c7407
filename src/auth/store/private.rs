//! Token files only their owner can reach: a directory or file that group or others can access
//! is made private again (with a warning), and a symbolic link where a token file or the lock
//! file belongs is refused.
//!
//! Why repair rather than refuse a loose mode: the files are ours (`login` wrote them), and a
//! loose mode comes from a umask, a `cp -r` or a restored backup. Refusing would leave every
//! server `failed` for something we can fix ourselves, and the fix is the only thing the user
//! could do. But the tokens may already have been read, so the warning says so and how to
//! replace them. A file we cannot make private (another user's) is refused: its tokens could
//! be anyone's.
//!
//! Why links are refused: in a directory others could write to, a planted link would make us
//! read someone else's tokens, or create or truncate a file of their choosing when the lock is
//! taken. The token directory itself may be a link (dotfiles often are); its target is checked.

use std::{
    fs::{File, Metadata, OpenOptions, Permissions},
    io,
    os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt},
    path::Path,
};

use nix::fcntl::OFlag;

/// Mode bits that let group or others in.
const GROUP_OR_OTHERS: u32 = 0o077;

/// The mode of the token directory.
pub(super) const DIR_MODE: u32 = 0o700;
/// The mode of a token file and of the lock file.
pub(super) const FILE_MODE: u32 = 0o600;

/// `options` that never follow a symbolic link at the last component and never leak the
/// descriptor into a child (`O_NOFOLLOW | O_CLOEXEC`).
pub(super) fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
    options.custom_flags((OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC).bits())
}

/// An open error in words: a symbolic link (`ELOOP` under `O_NOFOLLOW`) is named as such.
pub(super) fn open_error(error: &io::Error) -> String {
    if error.raw_os_error() == Some(nix::errno::Errno::ELOOP as i32) {
        return "is a symbolic link, which is never followed; remove it".to_owned();
    }
    error.to_string()
}

/// Whether `meta` (of a token file, not followed) can be trusted as it is: a regular file that
/// group and others cannot access.
pub(super) fn is_private_file(meta: &Metadata) -> bool {
    meta.file_type().is_file() && meta.mode() & GROUP_OR_OTHERS == 0
}

/// Checks the token directory `dir` (following a link to it), and makes it [`DIR_MODE`] if group
/// or others can access it.
pub(super) fn make_dir_private(dir: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(dir).map_err(|e| e.to_string())?;
    if !meta.is_dir() {
        return Err("is not a directory".to_owned());
    }
    let mode = meta.mode() & 0o777;
    if mode & GROUP_OR_OTHERS == 0 {
        return Ok(());
    }
    std::fs::set_permissions(dir, Permissions::from_mode(DIR_MODE))
        .map_err(|e| refused("directory", mode, &e))?;
    warn_repaired(dir, "directory", mode, DIR_MODE);
    Ok(())
}

/// Checks an open token or lock file: a regular file, made [`FILE_MODE`] if group or others can
/// access it. Returns its metadata (after the repair).
pub(super) fn make_file_private(file: &File, path: &Path) -> Result<Metadata, String> {
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.file_type().is_file() {
        return Err("is not a regular file".to_owned());
    }
    let mode = meta.mode() & 0o777;
    if mode & GROUP_OR_OTHERS == 0 {
        return Ok(meta);
    }
    file.set_permissions(Permissions::from_mode(FILE_MODE))
        .map_err(|e| refused("file", mode, &e))?;
    warn_repaired(path, "file", mode, FILE_MODE);
    file.metadata().map_err(|e| e.to_string())
}

fn refused(what: &str, mode: u32, error: &io::Error) -> String {
    format!(
        "the {what} has mode {mode:03o}, open to other users, and cannot be made private ({error}); refused"
    )
}

fn warn_repaired(path: &Path, what: &str, was: u32, now: u32) {
    tracing::warn!(
        path = %path.display(),
        "token {what} had mode {was:03o}, open to other users; made it {now:03o}. Its tokens may \
         have been read: `mcp-resilient logout` and log in again to replace them"
    );
}
