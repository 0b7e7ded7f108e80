//! What can go wrong at the boundary, as one typed error.

use std::fmt;
use std::io;

mod cap_std_escape;

use cap_std_escape::is_cap_std_escape;

/// What the harness was doing when an I/O error happened: the verb of the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Turning a path into a place inside the workspace.
    Resolve,
    /// Opening or reading a file.
    Read,
    /// Writing a file (atomic or create-only).
    Write,
    /// Appending to a log-like file (audit, transcript).
    Append,
    /// Creating a folder and its parents.
    CreateDir,
    /// Listing a folder.
    List,
    /// Removing a file.
    Remove,
    /// Renaming a file into place.
    Rename,
    /// Taking a lock file.
    Lock,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Resolve => "resolve",
            Self::Read => "read",
            Self::Write => "write",
            Self::Append => "append to",
            Self::CreateDir => "create the folder",
            Self::List => "list",
            Self::Remove => "remove",
            Self::Rename => "rename",
            Self::Lock => "lock",
        })
    }
}

/// What a path turned out to be when a regular file was needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file: the only kind that is read.
    File,
    /// A folder.
    Directory,
    /// A symbolic link, never followed on the last component.
    Symlink,
    /// A named pipe: reading one could block forever.
    Fifo,
    /// A Unix socket.
    Socket,
    /// A character device (`/dev/zero` never ends).
    CharDevice,
    /// A block device.
    BlockDevice,
    /// Anything the platform reports that is none of the above.
    Unknown,
}

impl FileKind {
    pub(crate) fn of(file_type: &cap_std::fs::FileType) -> Self {
        use cap_std::fs::FileTypeExt;
        if file_type.is_file() {
            Self::File
        } else if file_type.is_dir() {
            Self::Directory
        } else if file_type.is_symlink() {
            Self::Symlink
        } else if file_type.is_fifo() {
            Self::Fifo
        } else if file_type.is_socket() {
            Self::Socket
        } else if file_type.is_char_device() {
            Self::CharDevice
        } else if file_type.is_block_device() {
            Self::BlockDevice
        } else {
            Self::Unknown
        }
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::File => "a regular file",
            Self::Directory => "a directory",
            Self::Symlink => "a symbolic link",
            Self::Fifo => "a FIFO (named pipe)",
            Self::Socket => "a socket",
            Self::CharDevice => "a character device",
            Self::BlockDevice => "a block device",
            Self::Unknown => "not a regular file",
        })
    }
}

/// Why the boundary or the file system refused a path. The message names the path as the
/// model wrote it, so a tool failure tells the model what to correct.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// The path leads outside the workspace (`..`, an absolute path elsewhere, or a symlink
    /// that points out).
    #[error("`{path}` resolves outside the workspace")]
    Escape {
        /// The path as requested.
        path: String,
    },
    /// `missing/..`: the kernel refuses to walk back out of a folder that is not there.
    #[error("cannot resolve `{path}`: `{missing}` does not exist, so `..` after it leads nowhere")]
    ThroughMissing {
        /// The path as requested.
        path: String,
        /// Its first part that does not exist.
        missing: String,
    },
    /// A regular file was needed; reading a FIFO or a device could block or never end.
    #[error("`{path}` is {kind}, not a regular file")]
    NotAFile {
        /// The path as requested.
        path: String,
        /// What it is instead.
        kind: FileKind,
    },
    /// The file is larger than the caller is willing to hold in memory.
    #[error("`{path}` is {size} bytes, over the limit of {limit} bytes")]
    TooLarge {
        /// The path as requested.
        path: String,
        /// Its size when it was opened.
        size: u64,
        /// The caller's limit.
        limit: u64,
    },
    /// The operating system refused the operation.
    #[error("cannot {op} `{path}`: {source}")]
    Io {
        /// What was being done.
        op: Op,
        /// The path, workspace-relative.
        path: String,
        /// The operating system's error.
        source: io::Error,
    },
}

impl PathError {
    pub(crate) fn escape(path: &str) -> Self {
        Self::Escape {
            path: path.to_string(),
        }
    }

    pub(crate) fn io(op: Op, path: impl fmt::Display, source: io::Error) -> Self {
        if is_cap_std_escape(&source) {
            return Self::Escape {
                path: path.to_string(),
            };
        }
        Self::Io {
            op,
            path: path.to_string(),
            source,
        }
    }

    /// Whether the error means "there is nothing at that path".
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }
}

impl From<PathError> for agent_protocol::ToolFailure {
    /// As the model sees it: an escape is `path_escape`, anything else a failed execution.
    fn from(err: PathError) -> Self {
        use agent_protocol::{FailureCode, ToolFailure};
        match err {
            PathError::Escape { .. } => ToolFailure::new(FailureCode::PathEscape, err.to_string()),
            other => ToolFailure::execution(other),
        }
    }
}
