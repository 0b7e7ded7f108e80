//! Every raw file operation of the store, in one place: the store decides what to do, these
//! functions touch the disk — all of them through the workspace boundary, so a `.memory/`
//! file or folder that is a symlink to outside (the lock, a record, the archive) is refused,
//! never read or written through. Errors are the boundary's own [`PathError`]: they name the
//! file and the operation, and the store passes them on as they are.

use std::path::Path;

use agent_workspace::{FileKind, Inside, Op, PathError, StateDir, StateLock, Workspace};

/// The most of any one memory file that is read; the store's own bounds are far smaller, so
/// a file over them still gets the store's exact "too large" message.
const READ_LIMIT: u64 = 1024 * 1024;

/// What a directory entry is, without following a symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryKind {
    File,
    Dir,
    /// A symlink or anything else that is neither a plain file nor a folder.
    Other,
}

/// The store's view of the disk: absolute paths under the workspace, checked on every use.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Disk<'a>(pub &'a Workspace);

impl Disk<'_> {
    fn inside(&self, path: &Path) -> Result<Inside, PathError> {
        let text = path.to_str().ok_or_else(|| PathError::Io {
            op: Op::Resolve,
            path: path.display().to_string(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a path that is not UTF-8",
            ),
        })?;
        self.0.inside(text)
    }

    pub(crate) fn read_to_string(&self, path: &Path) -> Result<String, PathError> {
        self.0.read_to_string(&self.inside(path)?, READ_LIMIT)
    }

    /// Writes and fsyncs a new file; fails if `path` exists, so a write never replaces a file.
    pub(crate) fn write_synced(&self, path: &Path, text: &str) -> Result<(), PathError> {
        self.0.write_new(&self.inside(path)?, text.as_bytes())
    }

    pub(crate) fn rename(&self, from: &Path, to: &Path) -> Result<(), PathError> {
        self.0.rename(&self.inside(from)?, &self.inside(to)?)
    }

    pub(crate) fn remove(&self, path: &Path) -> Result<(), PathError> {
        self.0.remove_file(&self.inside(path)?)
    }

    /// A second name for `from` at `to` (fails if `to` exists): archiving keeps the original in
    /// place until the commit, so a failure before it leaves the old files untouched.
    pub(crate) fn link(&self, from: &Path, to: &Path) -> Result<(), PathError> {
        self.0.hard_link(&self.inside(from)?, &self.inside(to)?)
    }

    pub(crate) fn create_dir_all(&self, path: &Path) -> Result<(), PathError> {
        self.0.create_dir_all(&self.inside(path)?)
    }

    pub(crate) fn is_dir(&self, path: &Path) -> bool {
        self.inside(path)
            .ok()
            .and_then(|p| self.0.kind(&p).ok().flatten())
            == Some(FileKind::Directory)
    }

    pub(crate) fn exists(&self, path: &Path) -> bool {
        self.inside(path)
            .ok()
            .and_then(|p| self.0.kind(&p).ok().flatten())
            .is_some()
    }

    /// Makes renames and links in `dir` durable.
    pub(crate) fn sync_dir(&self, dir: &Path) -> Result<(), PathError> {
        self.0.sync_folder(&self.inside(dir)?)
    }

    /// The exclusive lock of the state folder `state` (its `.lock`, created if missing, never
    /// truncated; a symlink there is refused), held until the guard drops: the workspace's one
    /// lock API, as every store takes it.
    pub(crate) fn lock<'s>(&self, state: &'s StateDir) -> Result<StateLock<'s>, PathError> {
        state.lock()
    }

    /// The names in `dir` (non-UTF-8 names are skipped: the store never makes them).
    pub(crate) fn list_dir(&self, dir: &Path) -> Result<Vec<(String, EntryKind)>, PathError> {
        let entries = self.0.list_dir(&self.inside(dir)?)?;
        Ok(entries
            .into_iter()
            .map(|e| {
                let kind = match e.kind {
                    FileKind::File => EntryKind::File,
                    FileKind::Directory => EntryKind::Dir,
                    _ => EntryKind::Other,
                };
                (e.name, kind)
            })
            .collect())
    }

    /// Whether two files hold the same bytes; files over `limit` bytes count as different.
    pub(crate) fn same_content(&self, a: &Path, b: &Path, limit: u64) -> Result<bool, PathError> {
        let read = |path: &Path| -> Result<Option<Vec<u8>>, PathError> {
            match self.0.read_bytes(&self.inside(path)?, limit) {
                Ok(bytes) => Ok(Some(bytes)),
                Err(PathError::TooLarge { .. }) => Ok(None),
                Err(err) => Err(err),
            }
        };
        match (read(a)?, read(b)?) {
            (Some(a), Some(b)) => Ok(a == b),
            _ => Ok(false),
        }
    }
}

/// Whether the boundary's error is the file system's "already exists".
pub(crate) fn already_exists(err: &PathError) -> bool {
    matches!(err, PathError::Io { source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists)
}
