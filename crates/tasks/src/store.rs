//! `TaskStore`: the `.tasks/` folder of a workspace.
//!
//! ```text
//! .tasks/
//!   1.json     one task, pretty JSON (see `Task`)
//!   2.json
//!   .lock      advisory lock shared by every process writing here
//! ```
//!
//! There is no index: the folder is the list (a directory scan), so there is nothing to keep
//! in step with the files. Every change writes exactly ONE file with
//! [`Workspace::write_atomic`] (temp file, fsync, rename) while holding the lock: a crash
//! leaves the old file or the new one, never half of one, and a leftover temp file is ignored
//! by the scan and removed by the next locked change. Edges live on the blocked task only
//! (`blocked_by`); "completing unblocks its dependents" is computed, so it needs no second
//! write either.
//!
//! The next id is one more than the largest `<id>.json` name, read under the lock: two
//! processes creating at once get different ids, and a file that cannot be read still keeps
//! its id from being handed out again.

use std::sync::Arc;
use std::time::UNIX_EPOCH;

use agent_workspace::{Clock, Existing, FileKind, Inside, PathError, SystemClock, Workspace};

use crate::graph::{self, Tasks};
use crate::model::{
    MAX_BLOCKED_BY, MAX_DESCRIPTION_BYTES, MAX_OWNER_CHARS, MAX_SUBJECT_CHARS, Status, Task, TaskId,
};

pub const TASKS_DIR: &str = ".tasks";
const LOCK_FILE: &str = ".lock";
/// The most of one task file that is read; a valid one is far smaller (the bounds above).
pub const READ_LIMIT: u64 = 64 * 1024;
/// Tasks one workspace may hold: every change scans them all.
pub const MAX_TASKS: usize = 1_000;

/// Seconds since the Unix epoch on `clock`'s wall (0 before it).
fn epoch_seconds(clock: &dyn Clock) -> u64 {
    clock
        .wall()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Why a task file was skipped.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error(transparent)]
    Read(#[from] PathError),
    #[error("not a task record: {0}")]
    Json(#[from] serde_json::Error),
    #[error("it holds task {found}, not the task its name says")]
    WrongId { found: TaskId },
    #[error("it is {0}, not a regular file")]
    NotAFile(FileKind),
}

/// Which text field of a task a check is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Subject,
    Description,
    Owner,
}

impl std::fmt::Display for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Subject => "subject",
            Self::Description => "description",
            Self::Owner => "owner",
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error("there is no task {0}; task_list shows the ids")]
    NotFound(TaskId),
    #[error("task {0} cannot be a blocker: there is no such task")]
    UnknownBlocker(TaskId),
    #[error("that dependency would make a cycle: {path}", path = graph::render_path(.0))]
    Cycle(Vec<TaskId>),
    #[error("task {id} cannot be {status} yet: it is blocked by {by}", by = ids(.by))]
    Blocked {
        id: TaskId,
        status: Status,
        by: Vec<TaskId>,
    },
    #[error("task {id} is not blocked by task {blocker}")]
    NotBlockedBy { id: TaskId, blocker: TaskId },
    #[error("the {0} must not be blank")]
    Blank(Field),
    #[error("the {field} is too long (over {limit})")]
    TooLong { field: Field, limit: String },
    #[error("the {0} must be one line without control characters")]
    NotOneLine(Field),
    #[error("a task may wait for at most {MAX_BLOCKED_BY} others")]
    TooManyBlockers,
    #[error("the task list is full ({MAX_TASKS} tasks)")]
    Full,
    #[error("task {id} cannot be read: {source}")]
    Unreadable {
        id: TaskId,
        #[source]
        source: FileError,
    },
    #[error("the task folder is not usable: {0}")]
    Storage(#[from] PathError),
    #[error("task {id} cannot be written: {source}")]
    Encode {
        id: TaskId,
        #[source]
        source: serde_json::Error,
    },
}

impl TaskError {
    /// Whether the caller asked for something the graph refuses (a bad argument), as opposed
    /// to the store failing.
    pub fn is_refusal(&self) -> bool {
        !matches!(
            self,
            Self::Unreadable { .. } | Self::Storage(_) | Self::Encode { .. }
        )
    }
}

fn ids(ids: &[TaskId]) -> String {
    ids.iter()
        .map(|id| format!("#{id}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A new task's fields.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NewTask {
    pub subject: String,
    pub description: String,
    pub blocked_by: Vec<TaskId>,
}

/// A change to a task; `None` / empty leaves that part as it is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TaskChange {
    pub status: Option<Status>,
    /// `Some("")` clears the owner.
    pub owner: Option<String>,
    pub add_blocked_by: Vec<TaskId>,
    pub remove_blocked_by: Vec<TaskId>,
}

/// A task after a change, and the tasks the change made ready (completing a blocker, or
/// removing an edge, unblocks them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Updated {
    pub task: Task,
    pub now_ready: Vec<TaskId>,
}

/// What a scan found: the readable tasks, the skipped files, and the next free id.
#[derive(Debug, Default)]
pub struct Snapshot {
    pub tasks: Tasks,
    pub skipped: Vec<(TaskId, FileError)>,
    pub next_id: TaskId,
}

pub struct TaskStore {
    workspace: Workspace,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for TaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskStore")
            .field("workspace", &self.workspace)
            .finish_non_exhaustive()
    }
}

fn check_text(field: Field, text: &str, limit_chars: usize) -> Result<String, TaskError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(TaskError::Blank(field));
    }
    if text.chars().count() > limit_chars {
        return Err(TaskError::TooLong {
            field,
            limit: format!("{limit_chars} characters"),
        });
    }
    // One line: the subject and owner go into the system prompt's `## tasks`, where a line
    // break could start a section of its own.
    if text.chars().any(char::is_control) {
        return Err(TaskError::NotOneLine(field));
    }
    Ok(text.to_string())
}

fn check_description(text: &str) -> Result<String, TaskError> {
    let text = text.trim();
    if text.len() > MAX_DESCRIPTION_BYTES {
        return Err(TaskError::TooLong {
            field: Field::Description,
            limit: format!("{MAX_DESCRIPTION_BYTES} bytes"),
        });
    }
    Ok(text.to_string())
}

/// `7.json` -> 7; anything else (the lock, temp files, `07.json`) is not a task file.
fn file_id(name: &str) -> Option<TaskId> {
    let digits = name.strip_suffix(".json")?;
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

impl TaskStore {
    pub fn open(workspace: &Workspace) -> Self {
        Self {
            workspace: workspace.clone(),
            clock: Arc::new(SystemClock),
        }
    }

    /// The clock `created` and `updated` come from (its wall time, in whole seconds).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The folder, checked by the boundary on every use: `.tasks` may not be (or become) a
    /// symlink to outside.
    fn dir(&self) -> Result<Inside, TaskError> {
        Ok(self.workspace.inside(TASKS_DIR)?)
    }

    fn task_path(dir: &Inside, id: TaskId) -> Result<Inside, TaskError> {
        dir.child(&format!("{id}.json"))
            .ok_or(TaskError::NotFound(id))
    }

    /// Every task as it is on disk now. Reads take no lock: each file is replaced whole, so
    /// a reader sees every task either before or after a change.
    pub fn snapshot(&self) -> Result<Snapshot, TaskError> {
        let dir = self.dir()?;
        match self.workspace.kind(&dir)? {
            None => Ok(Snapshot {
                next_id: 1,
                ..Snapshot::default()
            }),
            Some(FileKind::Directory) => self.scan(&dir),
            Some(kind) => Err(TaskError::Storage(PathError::NotAFile {
                path: TASKS_DIR.to_string(),
                kind,
            })),
        }
    }

    /// The readable tasks; skipped files are logged.
    pub fn load(&self) -> Result<Tasks, TaskError> {
        let snapshot = self.snapshot()?;
        for (id, err) in &snapshot.skipped {
            tracing::warn!("tasks: skipping {TASKS_DIR}/{id}.json: {err}");
        }
        Ok(snapshot.tasks)
    }

    /// One task; a file that cannot be read says why.
    pub fn get(&self, id: TaskId) -> Result<Task, TaskError> {
        let mut snapshot = self.snapshot()?;
        if let Some(task) = snapshot.tasks.remove(&id) {
            return Ok(task);
        }
        match snapshot
            .skipped
            .into_iter()
            .find(|(skipped, _)| *skipped == id)
        {
            Some((id, source)) => Err(TaskError::Unreadable { id, source }),
            None => Err(TaskError::NotFound(id)),
        }
    }

    fn scan(&self, dir: &Inside) -> Result<Snapshot, TaskError> {
        let mut snapshot = Snapshot {
            next_id: 1,
            ..Snapshot::default()
        };
        for entry in self.workspace.list_dir(dir)? {
            let Some(id) = file_id(&entry.name) else {
                continue;
            };
            snapshot.next_id = snapshot.next_id.max(id.saturating_add(1));
            match self.read_task(dir, id, entry.kind) {
                Ok(task) => {
                    snapshot.tasks.insert(id, task);
                }
                Err(err) => snapshot.skipped.push((id, err)),
            }
        }
        Ok(snapshot)
    }

    fn read_task(&self, dir: &Inside, id: TaskId, kind: FileKind) -> Result<Task, FileError> {
        // Decided from the listing, before any open: a FIFO or a symlink is never opened.
        if kind != FileKind::File {
            return Err(FileError::NotAFile(kind));
        }
        let path = dir
            .child(&format!("{id}.json"))
            .ok_or(FileError::WrongId { found: id })?;
        let text = self.workspace.read_to_string(&path, READ_LIMIT)?;
        let task: Task = serde_json::from_str(&text)?;
        if task.id != id {
            return Err(FileError::WrongId { found: task.id });
        }
        Ok(task)
    }

    /// Runs `f` on a fresh scan while holding the folder's lock. Temp files a killed writer
    /// left are removed first: holding the lock means no write is under way.
    fn locked<T>(
        &self,
        f: impl FnOnce(&Inside, Snapshot) -> Result<T, TaskError>,
    ) -> Result<T, TaskError> {
        let dir = self.dir()?;
        self.workspace.create_dir_all(&dir)?;
        let dir = self.dir()?; // re-check: the folder must still resolve inside
        let lock_path = dir.child(LOCK_FILE).ok_or_else(|| PathError::Escape {
            path: format!("{TASKS_DIR}/{LOCK_FILE}"),
        })?;
        let _lock = self.workspace.lock_exclusive(&lock_path)?;
        if let Err(err) = self.workspace.remove_leftovers(&dir) {
            tracing::warn!("tasks: cannot remove leftover temp files: {err}");
        }
        let snapshot = self.scan(&dir)?;
        f(&dir, snapshot)
    }

    fn write(&self, dir: &Inside, task: &Task, existing: Existing) -> Result<(), TaskError> {
        let mut text = serde_json::to_string_pretty(task).map_err(|source| TaskError::Encode {
            id: task.id,
            source,
        })?;
        text.push('\n');
        let path = Self::task_path(dir, task.id)?;
        self.workspace
            .write_atomic(&path, text.as_bytes(), existing)?;
        Ok(())
    }

    /// Adds a task with the next id. Every blocker must exist; a new task has no dependents,
    /// so its edges cannot close a cycle.
    pub fn create(&self, new: NewTask) -> Result<Task, TaskError> {
        let subject = check_text(Field::Subject, &new.subject, MAX_SUBJECT_CHARS)?;
        let description = check_description(&new.description)?;
        let blocked_by = dedup(new.blocked_by);
        if blocked_by.len() > MAX_BLOCKED_BY {
            return Err(TaskError::TooManyBlockers);
        }
        self.locked(|dir, snapshot| {
            if snapshot.tasks.len() + snapshot.skipped.len() >= MAX_TASKS {
                return Err(TaskError::Full);
            }
            if let Some(&unknown) = blocked_by
                .iter()
                .find(|id| !snapshot.tasks.contains_key(id))
            {
                return Err(TaskError::UnknownBlocker(unknown));
            }
            let now = epoch_seconds(self.clock.as_ref());
            let task = Task {
                id: snapshot.next_id,
                subject,
                description,
                status: Status::Pending,
                owner: None,
                blocked_by,
                created: now,
                updated: now,
            };
            self.write(dir, &task, Existing::Refuse)?;
            Ok(task)
        })
    }

    /// Changes one task. Edges are removed, then added (each checked for a cycle against the
    /// graph as it is becoming); a task still blocked cannot start or complete.
    pub fn update(&self, id: TaskId, change: TaskChange) -> Result<Updated, TaskError> {
        let owner = match change.owner.as_deref().map(str::trim) {
            None => None,
            Some("") => Some(None),
            Some(owner) => Some(Some(check_text(Field::Owner, owner, MAX_OWNER_CHARS)?)),
        };
        self.locked(|dir, mut snapshot| {
            let mut task = snapshot
                .tasks
                .get(&id)
                .cloned()
                .ok_or(TaskError::NotFound(id))?;
            let ready_before = ready_around(&snapshot.tasks, id);
            for blocker in &change.remove_blocked_by {
                let Some(at) = task.blocked_by.iter().position(|b| b == blocker) else {
                    return Err(TaskError::NotBlockedBy {
                        id,
                        blocker: *blocker,
                    });
                };
                task.blocked_by.remove(at);
            }
            for blocker in dedup(change.add_blocked_by) {
                if task.blocked_by.contains(&blocker) {
                    continue;
                }
                if !snapshot.tasks.contains_key(&blocker) {
                    return Err(TaskError::UnknownBlocker(blocker));
                }
                snapshot.tasks.insert(id, task.clone());
                if let Some(cycle) = graph::cycle_through(&snapshot.tasks, id, blocker) {
                    return Err(TaskError::Cycle(cycle));
                }
                task.blocked_by.push(blocker);
            }
            if task.blocked_by.len() > MAX_BLOCKED_BY {
                return Err(TaskError::TooManyBlockers);
            }
            if let Some(status) = change.status {
                let open = graph::open_blockers(&snapshot.tasks, &task);
                if matches!(status, Status::InProgress | Status::Completed) && !open.is_empty() {
                    return Err(TaskError::Blocked {
                        id,
                        status,
                        by: open,
                    });
                }
                task.status = status;
            }
            if let Some(owner) = owner {
                task.owner = owner;
            }
            task.updated = epoch_seconds(self.clock.as_ref());
            self.write(dir, &task, Existing::Replace)?;
            snapshot.tasks.insert(id, task.clone());
            let now_ready = ready_around(&snapshot.tasks, id)
                .into_iter()
                .filter(|d| !ready_before.contains(d))
                .collect();
            Ok(Updated { task, now_ready })
        })
    }
}

/// Which of `id` and its dependents are ready, in id order.
fn ready_around(tasks: &Tasks, id: TaskId) -> Vec<TaskId> {
    let mut around = graph::dependents(tasks, id);
    around.push(id);
    around.sort_unstable();
    around
        .into_iter()
        .filter(|d| tasks.get(d).is_some_and(|t| graph::is_ready(tasks, t)))
        .collect()
}

/// Ids in first-seen order, each once.
fn dedup(ids: Vec<TaskId>) -> Vec<TaskId> {
    let mut seen = Vec::with_capacity(ids.len());
    for id in ids {
        if !seen.contains(&id) {
            seen.push(id);
        }
    }
    seen
}
