//! `MemoryStore`: the `.memory/` folder of a workspace.
//!
//! ```text
//! .memory/
//!   MEMORY.md                  - [prefers-tabs](prefers-tabs-1a2b3c4d.md) - The user indents with tabs
//!   prefers-tabs-1a2b3c4d.md   front matter (name, description, type), blank line, body
//!   archive/                   every record file the index stopped listing
//!   .lock                      advisory lock shared by every process writing here
//! ```
//!
//! The index is the single source of truth: a record file not listed in `MEMORY.md` does not
//! exist (it is an orphan of an interrupted write), and a record's name is the one the index
//! gives it. That makes every change a two-phase commit with one atomic step:
//!
//! 1. write the new record files (new names, so nothing visible changes) and link the files
//!    that will stop being listed into `archive/` (the originals stay where they are);
//! 2. write the new index to a temp file, fsync, **rename over `MEMORY.md`** — the commit;
//! 3. remove the originals of the archived files.
//!
//! A failure before the rename removes what step 1 added and leaves the old set; a crash before
//! it leaves orphans and the old set; a crash after it leaves the new set. Validation and
//! bounds run before step 1, so a bad record never touches the disk. Leftovers of a crash (temp
//! files, orphans) are cleaned under the lock by the next access: temp files are removed,
//! orphans archived.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use agent_workspace::{PathError, StateDir, Workspace};

mod commit;

use self::commit::Change;
use crate::archive::{self, ARCHIVE_DIR};
use crate::fsio::Disk;
pub use crate::index::INDEX_FILE;
use crate::index::{IndexEntry, parse_index};
use crate::record::{MemoryRecord, last_wins};

/// The memory folder, at the top of the workspace.
pub const MEMORY_DIR: &str = ".memory";
/// Bounds on each record file and on the index, checked on write and on read.
pub const MAX_LINES: usize = 200;
/// See [`MAX_LINES`].
pub const MAX_BYTES: usize = 4_096;

/// Why the memory store could not be read or changed. A failed change leaves the previous
/// set of records as it was.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// A step of a write failed on purpose (`MemoryStore::inject_fault`, tests only).
    #[error("{path}: {source}")]
    Io {
        /// The memory folder.
        path: String,
        /// The injected failure, naming the step.
        source: io::Error,
    },
    /// A record file or the index is over [`MAX_LINES`] or [`MAX_BYTES`].
    #[error(
        "{what} is too large: {lines} lines, {bytes} bytes (limit {MAX_LINES} lines, {MAX_BYTES} bytes)"
    )]
    TooLarge {
        /// The file or record.
        what: String,
        /// Its lines.
        lines: usize,
        /// Its bytes.
        bytes: usize,
    },
    /// A record or the index breaks the format or a rule of records.
    #[error("{path} is not valid: {reason}")]
    Invalid {
        /// The file (or, before it is written, the record's name).
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The folder itself cannot be used (it leads outside, or it is not a folder).
    #[error("the memory folder is not usable: {0}")]
    Folder(PathError),
    /// The boundary refused a file or the disk failed; the error names the file and the step.
    #[error(transparent)]
    Storage(#[from] PathError),
    /// Another writer changed the set since the version this change was based on.
    #[error("the memory set changed while this change was prepared; nothing was written")]
    Changed,
    /// The index lists no record of that name.
    #[error("no memory named `{0}`")]
    NotFound(String),
    /// A consolidation must replace what it removes: an empty reply would only delete.
    #[error("the consolidation has no replacement records; nothing was changed")]
    NoReplacement,
    /// One pass may not retire most of the store: a bad reply could otherwise empty it.
    #[error(
        "the consolidation would remove {removed} of {total} memories (at most half may go in one pass); nothing was changed"
    )]
    RemovesTooMany {
        /// How many records would go.
        removed: usize,
        /// How many there are.
        total: usize,
    },
}

/// A step of a write, for tests that fail each step on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Writing a new record file (step 1).
    WriteRecord,
    /// Linking a replaced record into `archive/` (step 1).
    ArchiveOld,
    /// Writing the new index's temp file (step 2).
    WriteIndex,
    /// Renaming it over `MEMORY.md`, the commit (step 2).
    RenameIndex,
    /// Removing an archived original (step 3, after the commit).
    DeleteOld,
}

/// A record the index lists but that could not be used; the others load without it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The name the index gives it.
    pub name: String,
    /// Its file inside `.memory/`.
    pub file: String,
    /// Why it was skipped.
    pub reason: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` ({}): {}", self.name, self.file, self.reason)
    }
}

/// The usable records, in index order, and the ones skipped as corrupt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loaded {
    /// The records that passed every check, in index order.
    pub records: Vec<MemoryRecord>,
    /// The ones that did not, with why.
    pub skipped: Vec<Skipped>,
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

/// What a locked operation does when `.memory/` does not exist yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MissingFolder {
    /// Reads see an empty store; nothing is created.
    Empty,
    /// Writes create the folder first.
    Create,
}

/// The memory of one workspace.
///
/// ```
/// use agent_memory::{MemoryRecord, MemoryStore, MemoryType};
/// use agent_workspace::Workspace;
///
/// let dir = tempfile::tempdir().unwrap();
/// let store = MemoryStore::open(&Workspace::new(dir.path()).unwrap());
/// let tabs = |description: &str| {
///     MemoryRecord::new("prefers-tabs", MemoryType::User, description, "Indent with tabs.")
/// };
/// store.upsert(vec![tabs("The user indents with tabs")]).unwrap();
/// // The same name again replaces the record; the old file goes to the archive.
/// store.upsert(vec![tabs("The user indents with tabs, width 4")]).unwrap();
/// assert_eq!(store.load().unwrap(), vec![tabs("The user indents with tabs, width 4")]);
///
/// let archived = store.forget("prefers-tabs").unwrap();
/// assert_eq!(archived.len(), 1);
/// assert!(store.load().unwrap().is_empty());
/// ```
#[derive(Debug)]
pub struct MemoryStore {
    workspace: Workspace,
    /// `.memory` and its lock, as every store of the harness keeps its folder.
    state: StateDir,
    in_process: Mutex<()>,
    fault: Mutex<Option<Fault>>,
}

impl MemoryStore {
    fn disk(&self) -> Disk<'_> {
        Disk(&self.workspace)
    }

    /// The store of `workspace`'s [`MEMORY_DIR`]; nothing is read or created until it is
    /// used.
    pub fn open(workspace: &Workspace) -> Self {
        Self {
            workspace: workspace.clone(),
            state: StateDir::new(workspace, MEMORY_DIR),
            in_process: Mutex::new(()),
            fault: Mutex::new(None),
        }
    }

    /// The folder, resolved through the workspace every time: `.memory` may not be (or become)
    /// a symlink to outside.
    pub fn dir(&self) -> Result<PathBuf, MemoryError> {
        self.workspace
            .resolve(MEMORY_DIR)
            .map_err(MemoryError::Folder)
    }

    /// The archive folder, created if missing, resolved through the workspace like `dir`.
    fn archive_dir(&self) -> Result<PathBuf, MemoryError> {
        let relative = format!("{MEMORY_DIR}/{ARCHIVE_DIR}");
        let path = self
            .workspace
            .resolve(&relative)
            .map_err(MemoryError::Folder)?;
        if !self.disk().is_dir(&path) {
            self.disk().create_dir_all(&path)?;
        }
        // Re-checked: it must still resolve inside.
        self.workspace
            .resolve(&relative)
            .map_err(MemoryError::Folder)
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

    /// Runs `f` holding both locks: the in-process mutex and the advisory file lock. Cleans up
    /// what a killed process left first, since holding the lock means no write is under way.
    fn locked<T>(
        &self,
        missing: MissingFolder,
        f: impl FnOnce(&Path) -> Result<T, MemoryError>,
    ) -> Result<T, MemoryError> {
        let _guard = self
            .in_process
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let dir = self.dir()?;
        if !self.disk().is_dir(&dir) {
            if missing == MissingFolder::Empty {
                return f(&dir);
            }
            self.disk().create_dir_all(&dir)?;
            self.dir()?; // re-check: the folder must still resolve inside
        }
        let _lock = self.disk().lock(&self.state)?;
        let listed = self.read_index(&dir).ok().map(|(_, entries)| entries);
        let archive = || self.archive_dir();
        archive::tidy(
            self.disk(),
            &dir,
            listed.as_deref(),
            &archive,
            MAX_BYTES as u64,
        );
        f(&dir)
    }

    fn read_index(&self, dir: &Path) -> Result<(String, Vec<IndexEntry>), MemoryError> {
        let path = dir.join(INDEX_FILE);
        let text = match self.disk().read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.is_not_found() => {
                return Ok((String::new(), Vec::new()));
            }
            Err(err) => return Err(err.into()),
        };
        check_bounds(INDEX_FILE, &text)?;
        let entries = parse_index(&text).map_err(|err| MemoryError::Invalid {
            path: INDEX_FILE.into(),
            reason: err.to_string(),
        })?;
        Ok((text, entries))
    }

    /// The record `entry` lists, named as the index names it (the front matter's name is
    /// only a copy: the index is what `forget` and upserts match on).
    fn read_record(&self, dir: &Path, entry: &IndexEntry) -> Result<MemoryRecord, MemoryError> {
        let invalid = |reason| MemoryError::Invalid {
            path: entry.file.clone(),
            reason,
        };
        let text = self.disk().read_to_string(&dir.join(&entry.file))?;
        check_bounds(&entry.file, &text)?;
        let mut record = MemoryRecord::from_file_text(&text).map_err(|e| invalid(e.to_string()))?;
        if record.name != entry.name {
            tracing::warn!(
                "memory: {} names itself `{}` but the index lists it as `{}`; using `{}`",
                entry.file,
                record.name,
                entry.name,
                entry.name
            );
            record.name = entry.name.clone();
        }
        record.validate().map_err(|e| invalid(e.to_string()))?;
        Ok(record)
    }

    /// Every usable record the index lists, in index order; a corrupt one (unreadable, too
    /// large, bad front matter) is skipped with a warning naming it and reported.
    pub fn load_all(&self) -> Result<Loaded, MemoryError> {
        self.locked(MissingFolder::Empty, |dir| {
            let (_, entries) = self.read_index(dir)?;
            let mut loaded = Loaded::default();
            for entry in &entries {
                match self.read_record(dir, entry) {
                    Ok(record) => loaded.records.push(record),
                    Err(err) => {
                        let skipped = Skipped {
                            name: entry.name.clone(),
                            file: entry.file.clone(),
                            reason: err.to_string(),
                        };
                        tracing::warn!("memory: skipped the corrupt record {skipped}");
                        loaded.skipped.push(skipped);
                    }
                }
            }
            Ok(loaded)
        })
    }

    /// The usable records (see [`MemoryStore::load_all`] for the skipped ones).
    pub fn load(&self) -> Result<Vec<MemoryRecord>, MemoryError> {
        Ok(self.load_all()?.records)
    }

    /// The index text: two equal versions mean the same set of records.
    pub fn version(&self) -> Result<String, MemoryError> {
        self.locked(MissingFolder::Empty, |dir| Ok(self.read_index(dir)?.0))
    }

    /// Adds records; a record whose name exists replaces the old one (which is archived). A
    /// name given twice is stored once: the last one wins.
    pub fn upsert(&self, records: Vec<MemoryRecord>) -> Result<(), MemoryError> {
        let add = last_wins(records);
        let remove = add.iter().map(|r| r.name.clone()).collect();
        self.commit(Change {
            expected: None,
            remove,
            add,
            check: &|_| Ok(()),
        })
        .map(drop)
    }

    /// Replaces `sources` by `records` in one commit, only if the set is still at
    /// `expected_version` (consolidation: the model saw that version). Refused when `records`
    /// is empty or when more than half of the current records would be removed.
    pub fn replace(
        &self,
        sources: &[String],
        records: Vec<MemoryRecord>,
        expected_version: &str,
    ) -> Result<(), MemoryError> {
        let add = last_wins(records);
        if add.is_empty() {
            return Err(MemoryError::NoReplacement);
        }
        let mut remove: Vec<String> = sources.to_vec();
        remove.extend(add.iter().map(|r| r.name.clone()));
        // Removed = sources that stop existing; one re-created under its own name is updated.
        let check = |current: &[IndexEntry]| {
            let gone = current
                .iter()
                .filter(|e| sources.contains(&e.name) && !add.iter().any(|r| r.name == e.name))
                .count();
            if gone * 2 > current.len() {
                return Err(MemoryError::RemovesTooMany {
                    removed: gone,
                    total: current.len(),
                });
            }
            Ok(())
        };
        self.commit(Change {
            expected: Some(expected_version),
            remove,
            add: add.clone(),
            check: &check,
        })
        .map(drop)
    }

    /// Removes the record the index lists as `name` (as `list` shows it, corrupt or not) and
    /// archives its file. Returns the archived files, relative to `.memory/` (none when the
    /// file was already missing).
    pub fn forget(&self, name: &str) -> Result<Vec<String>, MemoryError> {
        let check = |current: &[IndexEntry]| {
            if current.iter().any(|e| e.name == name) {
                Ok(())
            } else {
                Err(MemoryError::NotFound(name.to_string()))
            }
        };
        self.commit(Change {
            expected: None,
            remove: vec![name.to_string()],
            add: Vec::new(),
            check: &check,
        })
    }
}
