//! [`Binding`]: which task a worktree belongs to and where it stands, one JSON file per task
//! in a state folder, and [`Transition`]s appended to an audit log beside them.

use std::fmt;
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use agent_board::TaskId;
use agent_workspace::store::{StateDir, StateLock, StoreError};
use agent_workspace::{Clock, Workspace};
use serde::{Deserialize, Serialize};

use crate::name::WorktreeName;

/// The bindings' folder, workspace-relative.
pub const BINDINGS_DIR: &str = ".agent_tutorial/worktree-bindings";

/// The audit log's file name in [`BINDINGS_DIR`]: one JSON [`Transition`] a line.
pub const AUDIT_FILE: &str = "audit.jsonl";

/// The most bytes one binding file may have: a few paths and a git message.
pub const MAX_BINDING_BYTES: u64 = 64 * 1024;

/// The most bytes of the audit log [`Bindings::audit`] reads (the oldest beyond are skipped).
pub const MAX_AUDIT_BYTES: u64 = 4 * 1024 * 1024;

/// The most paths a [`Review`] names of each kind; the count says how many there were.
pub const MAX_REVIEW_PATHS: usize = 10;

/// A worktree bound to a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    /// The task it belongs to.
    pub task: TaskId,
    /// Its name: the folder under the worktrees folder, and the branch `wt/<name>`.
    pub name: WorktreeName,
    /// The ref it was created from, and that its branch must be contained in to be removed.
    pub base: String,
    /// Where it stands.
    pub state: BindingState,
}

/// Where a binding stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum BindingState {
    /// The intent is recorded; the worktree is being added (or the process died while it was).
    Creating,
    /// Added and verified: the task's work happens there.
    Active,
    /// The task is done and the worktree stays for the user to look at.
    Kept,
    /// Removal found something that would be lost; the folder and the branch stay.
    NeedsReview {
        /// What was found.
        review: Review,
    },
    /// The folder and the branch are gone.
    Removed,
    /// The worktree could not be added; nothing is bound.
    Failed {
        /// Git's message, or what the check found.
        message: String,
    },
}

impl BindingState {
    /// The state's stored name.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Creating => "creating",
            Self::Active => "active",
            Self::Kept => "kept",
            Self::NeedsReview { .. } => "needs_review",
            Self::Removed => "removed",
            Self::Failed { .. } => "failed",
        }
    }

    /// Whether the binding holds its name (and a folder or a branch may exist): everything
    /// but removed and failed.
    pub fn holds_name(&self) -> bool {
        !matches!(self, Self::Removed | Self::Failed { .. })
    }
}

impl fmt::Display for BindingState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a worktree was not removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Review {
    /// Files that would be lost: tracked changes, untracked files, ignored files (a `.env`,
    /// build output: `git worktree remove` deletes those without a word).
    Files {
        /// Tracked files changed, staged or not (at most [`MAX_REVIEW_PATHS`]).
        changed: Vec<String>,
        /// Untracked files (at most [`MAX_REVIEW_PATHS`]).
        untracked: Vec<String>,
        /// Ignored files (at most [`MAX_REVIEW_PATHS`]).
        ignored: Vec<String>,
        /// How many paths there were in all.
        total: usize,
    },
    /// The branch has commits the base does not contain.
    NotMerged {
        /// The branch.
        branch: String,
        /// The ref it was checked against.
        base: String,
    },
    /// The worktree's folder is gone (deleted by hand); the branch stays.
    Missing,
    /// Git refused a step of the removal; its message says why.
    GitRefused {
        /// Git's message.
        message: String,
    },
}

impl fmt::Display for Review {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Files {
                changed,
                untracked,
                ignored,
                total,
            } => {
                write!(f, "{total} file(s) would be lost")?;
                for (kind, paths) in [
                    ("changed", changed),
                    ("untracked", untracked),
                    ("ignored", ignored),
                ] {
                    if !paths.is_empty() {
                        write!(f, "; {kind}: {}", paths.join(", "))?;
                    }
                }
                Ok(())
            }
            Self::NotMerged { branch, base } => {
                write!(f, "{branch} has commits that {base} does not contain")
            }
            Self::Missing => f.write_str("the worktree's folder is gone; its branch is kept"),
            Self::GitRefused { message } => write!(f, "git refused: {message}"),
        }
    }
}

/// One change of a binding's state, as the audit log keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transition {
    /// Milliseconds since the Unix epoch, on the harness's clock.
    pub at_ms: u64,
    /// The task.
    pub task: TaskId,
    /// The worktree's name.
    pub name: WorktreeName,
    /// The state before (`None`: the binding is new).
    pub from: Option<String>,
    /// The state after, whole.
    pub to: BindingState,
}

/// Why a binding could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum BindingError {
    /// The state folder or a file in it was refused or unreadable.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The boundary refused the path.
    #[error(transparent)]
    Path(#[from] agent_workspace::PathError),
    /// The audit log could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file, workspace-relative.
        path: String,
        /// What the read said.
        #[source]
        source: std::io::Error,
    },
}

/// The bindings of one repository.
#[derive(Debug, Clone)]
pub struct Bindings {
    state: StateDir,
    clock: Arc<dyn Clock>,
}

impl Bindings {
    /// The bindings in `workspace`'s [`BINDINGS_DIR`], timed by `clock`.
    pub fn new(workspace: &Workspace, clock: Arc<dyn Clock>) -> Self {
        Self {
            state: StateDir::new(workspace, BINDINGS_DIR),
            clock,
        }
    }

    /// The binding of `task`, if there is one.
    pub fn get(&self, task: TaskId) -> Result<Option<Binding>, BindingError> {
        Ok(self.state.read_json(&file_name(task), MAX_BINDING_BYTES)?)
    }

    /// Every binding, by task. A file that is not a binding is skipped with a warning.
    pub fn all(&self) -> Result<Vec<Binding>, BindingError> {
        let mut found = Vec::new();
        for entry in self.state.list()? {
            let name = entry.name.as_str();
            if name.strip_suffix(".json").and_then(parse_task).is_none() {
                continue;
            }
            match self.state.read_json::<Binding>(name, MAX_BINDING_BYTES) {
                Ok(Some(binding)) => found.push(binding),
                Ok(None) => {}
                Err(err) => tracing::warn!("skipping a worktree binding: {err}"),
            }
        }
        found.sort_by_key(|b| b.task);
        Ok(found)
    }

    /// Runs `change` on every binding under the folder's lock, so two processes cannot both
    /// bind one name or one task.
    pub(crate) fn locked<T>(
        &self,
        change: impl FnOnce(&Locked<'_>) -> Result<T, crate::WorktreeError>,
    ) -> Result<T, crate::WorktreeError> {
        let folder = self.state.folder().map_err(BindingError::from)?;
        self.state
            .workspace()
            .create_dir_all(&folder)
            .map_err(BindingError::from)?;
        let lock = self.state.lock().map_err(BindingError::from)?;
        change(&Locked {
            lock,
            bindings: self,
        })
    }

    /// Moves `task`'s binding to `to` and records the transition.
    pub(crate) fn set(
        &self,
        binding: &Binding,
        to: BindingState,
    ) -> Result<Binding, crate::WorktreeError> {
        self.locked(|locked| locked.write(binding, to))
    }

    /// The audit log, oldest first: at most [`MAX_AUDIT_BYTES`] of its newest lines; a line
    /// that is not a transition is skipped with a warning.
    pub fn audit(&self) -> Result<Vec<Transition>, BindingError> {
        let file = self.state.file(AUDIT_FILE)?;
        let workspace = self.state.workspace();
        if workspace.kind(&file)?.is_none() {
            return Ok(Vec::new());
        }
        let regular = workspace.open_regular(&file)?;
        let start = regular.len().saturating_sub(MAX_AUDIT_BYTES);
        let bytes = regular
            .read_at(
                start,
                usize::try_from(regular.len() - start).unwrap_or(usize::MAX),
            )
            .map_err(|source| BindingError::Read {
                path: file.to_string(),
                source,
            })?;
        let text = String::from_utf8_lossy(&bytes);
        let mut lines = text.lines();
        if start > 0 {
            // The first line read may be the end of a longer one.
            lines.next();
        }
        Ok(lines
            .filter(|line| !line.trim().is_empty())
            .filter_map(|line| match serde_json::from_str(line) {
                Ok(transition) => Some(transition),
                Err(err) => {
                    tracing::warn!("skipping a line of the worktree audit log: {err}");
                    None
                }
            })
            .collect())
    }

    fn now_ms(&self) -> u64 {
        self.clock
            .wall()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

/// The bindings with their folder's lock held.
pub(crate) struct Locked<'a> {
    lock: StateLock<'a>,
    bindings: &'a Bindings,
}

impl Locked<'_> {
    /// Every binding (as [`Bindings::all`]).
    pub(crate) fn all(&self) -> Result<Vec<Binding>, BindingError> {
        self.bindings.all()
    }

    /// The binding of `task`.
    pub(crate) fn get(&self, task: TaskId) -> Result<Option<Binding>, BindingError> {
        Ok(self.lock.read_json(&file_name(task), MAX_BINDING_BYTES)?)
    }

    /// Writes `binding` in state `to` (the transition goes to the audit log first: a record
    /// that says more than the log is never left behind).
    pub(crate) fn write(
        &self,
        binding: &Binding,
        to: BindingState,
    ) -> Result<Binding, crate::WorktreeError> {
        let before = self.get(binding.task)?;
        let next = Binding {
            state: to,
            ..binding.clone()
        };
        let transition = Transition {
            at_ms: self.bindings.now_ms(),
            task: next.task,
            name: next.name.clone(),
            from: before
                .filter(|b| b.name == next.name)
                .map(|b| b.state.as_str().to_string()),
            to: next.state.clone(),
        };
        let mut line = serde_json::to_vec(&transition).map_err(|source| {
            BindingError::from(StoreError::Encode {
                path: AUDIT_FILE.to_string(),
                source,
            })
        })?;
        line.push(b'\n');
        let audit = self.lock.file(AUDIT_FILE).map_err(BindingError::from)?;
        self.lock
            .workspace()
            .append(&audit, &line)
            .map_err(BindingError::from)?;
        self.lock
            .replace_json(&file_name(next.task), &next)
            .map_err(BindingError::from)?;
        Ok(next)
    }
}

fn file_name(task: TaskId) -> String {
    format!("{}.json", task.0)
}

fn parse_task(digits: &str) -> Option<TaskId> {
    agent_workspace::store::parse_id(digits)
        .and_then(|id| i64::try_from(id).ok())
        .map(TaskId)
}
