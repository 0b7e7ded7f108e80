//! The helpers for files the CLI keeps outside any workspace (this store, the prompt history,
//! the session seals): no final symlink followed, no FIFO blocked on, bounded, private.

use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::error::StoreError;

/// Reads at most `limit` bytes of a regular file without following a final symlink and
/// without blocking on a FIFO. A missing file is `None`. For the files the CLI keeps outside
/// any workspace (this store, the prompt history).
pub fn read_bounded(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, StoreError> {
    let read_error = |source| StoreError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path);
    let file = match file {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) if err.raw_os_error() == Some(libc::ELOOP) => {
            return Err(StoreError::Symlink {
                path: path.to_path_buf(),
            });
        }
        Err(err) => return Err(read_error(err)),
    };
    if !file.metadata().map_err(read_error)?.is_file() {
        return Err(StoreError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > limit {
        return Err(StoreError::TooLarge {
            path: path.to_path_buf(),
            limit,
        });
    }
    Ok(Some(bytes))
}

/// Opens (creating it 0600 if missing, never truncating) the lock file at `path` that a
/// store outside any workspace holds `flock` on, without following a final symlink and closed
/// on exec, so a command the agent starts never inherits the lock.
pub fn open_private_lock(path: &Path) -> io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}
