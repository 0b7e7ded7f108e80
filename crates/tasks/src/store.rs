//! `TaskStore`: the `.tasks/` folder of a workspace.
//!
//! ```text
//! .tasks/
//!   1.json     one task, pretty JSON (see `Task`)
//!   2.json
//!   .lock      advisory lock shared by every process writing here; its first bytes count
//!              the changes made under it
//! ```
//!
//! There is no index file: the folder is the list, so there is nothing to keep in step with
//! the files. Every change writes exactly ONE file through the workspace's
//! [`agent_workspace::StateDir`] (temp file, fsync, rename; create-only for a new task) while
//! holding the lock: a crash leaves the old file or the new one, never half of one, and a
//! leftover temp file is ignored by the scan and removed by the next locked change. Edges
//! live on the blocked task only (`blocked_by`); "completing unblocks its dependents" is
//! computed, so it needs no second write either.
//!
//! What is read back is checked by the rules of a new task (`check.rs`): a planted file with
//! a forged heading, escape codes or an oversized subject is skipped with a warning, ids are
//! bounded (a planted `18446744073709551615.json` is no task at all), and at most
//! [`MAX_TASKS`] files are read.
//!
//! The scan is cached in memory (`view.rs`) and used again while the folder's listing (names,
//! kinds, inode numbers) and the lock's change counter are what they were: a request with an
//! unchanged board reads no task file, and a create reads none either.
//!
//! The next id is one past the largest `<id>.json` name, under the lock: two processes
//! creating at once get different ids, and a file that cannot be read still keeps its id
//! from being handed out again.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::UNIX_EPOCH;

use agent_workspace::{Clock, FileKind, PathError, StateDir, StoreError, SystemClock, Workspace};

use crate::check::{check_description, check_text};
use crate::graph::{self, Tasks};
use crate::model::{MAX_BLOCKED_BY, MAX_OWNER_CHARS, MAX_SUBJECT_CHARS, Status, Task, TaskId};
use crate::view::View;

/// The folder of task files, at the top of the workspace where people see it.
pub const TASKS_DIR: &str = ".tasks";
/// The most of one task file that is read; a valid one is far smaller (the bounds of
/// `model.rs`, JSON-escaped).
pub const READ_LIMIT: u64 = 64 * 1024;
/// Tasks one workspace may hold; on load, files past it (by id) are skipped.
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
    /// The boundary or the file system refused the read.
    #[error(transparent)]
    Read(#[from] PathError),
    /// Not JSON of a task's shape.
    #[error("not a task record: {0}")]
    Json(#[from] serde_json::Error),
    /// `3.json` holding task 4: a copied or planted file.
    #[error("it holds task {found}, not the task its name says")]
    WrongId {
        /// The id inside.
        found: TaskId,
    },
    /// A folder, a symlink, a FIFO, … named like a task.
    #[error("it is {0}, not a regular file")]
    NotAFile(FileKind),
    /// The record parses but breaks a rule a new task is held to (`check.rs`).
    #[error("it breaks a rule of tasks: {0}")]
    Invalid(Box<TaskError>),
    /// More than [`MAX_TASKS`] task files: the ones with the highest ids are not read.
    #[error("the folder holds more than {MAX_TASKS} task files; this one is past them")]
    OverLimit,
}

/// Which text field of a task a check is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// [`Task::subject`].
    Subject,
    /// [`Task::description`].
    Description,
    /// [`Task::owner`].
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

/// Why a task could not be created, changed or read. Its text is the tool result the model
/// reads, so each says what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// No task has this id.
    #[error("there is no task {0}; task_list shows the ids")]
    NotFound(TaskId),
    /// A blocker named does not exist.
    #[error("task {0} cannot be a blocker: there is no such task")]
    UnknownBlocker(TaskId),
    /// The new edge would close a cycle (the path, in order).
    #[error("that dependency would make a cycle: {path}", path = graph::render_path(.0))]
    Cycle(Vec<TaskId>),
    /// A task cannot start (or complete) while a blocker is open.
    #[error("task {id} cannot be {status} yet: it is blocked by {by}", by = ids(.by))]
    Blocked {
        /// The task.
        id: TaskId,
        /// The status asked for.
        status: Status,
        /// Its open blockers.
        by: Vec<TaskId>,
    },
    /// An edge to remove is not there.
    #[error("task {id} is not blocked by task {blocker}")]
    NotBlockedBy {
        /// The task.
        id: TaskId,
        /// The blocker named.
        blocker: TaskId,
    },
    /// A text field is empty or only spaces.
    #[error("the {0} must not be blank")]
    Blank(Field),
    /// A text field is over its bound (`model.rs`).
    #[error("the {field} is too long (over {limit})")]
    TooLong {
        /// The field.
        field: Field,
        /// The bound, with its unit ("200 characters").
        limit: String,
    },
    /// A one-line field holds a line break or a control character (it would forge lines of
    /// the prompt's `## tasks`).
    #[error("the {0} must be one line without control characters")]
    NotOneLine(Field),
    /// A field holds a character that reorders or hides text on screen.
    #[error(
        "the {field} holds the hidden character U+{code:04X} (bidi or invisible): write it without"
    )]
    HiddenCharacter {
        /// The field.
        field: Field,
        /// The character's code point.
        code: u32,
    },
    /// A field starts or ends with whitespace.
    #[error("the {0} has spaces around it")]
    NotTrimmed(Field),
    /// A stored blocker that cannot be one (read back from a file someone edited).
    #[error("#{0} cannot be a blocker here (out of range, the task itself, or listed twice)")]
    BadEdge(TaskId),
    /// Every id up to the store's bound is taken.
    #[error("no task id is left ({max} is the largest)", max = agent_workspace::store::MAX_ID)]
    NoFreeId,
    /// Over [`MAX_BLOCKED_BY`] blockers.
    #[error("a task may wait for at most {MAX_BLOCKED_BY} others")]
    TooManyBlockers,
    /// The workspace holds [`MAX_TASKS`] tasks already.
    #[error("the task list is full ({MAX_TASKS} tasks)")]
    Full,
    /// The task's file exists but was skipped when read.
    #[error("task {id} cannot be read: {source}")]
    Unreadable {
        /// The task.
        id: TaskId,
        /// Why its file was skipped.
        #[source]
        source: Arc<FileError>,
    },
    /// The task folder or its lock cannot be used.
    #[error("the task folder is not usable: {0}")]
    Storage(#[from] PathError),
    /// The one file of a change could not be written (nothing else was).
    #[error("task {id} cannot be written: {source}")]
    Write {
        /// The task.
        id: TaskId,
        /// What the store said.
        #[source]
        source: StoreError,
    },
}

impl TaskError {
    /// Whether the caller asked for something the graph refuses (a bad argument), as opposed
    /// to the store failing.
    pub fn is_refusal(&self) -> bool {
        !matches!(
            self,
            Self::Unreadable { .. } | Self::Storage(_) | Self::Write { .. } | Self::NoFreeId
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
    /// See [`Task::subject`].
    pub subject: String,
    /// See [`Task::description`].
    pub description: String,
    /// Tasks that must be done first; each must exist.
    pub blocked_by: Vec<TaskId>,
}

/// A change to a task; `None` / empty leaves that part as it is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TaskChange {
    /// The new status (checked against the blockers).
    pub status: Option<Status>,
    /// `Some("")` clears the owner.
    pub owner: Option<String>,
    /// Blockers to add (no cycle may result).
    pub add_blocked_by: Vec<TaskId>,
    /// Blockers to remove (each must be there).
    pub remove_blocked_by: Vec<TaskId>,
}

/// A task after a change, and the tasks the change made ready (completing a blocker, or
/// removing an edge, unblocks them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Updated {
    /// The task as written.
    pub task: Task,
    /// Tasks whose last open blocker this change closed.
    pub now_ready: Vec<TaskId>,
}

/// What a scan found: the readable tasks, the skipped files, and the next free id (`None`
/// when every id is taken).
#[derive(Debug, Default, Clone)]
pub struct Snapshot {
    /// The tasks that passed every check, by id.
    pub tasks: Tasks,
    /// The files that did not, with why (shown once as a warning).
    pub skipped: Vec<(TaskId, Arc<FileError>)>,
    /// The id a create would take now.
    pub next_id: Option<TaskId>,
}

/// The tasks of one workspace (chapter 12), shared by every agent and process working there.
///
/// ```
/// use agent_tasks::{NewTask, Status, TaskChange, TaskError, TaskStore};
/// use agent_workspace::Workspace;
///
/// let dir = tempfile::tempdir().unwrap();
/// let store = TaskStore::open(&Workspace::new(dir.path()).unwrap());
/// let schema = store.create(NewTask { subject: "Write the schema".into(), ..NewTask::default() }).unwrap();
/// let api = store
///     .create(NewTask { subject: "Write the API".into(), blocked_by: vec![schema.id], ..NewTask::default() })
///     .unwrap();
///
/// // The API cannot start before the schema is done.
/// let start = TaskChange { status: Some(Status::InProgress), ..TaskChange::default() };
/// let refused = store.update(api.id, start.clone()).unwrap_err();
/// assert_eq!(refused.to_string(), "task 2 cannot be in_progress yet: it is blocked by #1");
///
/// let done = TaskChange { status: Some(Status::Completed), ..TaskChange::default() };
/// assert_eq!(store.update(schema.id, done).unwrap().now_ready, vec![api.id]);
/// assert_eq!(store.update(api.id, start).unwrap().task.status, Status::InProgress);
/// ```
pub struct TaskStore {
    pub(crate) state: StateDir,
    clock: Arc<dyn Clock>,
    /// The last scan and what the folder looked like then.
    pub(crate) view: Mutex<Option<View>>,
}

impl std::fmt::Debug for TaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskStore")
            .field("folder", &self.state.name())
            .finish_non_exhaustive()
    }
}

impl TaskStore {
    /// The store of `workspace`'s [`TASKS_DIR`], on the system clock; nothing is read or
    /// created until it is used.
    pub fn open(workspace: &Workspace) -> Self {
        Self {
            state: StateDir::new(workspace, TASKS_DIR),
            clock: Arc::new(SystemClock),
            view: Mutex::new(None),
        }
    }

    /// The clock `created` and `updated` come from (its wall time, in whole seconds).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    pub(crate) fn view_slot(&self) -> std::sync::MutexGuard<'_, Option<View>> {
        // The slot is replaced whole or taken; a panic cannot leave it half-written.
        self.view.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every task as it is on disk now (from the cache while the folder is unchanged). Reads
    /// take no lock: each file is replaced whole, so a reader sees every task either before or
    /// after a change.
    pub fn snapshot(&self) -> Result<Arc<Snapshot>, TaskError> {
        self.current()
    }

    /// The readable tasks (skipped files are logged when they are scanned).
    pub fn load(&self) -> Result<Tasks, TaskError> {
        Ok(self.snapshot()?.tasks.clone())
    }

    /// One task; a file that cannot be read says why.
    pub fn get(&self, id: TaskId) -> Result<Task, TaskError> {
        let snapshot = self.snapshot()?;
        if let Some(task) = snapshot.tasks.get(&id) {
            return Ok(task.clone());
        }
        match snapshot.skipped.iter().find(|(skipped, _)| *skipped == id) {
            Some((id, source)) => Err(TaskError::Unreadable {
                id: *id,
                source: source.clone(),
            }),
            None => Err(TaskError::NotFound(id)),
        }
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
        self.change(|snapshot| {
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
                id: snapshot.next_id.ok_or(TaskError::NoFreeId)?,
                subject,
                description,
                status: Status::Pending,
                owner: None,
                blocked_by,
                created: now,
                updated: now,
            };
            Ok((task.clone(), task))
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
        self.change(|snapshot| {
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
            let mut tasks = snapshot.tasks.clone();
            for blocker in dedup(change.add_blocked_by) {
                if task.blocked_by.contains(&blocker) {
                    continue;
                }
                if !tasks.contains_key(&blocker) {
                    return Err(TaskError::UnknownBlocker(blocker));
                }
                tasks.insert(id, task.clone());
                if let Some(cycle) = graph::cycle_through(&tasks, id, blocker) {
                    return Err(TaskError::Cycle(cycle));
                }
                task.blocked_by.push(blocker);
            }
            if task.blocked_by.len() > MAX_BLOCKED_BY {
                return Err(TaskError::TooManyBlockers);
            }
            if let Some(status) = change.status {
                let open = graph::open_blockers(&tasks, &task);
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
            tasks.insert(id, task.clone());
            let now_ready = ready_around(&tasks, id)
                .into_iter()
                .filter(|d| !ready_before.contains(d))
                .collect();
            Ok((task.clone(), Updated { task, now_ready }))
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
