//! What can go wrong at the boundary, as one typed error.

use std::fmt;
use std::io;

mod cap_std_escape;

use cap_std_escape::is_cap_std_escape;

/// What the harness was doing when an I/O error happened: the verb of the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Resolve,
    Read,
    Write,
    Append,
    CreateDir,
    List,
    Remove,
    Rename,
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
    File,
    Directory,
    Symlink,
    Fifo,
    Socket,
    CharDevice,
    BlockDevice,
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

#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// The path leads outside the workspace (`..`, an absolute path elsewhere, or a symlink
    /// that points out).
    #[error("`{path}` resolves outside the workspace")]
    Escape { path: String },
    /// `missing/..`: the kernel refuses to walk back out of a folder that is not there.
    #[error("cannot resolve `{path}`: `{missing}` does not exist, so `..` after it leads nowhere")]
    ThroughMissing { path: String, missing: String },
    /// A regular file was needed; reading a FIFO or a device could block or never end.
    #[error("`{path}` is {kind}, not a regular file")]
    NotAFile { path: String, kind: FileKind },
    /// The file is larger than the caller is willing to hold in memory.
    #[error("`{path}` is {size} bytes, over the limit of {limit} bytes")]
    TooLarge { path: String, size: u64, limit: u64 },
    #[error("cannot {op} `{path}`: {source}")]
    Io {
        op: Op,
        path: String,
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
