//! [`WorktreeError`] and [`RouteError`]: every way an operation or a routing is refused.

use agent_board::TaskId;

use crate::binding::BindingError;
use crate::git::GitError;
use crate::name::WorktreeName;

/// Why a worktree operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    /// A git command could not run or failed where no binding records it.
    #[error(transparent)]
    Git(#[from] GitError),
    /// The bindings could not be read or written.
    #[error(transparent)]
    Bindings(#[from] BindingError),
    /// The workspace is not the top of a repository of its own: no `.git` folder at its root,
    /// a `.git` that is a file or a link (its repository is elsewhere), or a workspace inside
    /// another repository's tree.
    #[error("worktrees need the workspace to be a git repository's top folder: {why}")]
    NotARepository {
        /// What was found.
        why: String,
    },
    /// The base ref is not a commit of this repository, or looks like an option.
    #[error("`{given}` is not a branch, tag or commit of this repository")]
    BadBase {
        /// The ref as given (cut to 100 characters).
        given: String,
    },
    /// The task has a worktree already.
    #[error("task {task} already has the worktree `{name}` ({state})")]
    AlreadyBound {
        /// The task.
        task: TaskId,
        /// Its worktree.
        name: WorktreeName,
        /// That binding's state.
        state: String,
    },
    /// Another task's worktree has the name.
    #[error("the worktree name `{name}` belongs to task {task}")]
    NameTaken {
        /// The name.
        name: WorktreeName,
        /// The task that has it.
        task: TaskId,
    },
    /// The task has no worktree.
    #[error("task {task} has no worktree")]
    NotBound {
        /// The task.
        task: TaskId,
    },
    /// The operation needs another state.
    #[error("task {task}'s worktree is {state}; {action} needs it {needs}")]
    WrongState {
        /// The task.
        task: TaskId,
        /// The binding's state.
        state: String,
        /// What was asked.
        action: &'static str,
        /// The states it accepts.
        needs: &'static str,
    },
    /// Removal was asked while the task is still pending or in progress.
    #[error("task {task} is {status}: a worktree is removed only after its task is done")]
    TaskNotFinished {
        /// The task.
        task: TaskId,
        /// Its status.
        status: &'static str,
    },
    /// The worktree could not be added; the binding records it as failed.
    #[error("the worktree `{name}` for task {task} could not be created: {message}")]
    CreateFailed {
        /// The task.
        task: TaskId,
        /// The name.
        name: WorktreeName,
        /// Git's message or what the check found.
        message: String,
    },
}

/// Why a task's work cannot be routed to its worktree. Every case fails closed: the caller
/// refuses the call, never falls back to the repository's root.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    /// The task has no worktree.
    #[error("task {task} has no worktree")]
    Unknown {
        /// The task.
        task: TaskId,
    },
    /// Its binding is not active (being created, kept, removed, failed, under review).
    #[error("task {task}'s worktree is {state}, not active")]
    NotActive {
        /// The task.
        task: TaskId,
        /// The binding's state.
        state: String,
    },
    /// The folder is gone, or is not the worktree git recorded for it.
    #[error("task {task}'s worktree cannot be used: {why}")]
    Stale {
        /// The task.
        task: TaskId,
        /// What was found.
        why: String,
    },
}
