//! The store's scan of `.tasks/`, cached: used again while the folder looks as it did.
//!
//! "Looks as it did" is two things, both cheap to read and neither a task file:
//!
//! - the folder's listing — names, kinds and inode numbers. Every change by this store (and
//!   by anything that saves a file by renaming a new one into place) gives the file a new
//!   inode, and a file planted or removed changes the names;
//! - the lock file's change counter, bumped by every change made under the lock. Inode
//!   numbers are reused, so a file replaced twice between two looks could show its old number
//!   again; the counter tells a cache that some process changed something anyway.
//!
//! A file rewritten in place by someone who neither renames nor takes the lock (an editor that
//! overwrites) keeps its inode and is not seen until another writer changes the folder or the
//! next process scans it; everything that was cached had passed the checks of `check.rs`, so
//! a stale view is never an unchecked one.

use std::collections::BTreeSet;
use std::sync::Arc;

use agent_workspace::store::{self, MAX_ID};
use agent_workspace::{Entry, FileKind, Inside, StoreError, TEMP_PREFIX};

use crate::check::{check_record, is_id};
use crate::model::{Task, TaskId};
use crate::store::{FileError, MAX_TASKS, READ_LIMIT, Snapshot, TASKS_DIR, TaskError, TaskStore};

/// One scan and what the folder looked like when it was made.
#[derive(Debug)]
pub(crate) struct View {
    /// `None`: the counter could not be read, so the view is never used again.
    generation: Option<u64>,
    listing: Vec<Entry>,
    snapshot: Arc<Snapshot>,
}

impl View {
    fn matches(&self, generation: Option<u64>, listing: &[Entry]) -> bool {
        self.generation.is_some() && self.generation == generation && self.listing == listing
    }
}

impl From<StoreError> for TaskError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::Path(err) => Self::Storage(err),
            other => Self::Storage(agent_workspace::PathError::Io {
                op: agent_workspace::Op::List,
                path: TASKS_DIR.to_string(),
                source: std::io::Error::other(other.to_string()),
            }),
        }
    }
}

/// `7.json` -> 7; anything else (the lock, temp files, `07.json`, an id past the bound) is not
/// a task file.
fn file_id(name: &str) -> Option<TaskId> {
    store::parse_id(name.strip_suffix(".json")?)
}

impl TaskStore {
    /// The tasks now: the cached view while the folder is unchanged, a new scan otherwise.
    pub(crate) fn current(&self) -> Result<Arc<Snapshot>, TaskError> {
        if !self.state.exists()? {
            return Ok(Arc::new(Snapshot {
                next_id: Some(1),
                ..Snapshot::default()
            }));
        }
        // The counter first: a change landing between the two reads makes the next look
        // differ, never this one pass for new.
        // No lock file yet counts as nothing changed under it (the folder shipped that way).
        let generation = self.state.generation().ok().map(|g| g.unwrap_or(0));
        let listing = self.state.list()?;
        let mut slot = self.view_slot();
        if let Some(view) = slot.as_ref()
            && view.matches(generation, &listing)
        {
            return Ok(view.snapshot.clone());
        }
        let snapshot = Arc::new(self.scan(&self.state.folder()?, &listing));
        *slot = Some(View {
            generation,
            listing,
            snapshot: snapshot.clone(),
        });
        Ok(snapshot)
    }

    /// Runs `f` on the current tasks while holding the folder's lock, then writes the one task
    /// it returns (create-only when its id is new) and keeps the view up to date without a
    /// new scan. Temp files a killed writer left are removed first: holding the lock means no
    /// write is under way.
    pub(crate) fn change<T>(
        &self,
        f: impl FnOnce(&Snapshot) -> Result<(Task, T), TaskError>,
    ) -> Result<T, TaskError> {
        let lock = self.state.lock()?;
        let mut listing = lock.list()?;
        if listing.iter().any(|e| e.name.starts_with(TEMP_PREFIX)) {
            lock.remove_leftovers();
            listing = lock.list()?;
        }
        let generation = lock.generation().ok();
        let cached = self.view_slot().take();
        let snapshot = match cached {
            Some(view) if view.matches(generation, &listing) => view.snapshot,
            _ => Arc::new(self.scan(lock.folder(), &listing)),
        };
        let keep = |snapshot: Arc<Snapshot>, listing: Vec<Entry>, generation| {
            *self.view_slot() = Some(View {
                generation,
                listing,
                snapshot,
            });
        };
        let (record, value) = match f(&snapshot) {
            Ok(done) => done,
            Err(err) => {
                // Nothing was written: the view is as good as it was.
                keep(snapshot, listing, generation);
                return Err(err);
            }
        };
        let name = format!("{}.json", record.id);
        let known = snapshot.tasks.contains_key(&record.id);
        let written = if known {
            lock.replace_json(&name, &record)
        } else {
            lock.create_json(&name, &record)
        };
        // From here the folder changed: a view that cannot be brought up to date is dropped
        // (the slot is empty), and the next look scans.
        written.map_err(|source| TaskError::Write {
            id: record.id,
            source,
        })?;
        let generation = lock.bump_generation().ok();
        let entry = lock.workspace().entry(&lock.file(&name)?)?;
        if let (Some(generation), Some(entry)) = (generation, entry) {
            match listing.binary_search_by(|e| e.name.as_str().cmp(&entry.name)) {
                Ok(at) => listing[at] = entry,
                Err(at) => listing.insert(at, entry),
            }
            let mut snapshot = snapshot;
            let next = Arc::make_mut(&mut snapshot);
            let id = record.id;
            next.tasks.insert(id, record);
            if !known {
                next.next_id = match next.next_id {
                    Some(n) if n == id && id < MAX_ID && !next.tasks.contains_key(&(id + 1)) => {
                        Some(id + 1)
                    }
                    _ => store::next_id(&taken(next)),
                };
            }
            keep(snapshot, listing, Some(generation));
        }
        Ok(value)
    }

    /// Reads every task file of `listing` (at most [`MAX_TASKS`], lowest ids first), checks
    /// each, and finds the next id. Skipped files are logged here, once per scan.
    fn scan(&self, folder: &Inside, listing: &[Entry]) -> Snapshot {
        let mut files: Vec<(TaskId, FileKind)> = listing
            .iter()
            .filter_map(|e| Some((file_id(&e.name)?, e.kind)))
            .collect();
        files.sort_unstable_by_key(|(id, _)| *id);
        let mut snapshot = Snapshot::default();
        for (n, (id, kind)) in files.into_iter().enumerate() {
            let read = if n < MAX_TASKS {
                self.read_task(folder, id, kind)
            } else {
                Err(FileError::OverLimit)
            };
            match read {
                Ok(task) => {
                    snapshot.tasks.insert(id, task);
                }
                Err(err) => {
                    tracing::warn!("tasks: skipping {TASKS_DIR}/{id}.json: {err}");
                    snapshot.skipped.push((id, Arc::new(err)));
                }
            }
        }
        snapshot.next_id = store::next_id(&taken(&snapshot));
        snapshot
    }

    fn read_task(&self, folder: &Inside, id: TaskId, kind: FileKind) -> Result<Task, FileError> {
        // Decided from the listing, before any open: a FIFO or a symlink is never opened.
        if kind != FileKind::File {
            return Err(FileError::NotAFile(kind));
        }
        let path = folder
            .child(&format!("{id}.json"))
            .ok_or(FileError::WrongId { found: id })?;
        let text = self.state.workspace().read_to_string(&path, READ_LIMIT)?;
        let task: Task = serde_json::from_str(&text)?;
        if task.id != id || !is_id(task.id) {
            return Err(FileError::WrongId { found: task.id });
        }
        check_record(&task).map_err(|err| FileError::Invalid(Box::new(err)))?;
        Ok(task)
    }
}

/// Every id with a file: readable or skipped, none is handed out again.
fn taken(snapshot: &Snapshot) -> BTreeSet<TaskId> {
    snapshot
        .tasks
        .keys()
        .copied()
        .chain(snapshot.skipped.iter().map(|(id, _)| *id))
        .collect()
}
