//! `MemoryStore`: the `.memory/` folder of a workspace.
//!
//! ```text
//! .memory/
//!   MEMORY.md                  - [prefers-tabs](prefers-tabs-1a2b3c4d.md) - The user indents with tabs
//!   prefers-tabs-1a2b3c4d.md   front matter (name, description, type), blank line, body
//!   .lock                      advisory lock shared by every process writing here
//! ```
//!
//! The index is the single source of truth: a record file not listed in `MEMORY.md` does not
//! exist (it is an orphan of an interrupted write). That makes every change a two-phase commit
//! with one atomic step:
//!
//! 1. write the new record files (new names, so nothing visible changes);
//! 2. write the new index to a temp file, fsync, **rename over `MEMORY.md`** — the commit;
//! 3. delete the files the new index no longer lists.
//!
//! A failure before the rename removes what step 1 wrote and leaves the old set; a crash before
//! it leaves orphans and the old set; a crash after it leaves the new set. Validation and
//! bounds run before step 1, so a bad record never touches the disk.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use agent_tools::{PathError, Workspace};

use crate::record::MemoryRecord;

pub const MEMORY_DIR: &str = ".memory";
pub const INDEX_FILE: &str = "MEMORY.md";
const LOCK_FILE: &str = ".lock";
/// Bounds on each record file and on the index, checked on write and on read.
pub const MAX_LINES: usize = 200;
pub const MAX_BYTES: usize = 4_096;

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("{path}: {source}")]
    Io { path: String, source: io::Error },
    #[error(
        "{what} is too large: {lines} lines, {bytes} bytes (limit {MAX_LINES} lines, {MAX_BYTES} bytes)"
    )]
    TooLarge {
        what: String,
        lines: usize,
        bytes: usize,
    },
    #[error("{path} is not valid: {reason}")]
    Invalid { path: String, reason: String },
    #[error("the memory folder is not usable: {0}")]
    Escape(#[from] PathError),
    #[error("the memory set changed while this change was prepared; nothing was written")]
    Changed,
    #[error("no memory named `{0}`")]
    NotFound(String),
}

/// A step of a write, for tests that fail each step on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    WriteRecord,
    WriteIndex,
    RenameIndex,
    DeleteOld,
}

/// One line of the index.
#[derive(Debug, Clone, PartialEq, Eq)]
struct IndexEntry {
    name: String,
    file: String,
    description: String,
}

fn check_bounds(what: &str, text: &str) -> Result<(), MemoryError> {
    let lines = text.lines().count();
    if lines > MAX_LINES || text.len() > MAX_BYTES {
        return Err(MemoryError::TooLarge {
            what: what.to_string(),
            lines,
            bytes: text.len(),
        });
    }
    Ok(())
}

fn parse_index(text: &str) -> Result<Vec<IndexEntry>, String> {
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || format!("line {}: expected `- [name](file) - description`", i + 1);
        let rest = line.strip_prefix("- [").ok_or_else(bad)?;
        let (name, rest) = rest.split_once("](").ok_or_else(bad)?;
        let (file, description) = rest.split_once(") - ").ok_or_else(bad)?;
        let safe_file = file.ends_with(".md")
            && file != INDEX_FILE
            && !file.contains('/')
            && !file.starts_with('.');
        if !safe_file {
            return Err(format!(
                "line {}: `{file}` is not a record file name",
                i + 1
            ));
        }
        entries.push(IndexEntry {
            name: name.into(),
            file: file.into(),
            description: description.into(),
        });
    }
    Ok(entries)
}

fn render_index(entries: &[IndexEntry]) -> String {
    entries
        .iter()
        .map(|e| format!("- [{}]({}) - {}\n", e.name, e.file, e.description))
        .collect()
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

/// The memory of one workspace.
#[derive(Debug)]
pub struct MemoryStore {
    workspace: Workspace,
    in_process: Mutex<()>,
    fault: Mutex<Option<Fault>>,
}

impl MemoryStore {
    pub fn open(workspace: &Workspace) -> Self {
        Self {
            workspace: workspace.clone(),
            in_process: Mutex::new(()),
            fault: Mutex::new(None),
        }
    }

    /// The folder, resolved through the workspace every time: `.memory` may not be (or become)
    /// a symlink to outside.
    pub fn dir(&self) -> Result<PathBuf, MemoryError> {
        Ok(self.workspace.resolve(MEMORY_DIR)?)
    }

    /// Makes the next write fail at `fault` (tests only).
    #[doc(hidden)]
    pub fn inject_fault(&self, fault: Option<Fault>) {
        *self.fault.lock().unwrap_or_else(PoisonError::into_inner) = fault;
    }

    fn hit(&self, step: Fault) -> io::Result<()> {
        if *self.fault.lock().unwrap_or_else(PoisonError::into_inner) == Some(step) {
            return Err(io::Error::other(format!("injected fault at {step:?}")));
        }
        Ok(())
    }

    /// Runs `f` holding both locks: the in-process mutex and the advisory file lock.
    fn locked<T>(
        &self,
        create: bool,
        f: impl FnOnce(&Path) -> Result<T, MemoryError>,
    ) -> Result<T, MemoryError> {
        let _guard = self
            .in_process
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let dir = self.dir()?;
        let io_err = |path: &Path| {
            let path = path.display().to_string();
            move |source| MemoryError::Io { path, source }
        };
        if !dir.is_dir() {
            if !create {
                return f(&dir);
            }
            fs::create_dir_all(&dir).map_err(io_err(&dir))?;
            self.dir()?; // re-check: the folder must still resolve inside
        }
        let lock_path = dir.join(LOCK_FILE);
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io_err(&lock_path))?;
        lock.lock().map_err(io_err(&lock_path))?;
        let result = f(&dir);
        let _ = lock.unlock();
        result
    }

    fn read_index(dir: &Path) -> Result<(String, Vec<IndexEntry>), MemoryError> {
        let path = dir.join(INDEX_FILE);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                return Ok((String::new(), Vec::new()));
            }
            Err(source) => {
                return Err(MemoryError::Io {
                    path: path.display().to_string(),
                    source,
                });
            }
        };
        check_bounds(INDEX_FILE, &text)?;
        let entries = parse_index(&text).map_err(|reason| MemoryError::Invalid {
            path: INDEX_FILE.into(),
            reason,
        })?;
        Ok((text, entries))
    }

    fn read_record(dir: &Path, entry: &IndexEntry) -> Result<MemoryRecord, MemoryError> {
        let path = dir.join(&entry.file);
        let text = fs::read_to_string(&path).map_err(|source| MemoryError::Io {
            path: entry.file.clone(),
            source,
        })?;
        check_bounds(&entry.file, &text)?;
        MemoryRecord::from_file_text(&text).map_err(|reason| MemoryError::Invalid {
            path: entry.file.clone(),
            reason,
        })
    }

    /// Every record the index lists, in index order.
    pub fn load(&self) -> Result<Vec<MemoryRecord>, MemoryError> {
        self.locked(false, |dir| {
            let (_, entries) = Self::read_index(dir)?;
            entries.iter().map(|e| Self::read_record(dir, e)).collect()
        })
    }

    /// The index text: two equal versions mean the same set of records.
    pub fn version(&self) -> Result<String, MemoryError> {
        self.locked(false, |dir| Ok(Self::read_index(dir)?.0))
    }

    /// Adds records; a record whose name exists replaces the old one.
    pub fn upsert(&self, records: Vec<MemoryRecord>) -> Result<(), MemoryError> {
        let names: Vec<String> = records.iter().map(|r| r.name.clone()).collect();
        self.commit(None, &names, records)
    }

    /// Replaces `sources` by `records` in one commit, only if the set is still at
    /// `expected_version` (consolidation: the model saw that version).
    pub fn replace(
        &self,
        sources: &[String],
        records: Vec<MemoryRecord>,
        expected_version: &str,
    ) -> Result<(), MemoryError> {
        let mut remove: Vec<String> = sources.to_vec();
        remove.extend(records.iter().map(|r| r.name.clone()));
        self.commit(Some(expected_version), &remove, records)
    }

    /// Removes one record.
    pub fn forget(&self, name: &str) -> Result<(), MemoryError> {
        let exists = self.load()?.iter().any(|r| r.name == name);
        if !exists {
            return Err(MemoryError::NotFound(name.to_string()));
        }
        self.commit(None, &[name.to_string()], Vec::new())
    }

    fn commit(
        &self,
        expected: Option<&str>,
        remove: &[String],
        add: Vec<MemoryRecord>,
    ) -> Result<(), MemoryError> {
        // Everything that can be checked is checked before the disk is touched.
        let mut files = Vec::with_capacity(add.len());
        for record in &add {
            record.validate().map_err(|reason| MemoryError::Invalid {
                path: record.name.clone(),
                reason,
            })?;
            let text = record
                .to_file_text()
                .map_err(|reason| MemoryError::Invalid {
                    path: record.name.clone(),
                    reason,
                })?;
            check_bounds(&format!("record `{}`", record.name), &text)?;
            files.push((format!("{}-{}.md", record.name, unique_suffix()), text));
        }
        self.locked(true, |dir| {
            let (version, current) = Self::read_index(dir)?;
            if expected.is_some_and(|v| v != version) {
                return Err(MemoryError::Changed);
            }
            let (gone, mut kept): (Vec<IndexEntry>, Vec<IndexEntry>) =
                current.into_iter().partition(|e| remove.contains(&e.name));
            kept.extend(add.iter().zip(&files).map(|(r, (file, _))| IndexEntry {
                name: r.name.clone(),
                file: file.clone(),
                description: r.description.trim().to_string(),
            }));
            let index = render_index(&kept);
            check_bounds(INDEX_FILE, &index)?;
            self.write_files(dir, &files, &index)?;
            for entry in gone {
                let removed = self.hit(Fault::DeleteOld).and_then(|()| fs::remove_file(dir.join(&entry.file)));
                if let Err(err) = removed {
                    // Committed already: an undeleted file is an unlisted orphan, not data.
                    tracing::warn!(file = %entry.file, "cannot delete a replaced memory file: {err}");
                }
            }
            Ok(())
        })
    }

    /// Steps 1 and 2 of the commit; on failure removes what it wrote.
    fn write_files(
        &self,
        dir: &Path,
        files: &[(String, String)],
        index: &str,
    ) -> Result<(), MemoryError> {
        let mut written: Vec<PathBuf> = Vec::new();
        let tmp_index = dir.join(format!(".{INDEX_FILE}.tmp-{}", unique_suffix()));
        let result = (|| -> io::Result<()> {
            for (file, text) in files {
                self.hit(Fault::WriteRecord)?;
                let path = dir.join(file);
                written.push(path.clone());
                write_synced(&path, text)?;
            }
            self.hit(Fault::WriteIndex)?;
            write_synced(&tmp_index, index)?;
            self.hit(Fault::RenameIndex)?;
            fs::rename(&tmp_index, dir.join(INDEX_FILE))
        })();
        if let Err(source) = result {
            // Not committed: remove what this write added; the old set is untouched.
            for path in written.iter().chain([&tmp_index]) {
                let _ = fs::remove_file(path);
            }
            return Err(MemoryError::Io {
                path: MEMORY_DIR.into(),
                source,
            });
        }
        // Committed. Make the rename durable; a failure here cannot be undone, only reported.
        if let Err(err) = File::open(dir).and_then(|d| d.sync_all()) {
            tracing::warn!("cannot sync the memory folder: {err}");
        }
        Ok(())
    }
}

fn write_synced(path: &Path, text: &str) -> io::Result<()> {
    let mut file = File::create(path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
}
