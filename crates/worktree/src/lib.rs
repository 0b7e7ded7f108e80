//! `agent-worktree`: chapter 18's git layer — each claimed task in its own `git worktree`,
//! and nothing ever lost when one is removed.
//!
//! - [`Git`] runs `git` through the workspace's process layer with an argument list (never a
//!   shell), the repository's hooks and fsmonitor off, no credential prompt, the C locale, a
//!   deadline and bounded output, in the sandbox's repository-write mode.
//! - [`Worktrees`] creates a worktree for a task (the intent recorded first, then added,
//!   verified and bound), keeps it, or removes it only when no tracked change, untracked or
//!   **ignored** file would be lost and its branch is contained in the base ref — otherwise
//!   the binding says `needs_review` and why. Only `git branch -d`, never a force.
//! - [`Worktrees::route`] gives the workspace a task's work runs in, failing closed on any
//!   doubt; [`Worktrees::reconcile`] settles the bindings against git's records at start.
//! - [`Bindings`] keeps one JSON file per task and an append-only audit log of transitions.
//!
//! ```
//! use agent_worktree::{BindingState, WorktreeName};
//! let name = WorktreeName::new("login-form").unwrap();
//! assert_eq!((name.branch().as_str(), BindingState::Active.as_str()), ("wt/login-form", "active"));
//! ```

#![warn(missing_docs)]

pub mod binding;
pub mod error;
pub mod git;
pub mod manager;
pub mod name;
pub mod porcelain;
pub mod reconcile;
pub mod tools;

pub use binding::{Binding, BindingError, BindingState, Bindings, Review, Transition};
pub use error::{RouteError, WorktreeError};
pub use git::{Git, GitError, GitOutput, git_sandbox};
pub use manager::{Removal, WORKTREES_DIR, Worktrees};
pub use name::{NameError, WorktreeName};
pub use reconcile::Reconciled;
