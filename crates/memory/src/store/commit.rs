//! The commit of `MemoryStore`: a change checked and written as the `store` module describes
//! (new files, archive links, then the index renamed over `MEMORY.md`), undone when it fails
//! before the rename.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use agent_workspace::PathError;

use super::{Fault, INDEX_FILE, MEMORY_DIR, MemoryError, MemoryStore, MissingFolder, check_bounds};
use crate::archive::{self, ARCHIVE_DIR};
use crate::index::{IndexEntry, render_index};
use crate::record::MemoryRecord;

/// What a commit changes, checked against the current index under the lock.
pub(super) struct Change<'a> {
    /// Commit only if the index text is still this (consolidation: the model saw it).
    pub(super) expected: Option<&'a str>,
    /// Names whose entries go (to the archive).
    pub(super) remove: Vec<String>,
    pub(super) add: Vec<MemoryRecord>,
    /// Refuses the change given the current index, before anything is written.
    pub(super) check: &'a dyn Fn(&[IndexEntry]) -> Result<(), MemoryError>,
}

/// An injected fault: the error names the folder, the source says which step.
fn step_error(source: io::Error) -> MemoryError {
    MemoryError::Io {
        path: MEMORY_DIR.into(),
        source,
    }
}

fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mixed = nanos
        ^ (u64::from(std::process::id()) << 32)
        ^ COUNTER
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    // A cheap mix so consecutive calls differ in every digit.
    let mixed = (mixed ^ (mixed >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    format!("{:08x}", (mixed >> 32) as u32)
}

impl MemoryStore {
    /// Returns the archived files, relative to `.memory/`.
    pub(super) fn commit(&self, change: Change<'_>) -> Result<Vec<String>, MemoryError> {
        // Everything that can be checked is checked before the disk is touched.
        let mut files = Vec::with_capacity(change.add.len());
        for record in &change.add {
            let invalid = |reason| MemoryError::Invalid {
                path: record.name.clone(),
                reason,
            };
            record.validate().map_err(|e| invalid(e.to_string()))?;
            let text = record.to_file_text().map_err(|e| invalid(e.to_string()))?;
            check_bounds(&format!("record `{}`", record.name), &text)?;
            files.push((format!("{}-{}.md", record.name, unique_suffix()), text));
        }
        // A change that only removes has nothing to remove from a store that does not exist:
        // it must not create `.memory/` (and its lock file) just to say so.
        let missing = if change.add.is_empty() {
            MissingFolder::Empty
        } else {
            MissingFolder::Create
        };
        self.locked(missing, |dir| {
            let (version, current) = self.read_index(dir)?;
            if change.expected.is_some_and(|v| v != version) {
                return Err(MemoryError::Changed);
            }
            (change.check)(&current)?;
            let (gone, mut kept): (Vec<IndexEntry>, Vec<IndexEntry>) = current
                .into_iter()
                .partition(|e| change.remove.contains(&e.name));
            kept.extend(
                change
                    .add
                    .iter()
                    .zip(&files)
                    .map(|(r, (file, _))| IndexEntry {
                        name: r.name.clone(),
                        file: file.clone(),
                        description: r.description.trim().to_string(),
                    }),
            );
            let index = render_index(&kept);
            check_bounds(INDEX_FILE, &index)?;
            let archived = self.write_files(dir, &files, &gone, &index)?;
            for entry in gone {
                let removed = match self.hit(Fault::DeleteOld) {
                    Ok(()) => self.disk().remove(&dir.join(&entry.file)),
                    Err(fault) => Err(PathError::Io {
                        op: agent_workspace::Op::Remove,
                        path: entry.file.clone(),
                        source: fault,
                    }),
                };
                match removed {
                    Ok(()) => {}
                    // A record whose file was missing had nothing to archive or remove.
                    Err(err) if err.is_not_found() => {}
                    // Committed and archived already: the leftover original is an unlisted
                    // orphan, removed by the next clean-up.
                    Err(err) => tracing::warn!(
                        "memory: cannot remove the archived original {}: {err}",
                        entry.file
                    ),
                }
            }
            Ok(archived)
        })
    }

    /// Steps 1 and 2 of the commit; on failure removes what it added. Returns the archived
    /// files, relative to `.memory/`.
    fn write_files(
        &self,
        dir: &Path,
        files: &[(String, String)],
        gone: &[IndexEntry],
        index: &str,
    ) -> Result<Vec<String>, MemoryError> {
        let mut added: Vec<PathBuf> = Vec::new();
        let mut archived: Vec<String> = Vec::new();
        let tmp_index = dir.join(format!(".{INDEX_FILE}.tmp-{}", unique_suffix()));
        let result = (|| -> Result<(), MemoryError> {
            for (file, text) in files {
                self.hit(Fault::WriteRecord).map_err(step_error)?;
                let path = dir.join(file);
                self.disk().write_synced(&path, text)?;
                added.push(path);
            }
            if !gone.is_empty() {
                let archive = self.archive_dir()?;
                for entry in gone {
                    self.hit(Fault::ArchiveOld).map_err(step_error)?;
                    let got = archive::link_into(self.disk(), dir, &archive, &entry.file)?;
                    if let Some(name) = got {
                        added.push(archive.join(&name));
                        archived.push(format!("{ARCHIVE_DIR}/{name}"));
                    }
                }
                if let Err(err) = self.disk().sync_dir(&archive) {
                    tracing::warn!("memory: cannot sync the archive folder: {err}");
                }
            }
            self.hit(Fault::WriteIndex).map_err(step_error)?;
            self.disk().write_synced(&tmp_index, index)?;
            self.hit(Fault::RenameIndex).map_err(step_error)?;
            Ok(self.disk().rename(&tmp_index, &dir.join(INDEX_FILE))?)
        })();
        if let Err(err) = result {
            // Not committed: remove what this write added; the old set is untouched.
            for path in added.iter().chain([&tmp_index]) {
                let _ = self.disk().remove(path);
            }
            return Err(err);
        }
        // Committed. Make the rename durable; a failure here cannot be undone, only reported.
        if let Err(err) = self.disk().sync_dir(dir) {
            tracing::warn!("memory: cannot sync the memory folder: {err}");
        }
        Ok(archived)
    }
}
