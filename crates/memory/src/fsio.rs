//! Every raw file operation of the store, in one place: the store decides what to do, these
//! functions touch the disk. Kept small and private so they can move behind a stricter
//! file-system boundary without changing the store's logic.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;

/// What a directory entry is, without following a symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryKind {
    File,
    Dir,
    /// A symlink or anything else that is neither a plain file nor a folder.
    Other,
}

pub(crate) fn read_to_string(path: &Path) -> io::Result<String> {
    fs::read_to_string(path)
}

/// Writes and fsyncs a new file; fails if `path` exists, so a write never replaces a file.
pub(crate) fn write_synced(path: &Path, text: &str) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).create_new(true).open(path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
}

pub(crate) fn rename(from: &Path, to: &Path) -> io::Result<()> {
    fs::rename(from, to)
}

pub(crate) fn remove(path: &Path) -> io::Result<()> {
    fs::remove_file(path)
}

/// A second name for `from` at `to` (fails if `to` exists): archiving keeps the original in
/// place until the commit, so a failure before it leaves the old files untouched.
pub(crate) fn link(from: &Path, to: &Path) -> io::Result<()> {
    fs::hard_link(from, to)
}

pub(crate) fn create_dir_all(path: &Path) -> io::Result<()> {
    fs::create_dir_all(path)
}

pub(crate) fn is_dir(path: &Path) -> bool {
    path.is_dir()
}

/// Makes renames and links in `dir` durable.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir).and_then(|d| d.sync_all())
}

/// The lock file, created if missing and never truncated.
pub(crate) fn open_lock(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
}

/// The names in `dir` (non-UTF-8 names are skipped: the store never makes them).
pub(crate) fn list_dir(dir: &Path) -> io::Result<Vec<(String, EntryKind)>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let kind = match entry.file_type()? {
            t if t.is_file() => EntryKind::File,
            t if t.is_dir() => EntryKind::Dir,
            _ => EntryKind::Other,
        };
        out.push((name, kind));
    }
    Ok(out)
}

/// Whether two files hold the same bytes; files over `limit` bytes count as different.
pub(crate) fn same_content(a: &Path, b: &Path, limit: u64) -> io::Result<bool> {
    let (len_a, len_b) = (fs::metadata(a)?.len(), fs::metadata(b)?.len());
    if len_a != len_b || len_a > limit {
        return Ok(false);
    }
    let read = |path: &Path| -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        File::open(path)?.take(limit).read_to_end(&mut bytes)?;
        Ok(bytes)
    };
    Ok(read(a)? == read(b)?)
}
