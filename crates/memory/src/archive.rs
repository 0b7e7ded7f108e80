//! `.memory/archive/`: where deleted records go, and the clean-up of files a killed process
//! left behind. Nothing the store ever listed is erased; it is moved here.

use std::path::Path;

use agent_workspace::{Op, PathError};

use crate::fsio::{Disk, EntryKind, already_exists};
use crate::index::{INDEX_FILE, IndexEntry, is_record_file};
use crate::store::MemoryError;

/// The archive folder inside `.memory/`.
pub const ARCHIVE_DIR: &str = "archive";
/// How many numbered names are tried before archiving gives up.
const MAX_SUFFIX: u32 = 1_000;

/// Temp files of the store's atomic writes (`.MEMORY.md.tmp-1a2b3c4d`): only a killed
/// process leaves one, because a failed write removes its own.
pub(crate) fn is_temp_file(name: &str) -> bool {
    name.starts_with('.') && name.contains(".tmp-")
}

/// Links `dir/file` into `archive` under its own name, or `stem.N.md` when that is taken;
/// returns the name it got, or `None` when `dir/file` does not exist (nothing to keep).
pub(crate) fn link_into(
    disk: Disk<'_>,
    dir: &Path,
    archive: &Path,
    file: &str,
) -> Result<Option<String>, PathError> {
    let stem = file.strip_suffix(".md").unwrap_or(file);
    for n in 0..MAX_SUFFIX {
        let name = if n == 0 {
            file.to_string()
        } else {
            format!("{stem}.{n}.md")
        };
        match disk.link(&dir.join(file), &archive.join(&name)) {
            Ok(()) => return Ok(Some(name)),
            Err(err) if already_exists(&err) => continue,
            Err(err) if err.is_not_found() && !disk.exists(&dir.join(file)) => {
                return Ok(None);
            }
            Err(err) => return Err(err),
        }
    }
    Err(PathError::Io {
        op: Op::Write,
        path: archive.join(file).display().to_string(),
        source: std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("{MAX_SUFFIX} archived files named like {file} exist already"),
        ),
    })
}

/// Removes temp files and moves orphans (record files the index does not list) to the
/// archive. Runs under the lock, so no write is in progress. `listed` is `None` when the index
/// cannot be read: then every record file might be listed and no orphan is touched.
/// `archive` resolves (and creates) the archive folder, only when an orphan needs it.
pub(crate) fn tidy(
    disk: Disk<'_>,
    dir: &Path,
    listed: Option<&[IndexEntry]>,
    archive: &dyn Fn() -> Result<std::path::PathBuf, MemoryError>,
    limit: u64,
) {
    let entries = match disk.list_dir(dir) {
        Ok(entries) => entries,
        Err(err) => {
            tracing::warn!("memory: cannot list {} to clean up: {err}", dir.display());
            return;
        }
    };
    for (name, kind) in entries {
        if is_temp_file(&name) && kind != EntryKind::Dir {
            match disk.remove(&dir.join(&name)) {
                Ok(()) => tracing::info!("memory: removed the leftover temp file {name}"),
                Err(err) => tracing::warn!("memory: cannot remove the leftover {name}: {err}"),
            }
            continue;
        }
        let Some(listed) = listed else { continue };
        // Plain files only: a symlink is never followed here (it is no data of ours).
        let orphan = kind == EntryKind::File
            && is_record_file(&name)
            && name != INDEX_FILE
            && !listed.iter().any(|e| e.file == name);
        if orphan && let Err(err) = archive_orphan(disk, dir, &name, archive, limit) {
            tracing::warn!("memory: cannot archive the leftover {name}: {err}");
        }
    }
}

fn archive_orphan(
    disk: Disk<'_>,
    dir: &Path,
    name: &str,
    archive: &dyn Fn() -> Result<std::path::PathBuf, MemoryError>,
    limit: u64,
) -> Result<(), MemoryError> {
    let archive = archive()?;
    let path = dir.join(name);
    // An orphan the archive holds already: a deletion committed, archived, then failed to
    // remove the original. Archiving it again would only make a duplicate.
    let archived = archive.join(name);
    let duplicate = disk.exists(&archived) && disk.same_content(&path, &archived, limit)?;
    if !duplicate {
        let got = link_into(disk, dir, &archive, name)?;
        tracing::info!("memory: moved the leftover {name} to {ARCHIVE_DIR}/{got:?}");
    }
    Ok(disk.remove(&path)?)
}
