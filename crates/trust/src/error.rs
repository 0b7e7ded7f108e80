//! [`StoreError`]: why the trust store could not be read or written. Its text is shown to
//! the person, with what to do about it.

use std::io;
use std::path::PathBuf;

use crate::store::TRUST_FILE_VERSION;

/// Why the trust store could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Neither `XDG_CONFIG_HOME` nor `HOME` names a place for the file.
    #[error("no config directory to keep trust in: set XDG_CONFIG_HOME or HOME")]
    NoConfigDir,
    /// The trust file is a symlink: following it would let whoever placed it choose the file.
    #[error("{} is a symbolic link; refusing to follow it (replace it with a regular file)", path.display())]
    Symlink {
        /// The trust file.
        path: PathBuf,
    },
    /// The trust file is a folder, a FIFO or a device.
    #[error("{} is not a regular file", path.display())]
    NotAFile {
        /// The trust file.
        path: PathBuf,
    },
    /// The trust file is larger than any real one; it is not read.
    #[error("{} is larger than {limit} bytes", path.display())]
    TooLarge {
        /// The trust file.
        path: PathBuf,
        /// The most bytes read.
        limit: u64,
    },
    /// Reading the trust file failed.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The trust file.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// Writing the trust file (or its folder) failed.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file or folder being written.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// The lock file could not be taken.
    #[error("cannot lock {}: {source}", path.display())]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// The trust file is not JSON of the expected shape; nothing in it is trusted.
    #[error("{} is not a valid trust file ({source}); fix or delete it", path.display())]
    Corrupt {
        /// The trust file.
        path: PathBuf,
        /// The parser's error.
        source: serde_json::Error,
    },
    /// The trust file was written by a newer build.
    #[error("{} has version {found}; this build reads versions 1 and {TRUST_FILE_VERSION}", path.display())]
    Version {
        /// The trust file.
        path: PathBuf,
        /// The version it names.
        found: u64,
    },
    /// The workspace path cannot be a key of the JSON file.
    #[error("the workspace path {} is not UTF-8, so trust cannot be recorded for it", path.display())]
    NonUtf8Workspace {
        /// The workspace's path.
        path: PathBuf,
    },
}
