//! The one lock API of the workspace: an exclusive advisory lock on a file inside it
//! ([`Workspace::lock_exclusive`]), held by a [`FileLock`] guard, and the change counter a
//! lock file carries for stores that cache what they read.

use std::io;
use std::os::unix::fs::FileExt;

use cap_std::fs::OpenOptions;

use crate::boundary::{Inside, Workspace};
use crate::error::{Op, PathError};
use crate::fs::RegularFile;

/// An exclusive advisory lock taken by [`Workspace::lock_exclusive`]; dropping it unlocks.
/// The stores that write several processes' shared files (memory, tasks) hold one for each
/// read-check-write, so no write is lost and no id is handed out twice.
#[derive(Debug)]
pub struct FileLock {
    file: std::fs::File,
}

impl FileLock {
    /// The change counter kept in the lock file's first eight bytes (0 for an empty file).
    /// Stores that cache what they read bump it with every change they make under the lock,
    /// so a cache in another process knows its view is old.
    pub fn generation(&self) -> io::Result<u64> {
        read_generation(&self.file)
    }

    /// Adds one to the change counter (wrapping: it is compared for equality only). Not
    /// flushed to disk: it only tells running processes that their caches are old, and a
    /// crash ends every cache with the process.
    pub fn bump_generation(&self) -> io::Result<u64> {
        let next = read_generation(&self.file)?.wrapping_add(1);
        self.file.write_all_at(&next.to_le_bytes(), 0)?;
        Ok(next)
    }
}

/// The counter at the start of a lock file; 0 when fewer than eight bytes are there.
pub(crate) fn read_generation(file: &std::fs::File) -> io::Result<u64> {
    let mut bytes = [0u8; 8];
    let mut filled = 0;
    while filled < bytes.len() {
        let n = file.read_at(&mut bytes[filled..], filled as u64)?;
        if n == 0 {
            return Ok(0);
        }
        filled += n;
    }
    Ok(u64::from_le_bytes(bytes))
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Closing the file would release it too; unlocking first says so explicitly.
        let _ = self.file.unlock();
    }
}

impl RegularFile {
    /// The change counter of a lock file (see [`FileLock::generation`]), read without taking
    /// the lock: a torn read only makes a cache look old, which costs a re-read.
    pub fn generation(&self) -> io::Result<u64> {
        read_generation(&self.file)
    }
}

impl Workspace {
    /// Opens (creating) a file to take an advisory lock on.
    fn open_lock(&self, path: &Inside) -> Result<std::fs::File, PathError> {
        self.open_file(
            path,
            OpenOptions::new().read(true).write(true).create(true),
            Op::Lock,
        )
    }

    /// Takes an exclusive advisory lock on the file at `path` (created if missing, never
    /// truncated; a symlink or anything but a regular file is refused), waiting for whoever
    /// holds it. The lock is per open file, so two handles in one process exclude each other
    /// as two processes do. Released when the guard drops.
    pub fn lock_exclusive(&self, path: &Inside) -> Result<FileLock, PathError> {
        let file = self.open_lock(path)?;
        file.lock()
            .map_err(|source| PathError::io(Op::Lock, path, source))?;
        Ok(FileLock { file })
    }
}
