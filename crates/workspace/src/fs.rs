//! File operations on checked paths. Everything opens relative to the workspace's directory
//! handle with `O_NOFOLLOW` on the last component, so neither a model's path nor one of the
//! harness's own files (artifacts, transcripts, audit, locks, memory) can be sent outside by a
//! symlink, and reads never block on a FIFO or hold more than the caller allows.

use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{OpenOptions, OpenOptionsExt};

use crate::boundary::{Inside, Workspace};
use crate::error::{FileKind, Op, PathError};

/// A regular file opened for reading, with its length when it was opened.
#[derive(Debug)]
pub struct RegularFile {
    pub(crate) file: std::fs::File,
    len: u64,
}

impl RegularFile {
    /// The length in bytes when the file was opened (a file that grows later is still read only
    /// up to the caller's limit).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// The file was empty when it was opened.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Up to `max` bytes from `offset` (fewer at the end of the file).
    pub fn read_at(&self, offset: u64, max: usize) -> io::Result<Vec<u8>> {
        let mut buf = vec![0u8; max];
        let mut filled = 0;
        while filled < max {
            let n = self
                .file
                .read_at(&mut buf[filled..], offset + filled as u64)?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        buf.truncate(filled);
        Ok(buf)
    }
}

impl Read for RegularFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.file.read(buf)
    }
}

/// One entry of a folder listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The entry's file name (not a path).
    pub name: String,
    /// What the entry is, as listed (a symlink is reported as a symlink, not followed).
    pub kind: FileKind,
    /// The inode number: a file replaced by a rename has a new one, so two listings with
    /// equal entries name the same files (a store's cache is checked against it).
    pub ino: u64,
}

/// When and as what a path last changed, without following a final symlink: for a folder,
/// its modification time moves with every name created, removed or renamed in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// What is there (a folder, a file, a symlink, …).
    pub kind: FileKind,
    /// The inode number: something renamed into the path's place has a new one.
    pub ino: u64,
    /// The modification time (the file system's clock, coarse: changes within one tick of it
    /// can share a value).
    pub modified: std::time::SystemTime,
}

/// Whether [`Workspace::write_atomic`] may replace a file that exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Replace a file that is there (a state record rewritten).
    Replace,
    /// Fail when the name is taken: a create-only write (a new record, a new artifact) that two
    /// writers cannot both win.
    Refuse,
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The prefix of the temporary files [`Workspace::write_atomic`] leaves behind if the process
/// dies between writing and renaming; [`Workspace::remove_leftovers`] removes them.
pub const TEMP_PREFIX: &str = ".tmp-agent-";

fn read_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
    options
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
    options
}

impl Workspace {
    /// The entry at `path` as a listing of its folder would show it (name, kind, inode),
    /// without following a final symlink; `None` when nothing is there.
    pub fn entry(&self, path: &Inside) -> Result<Option<Entry>, PathError> {
        use cap_std::fs::MetadataExt;
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            return Ok(None);
        };
        match self.dir().symlink_metadata(path.cap()) {
            Ok(meta) => Ok(Some(Entry {
                name: name.to_string(),
                kind: FileKind::of(&meta.file_type()),
                ino: meta.ino(),
            })),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(PathError::io(Op::Resolve, path, source)),
        }
    }

    /// The [`Stamp`] of `path` (not following a final symlink); `None` when nothing is there.
    pub fn stamp(&self, path: &Inside) -> Result<Option<Stamp>, PathError> {
        use cap_std::fs::MetadataExt;
        let err = |source| PathError::io(Op::Resolve, path, source);
        match self.dir().symlink_metadata(path.cap()) {
            Ok(meta) => Ok(Some(Stamp {
                kind: FileKind::of(&meta.file_type()),
                ino: meta.ino(),
                modified: meta.modified().map_err(err)?.into_std(),
            })),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(err(source)),
        }
    }

    /// What is at `path`, without following a final symlink; `None` when nothing is.
    pub fn kind(&self, path: &Inside) -> Result<Option<FileKind>, PathError> {
        match self.dir().symlink_metadata(path.cap()) {
            Ok(meta) => Ok(Some(FileKind::of(&meta.file_type()))),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(PathError::io(Op::Resolve, path, source)),
        }
    }

    /// Opens a regular file for reading. A FIFO, a device, a socket or a folder is refused
    /// without blocking.
    pub fn open_regular(&self, path: &Inside) -> Result<RegularFile, PathError> {
        let file = self
            .dir()
            .open_with(path.cap(), &read_options())
            .map_err(|source| PathError::io(Op::Read, path, source))?;
        let meta = file
            .metadata()
            .map_err(|source| PathError::io(Op::Read, path, source))?;
        if !meta.is_file() {
            return Err(PathError::NotAFile {
                path: path.to_string(),
                kind: FileKind::of(&meta.file_type()),
            });
        }
        Ok(RegularFile {
            file: file.into_std(),
            len: meta.len(),
        })
    }

    /// The whole file, refused when it is larger than `limit` bytes (checked before reading,
    /// and the read itself stops at `limit + 1` bytes in case the file grows meanwhile).
    pub fn read_bytes(&self, path: &Inside, limit: u64) -> Result<Vec<u8>, PathError> {
        let file = self.open_regular(path)?;
        let too_large = |size| PathError::TooLarge {
            path: path.to_string(),
            size,
            limit,
        };
        if file.len > limit {
            return Err(too_large(file.len));
        }
        let mut bytes = Vec::new();
        (&file.file)
            .take(limit + 1)
            .read_to_end(&mut bytes)
            .map_err(|source| PathError::io(Op::Read, path, source))?;
        if bytes.len() as u64 > limit {
            return Err(too_large(bytes.len() as u64));
        }
        Ok(bytes)
    }

    /// [`Self::read_bytes`] as UTF-8 text.
    pub fn read_to_string(&self, path: &Inside, limit: u64) -> Result<String, PathError> {
        let bytes = self.read_bytes(path, limit)?;
        String::from_utf8(bytes).map_err(|err| {
            PathError::io(
                Op::Read,
                path,
                io::Error::new(io::ErrorKind::InvalidData, err.utf8_error()),
            )
        })
    }

    /// Creates `path` and every missing folder above it.
    pub fn create_dir_all(&self, path: &Inside) -> Result<(), PathError> {
        self.dir()
            .create_dir_all(path.cap())
            .map_err(|source| PathError::io(Op::CreateDir, path, source))
    }

    /// Writes `bytes` to `path` all at once: a temporary file in the same folder, flushed to
    /// disk, then renamed over the target, so a reader sees the old or the new content and a
    /// crash leaves the old file intact. Missing folders are created. An existing file keeps
    /// its permissions; a symlink at `path` is replaced, never followed.
    pub fn write_atomic(
        &self,
        path: &Inside,
        bytes: &[u8],
        existing: Existing,
    ) -> Result<(), PathError> {
        let write_err = |source| PathError::io(Op::Write, path, source);
        let Some(parent) = path.parent() else {
            return Err(write_err(io::Error::from(io::ErrorKind::IsADirectory)));
        };
        self.create_dir_all(&parent)?;
        let permissions = match self.dir().symlink_metadata(path.cap()) {
            // A quick refusal only: the guarantee is the no-replace rename below, since a
            // file may appear between this look and the rename.
            Ok(_) if existing == Existing::Refuse => {
                return Err(write_err(io::Error::from(io::ErrorKind::AlreadyExists)));
            }
            Ok(meta) if meta.is_dir() => {
                return Err(write_err(io::Error::from(io::ErrorKind::IsADirectory)));
            }
            Ok(meta) if meta.is_file() => Some(meta.permissions()),
            Ok(_) => None,
            Err(err) if err.kind() == io::ErrorKind::NotFound => None,
            Err(source) => return Err(write_err(source)),
        };
        let temp = parent
            .child(&format!(
                "{TEMP_PREFIX}{}-{}",
                std::process::id(),
                TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
            ))
            .ok_or_else(|| write_err(io::Error::from(io::ErrorKind::InvalidInput)))?;
        let result = (|| {
            let mut options = OpenOptions::new();
            options
                .write(true)
                .create_new(true)
                .custom_flags(libc::O_NOFOLLOW);
            let mut file = self.dir().open_with(temp.cap(), &options)?;
            file.write_all(bytes)?;
            if let Some(permissions) = permissions {
                file.set_permissions(permissions)?;
            }
            file.sync_all()?;
            match existing {
                Existing::Replace => self.dir().rename(temp.cap(), self.dir(), path.cap()),
                Existing::Refuse => self.rename_new(&parent, &temp, path),
            }
        })();
        if let Err(source) = result {
            let _ = self.dir().remove_file(temp.cap());
            return Err(write_err(source));
        }
        self.sync_dir(&parent);
        Ok(())
    }

    /// Renames `from` to `to`, both in `folder`, failing with `AlreadyExists` if anything is
    /// at `to`: one `renameat2(RENAME_NOREPLACE)`, so two writers creating the same name at
    /// once cannot both succeed (a look-then-rename could). Where the file system does not
    /// support the flag, a hard link (which also refuses an existing name) and an unlink.
    fn rename_new(&self, folder: &Inside, from: &Inside, to: &Inside) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        use std::os::unix::ffi::OsStrExt;

        let name = |path: &Inside| {
            path.file_name()
                .map(|n| std::ffi::CString::new(n.as_bytes()))
                .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?
                .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
        };
        let (old, new) = (name(from)?, name(to)?);
        // The folder is opened through the handle (beneath the root, no-follow), and the
        // rename names plain entries of it: no path is resolved by the kernel outside cap-std.
        let mut options = OpenOptions::new();
        options
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW);
        let dir = self.dir().open_with(folder.cap(), &options)?;
        let fd = dir.as_raw_fd();
        // SAFETY: `fd` is an open directory for the whole call (`dir` lives until the end of
        // this function) and both names are NUL-terminated C strings that outlive the call.
        let done =
            unsafe { libc::renameat2(fd, old.as_ptr(), fd, new.as_ptr(), libc::RENAME_NOREPLACE) };
        if done == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if !matches!(err.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) {
            return Err(err);
        }
        self.dir().hard_link(from.cap(), self.dir(), to.cap())?;
        self.dir().remove_file(from.cap())
    }

    /// Creates the regular file at `path` when it is missing (never truncating one that
    /// exists) and returns it open for reading and writing: for a file that another library
    /// opens by path afterwards (chapter 17's SQLite board), which can then compare the two.
    /// A symlink or anything but a regular file is refused.
    pub fn create_regular(&self, path: &Inside) -> Result<std::fs::File, PathError> {
        self.open_file(
            path,
            OpenOptions::new().read(true).write(true).create(true),
            Op::Write,
        )
    }

    /// Opens a regular file with `options` (plus `O_NOFOLLOW`, `O_NONBLOCK`, `O_NOCTTY`),
    /// creating its folders first when `options` may create it. Anything but a regular file
    /// at `path` is refused.
    pub(crate) fn open_file(
        &self,
        path: &Inside,
        options: &mut OpenOptions,
        op: Op,
    ) -> Result<std::fs::File, PathError> {
        if let Some(parent) = path.parent() {
            self.create_dir_all(&parent)?;
        }
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
        let err = |source| PathError::io(op, path, source);
        let file = self.dir().open_with(path.cap(), options).map_err(err)?;
        let meta = file.metadata().map_err(err)?;
        if !meta.is_file() {
            return Err(PathError::NotAFile {
                path: path.to_string(),
                kind: FileKind::of(&meta.file_type()),
            });
        }
        Ok(file.into_std())
    }

    /// Appends `bytes` to `path` (created if missing, with its folders). Refuses a symlink or
    /// anything but a regular file at `path`.
    pub fn append(&self, path: &Inside, bytes: &[u8]) -> Result<(), PathError> {
        let file = self.open_file(
            path,
            OpenOptions::new().append(true).create(true),
            Op::Append,
        )?;
        (&file)
            .write_all(bytes)
            .map_err(|source| PathError::io(Op::Append, path, source))
    }

    /// [`Self::append`] for a file only its owner may read: created 0600 when missing, and the
    /// data flushed to disk before returning, so a record appended is a record kept (a session
    /// log: a crash loses at most the line being written).
    pub fn append_private(&self, path: &Inside, bytes: &[u8]) -> Result<(), PathError> {
        let file = self.open_file(
            path,
            OpenOptions::new().append(true).create(true).mode(0o600),
            Op::Append,
        )?;
        let append_err = |source| PathError::io(Op::Append, path, source);
        (&file).write_all(bytes).map_err(append_err)?;
        file.sync_data().map_err(append_err)
    }

    /// Removes the file `path`; a symlink there is removed, never what it points to.
    pub fn remove_file(&self, path: &Inside) -> Result<(), PathError> {
        self.dir()
            .remove_file(path.cap())
            .map_err(|source| PathError::io(Op::Remove, path, source))
    }

    /// Renames `from` to `to` (replacing a file at `to`), then flushes both folders.
    pub fn rename(&self, from: &Inside, to: &Inside) -> Result<(), PathError> {
        self.dir()
            .rename(from.cap(), self.dir(), to.cap())
            .map_err(|source| PathError::io(Op::Rename, from, source))?;
        for folder in [from.parent(), to.parent()].into_iter().flatten() {
            self.sync_dir(&folder);
        }
        Ok(())
    }

    /// The folder's entries, sorted by name. Names that are not UTF-8 are skipped: nothing
    /// the harness writes has one, and a model could not name it back.
    pub fn list_dir(&self, path: &Inside) -> Result<Vec<Entry>, PathError> {
        self.list_dir_bounded(path, usize::MAX)
    }

    /// [`Self::list_dir`], but reading at most `max + 1` entries: a caller seeing more than
    /// `max` knows the folder is over its bound without having held all of it.
    pub fn list_dir_bounded(&self, path: &Inside, max: usize) -> Result<Vec<Entry>, PathError> {
        let list_err = |source| PathError::io(Op::List, path, source);
        let mut entries = Vec::new();
        for entry in self
            .dir()
            .read_dir(path.cap())
            .map_err(list_err)?
            .take(max.saturating_add(1))
        {
            let entry = entry.map_err(list_err)?;
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            let kind = entry
                .file_type()
                .map(|t| FileKind::of(&t))
                .unwrap_or(FileKind::Unknown);
            let ino = std::os::unix::fs::DirEntryExt::ino(&entry);
            entries.push(Entry { name, kind, ino });
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(entries)
    }

    /// Removes the temporary files a killed process left in `folder` (callers hold the lock
    /// that guards the folder, so no live writer's temp file is taken). Returns how many.
    pub fn remove_leftovers(&self, folder: &Inside) -> Result<usize, PathError> {
        let mut removed = 0;
        for entry in self.list_dir(folder)? {
            if entry.kind != FileKind::File || !entry.name.starts_with(TEMP_PREFIX) {
                continue;
            }
            if let Some(path) = folder.child(&entry.name) {
                self.remove_file(&path)?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// Writes a new file and flushes it to disk; fails if anything (a symlink included) is at
    /// `path` already, so it never replaces or follows.
    pub fn write_new(&self, path: &Inside, bytes: &[u8]) -> Result<(), PathError> {
        let mut options = OpenOptions::new();
        options
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW);
        let write_err = |source| PathError::io(Op::Write, path, source);
        let mut file = self
            .dir()
            .open_with(path.cap(), &options)
            .map_err(write_err)?;
        file.write_all(bytes).map_err(write_err)?;
        file.sync_all().map_err(write_err)
    }

    /// A second name `to` for the file `from` (fails if `to` exists). Never follows a symlink
    /// at `from`: the new name is for that link itself.
    pub fn hard_link(&self, from: &Inside, to: &Inside) -> Result<(), PathError> {
        self.dir()
            .hard_link(from.cap(), self.dir(), to.cap())
            .map_err(|source| PathError::io(Op::Write, to, source))
    }

    /// Flushes a folder so renames and links in it survive a crash.
    pub fn sync_folder(&self, folder: &Inside) -> Result<(), PathError> {
        // Not `Dir::open_dir`: its `O_PATH` handle cannot be fsynced (EBADF).
        let mut options = OpenOptions::new();
        options
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW);
        let dir = self
            .dir()
            .open_with(folder.cap(), &options)
            .map_err(|source| PathError::io(Op::Write, folder, source))?;
        dir.sync_all()
            .map_err(|source| PathError::io(Op::Write, folder, source))
    }

    /// Flushes a folder so a rename in it survives a crash; best effort, as a failure here
    /// cannot be undone anyway.
    fn sync_dir(&self, folder: &Inside) {
        let _ = self.sync_folder(folder);
    }
}
