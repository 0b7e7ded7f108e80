//! The store's scan of `.tasks/`, cached: used again while the folder looks as it did.
//!
//! "Looks as it did" is two things, neither of them a task file:
//!
//! - the folder's listing — names, kinds and inode numbers. Every change by this store (and
//!   by anything that saves a file by renaming a new one into place) gives the file a new
//!   inode, and a file planted or removed changes the names. Once the folder has been still
//!   for [`SETTLED`], its own modification time stands in for the listing: a name created,
//!   removed or renamed in it moves that time, and a change can no longer share the tick of
//!   the time that was read;
//! - the lock file's change counter, bumped by every change made under the lock. Inode
//!   numbers are reused, so a file replaced twice between two looks could show its old number
//!   again; the counter tells a cache that some process changed something anyway.
//!
//! (The folder's time is compared with this machine's clock: on a network file system whose
//! server runs behind it, a change made in the same server tick as the look could go unseen
//! until the next change.)
//!
//! So a request with an unchanged board reads one folder's metadata and eight bytes of the
//! lock file. A file rewritten in place by someone who neither renames nor takes the lock (an
//! editor that overwrites) keeps its inode and is not seen until another writer changes the
//! folder or the next process scans it; everything that was cached had passed the checks of
//! `check.rs`, so a stale view is never an unchecked one.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use agent_workspace::store::{self, MAX_ID};
use agent_workspace::{
    Entry, FileKind, Inside, PathError, Stamp, StateLock, StoreError, TEMP_PREFIX,
};

use crate::check::{check_record, is_id};
use crate::model::{Task, TaskId};
use crate::store::{FileError, MAX_TASKS, READ_LIMIT, Snapshot, TASKS_DIR, TaskError, TaskStore};

/// How long a folder must have been unchanged before its modification time alone is trusted
/// to say "nothing changed": far longer than a file system clock's tick (a few milliseconds),
/// so a change after the listing cannot carry the time that was read before it.
pub(crate) const SETTLED: Duration = Duration::from_millis(100);

/// One scan and what the folder looked like when it was made.
#[derive(Debug)]
pub(crate) struct View {
    /// `None`: the counter could not be read, so the view is never used again.
    generation: Option<u64>,
    /// The folder's stamp, read before the listing; `None` when unknown.
    folder: Option<Stamp>,
    /// Whether `folder` had been still for [`SETTLED`] when the listing was read.
    settled: bool,
    listing: Vec<Entry>,
    snapshot: Arc<Snapshot>,
}

impl View {
    fn same_counter(&self, generation: Option<u64>) -> bool {
        self.generation.is_some() && self.generation == generation
    }
}

/// What a look at the folder found before deciding whether to list it.
struct Look<'a> {
    folder: &'a Inside,
    generation: Option<u64>,
    stamp: Option<Stamp>,
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
        let folder = self.state.folder()?;
        let stamp = self.state.workspace().stamp(&folder)?;
        match stamp {
            None => {
                return Ok(Arc::new(Snapshot {
                    next_id: Some(1),
                    ..Snapshot::default()
                }));
            }
            Some(stamp) if stamp.kind != FileKind::Directory => {
                return Err(TaskError::Storage(PathError::NotAFile {
                    path: TASKS_DIR.to_string(),
                    kind: stamp.kind,
                }));
            }
            Some(_) => {}
        }
        // No lock file yet counts as nothing changed under it (the folder shipped that way).
        let generation = self.state.generation().ok().map(|g| g.unwrap_or(0));
        let look = Look {
            folder: &folder,
            generation,
            stamp,
        };
        let mut slot = self.view_slot();
        self.look(&mut slot, &look, || self.state.list())
    }

    /// The snapshot `look` describes: `slot`'s while it still matches (by the settled stamp,
    /// else by a new listing), a new scan otherwise (kept in `slot`).
    fn look(
        &self,
        slot: &mut Option<View>,
        look: &Look<'_>,
        list: impl FnOnce() -> Result<Vec<Entry>, StoreError>,
    ) -> Result<Arc<Snapshot>, TaskError> {
        if let Some(view) = slot.as_ref()
            && view.settled
            && view.same_counter(look.generation)
            && look.stamp.is_some()
            && view.folder == look.stamp
        {
            return Ok(view.snapshot.clone());
        }
        let listed_at = SystemTime::now();
        let listing = list()?;
        let settled = look
            .stamp
            .and_then(|s| s.modified.checked_add(SETTLED))
            .is_some_and(|still_until| still_until < listed_at);
        if let Some(view) = slot.as_mut()
            && view.same_counter(look.generation)
            && view.listing == listing
        {
            view.folder = look.stamp;
            view.settled = settled;
            return Ok(view.snapshot.clone());
        }
        let snapshot = Arc::new(self.scan(look.folder, &listing));
        *slot = Some(View {
            generation: look.generation,
            folder: look.stamp,
            settled,
            listing,
            snapshot: snapshot.clone(),
        });
        Ok(snapshot)
    }

    /// [`Self::look`] while holding the lock.
    fn look_locked(
        &self,
        view: &mut Option<View>,
        lock: &StateLock<'_>,
    ) -> Result<Arc<Snapshot>, TaskError> {
        let look = Look {
            folder: lock.folder(),
            generation: lock.generation().ok(),
            stamp: lock.stamp()?,
        };
        self.look(view, &look, || lock.list())
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
        let mut view = self.view_slot().take();
        let mut snapshot = self.look_locked(&mut view, &lock)?;
        if view
            .as_ref()
            .is_some_and(|v| v.listing.iter().any(|e| e.name.starts_with(TEMP_PREFIX)))
        {
            lock.remove_leftovers();
            view = None;
            snapshot = self.look_locked(&mut view, &lock)?;
        }
        let keep = |view: Option<View>| *self.view_slot() = view;
        let (record, value) = match f(&snapshot) {
            Ok(done) => done,
            Err(err) => {
                // Nothing was written: the view is as good as it was.
                keep(view);
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
        // (the slot stays empty), and the next look scans.
        written.map_err(|source| TaskError::Write {
            id: record.id,
            source,
        })?;
        let generation = lock.bump_generation().ok();
        let entry = lock.workspace().entry(&lock.file(&name)?)?;
        let (Some(generation), Some(entry), Some(mut view)) = (generation, entry, view) else {
            return Ok(value);
        };
        match view
            .listing
            .binary_search_by(|e| e.name.as_str().cmp(&entry.name))
        {
            Ok(at) => view.listing[at] = entry,
            Err(at) => view.listing.insert(at, entry),
        }
        drop(snapshot);
        let next = Arc::make_mut(&mut view.snapshot);
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
        // This write moved the folder's time: the next look lists it again.
        view.folder = None;
        view.settled = false;
        view.generation = Some(generation);
        keep(Some(view));
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
