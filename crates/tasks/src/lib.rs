//! `agent-tasks` (chapter 12): tasks that outlive the conversation.
//!
//! - [`TaskStore`]: `.tasks/<id>.json`, one file per task, each change one atomic write under
//!   the folder's lock, all through the workspace boundary.
//! - [`graph`]: `blocked_by` edges form a DAG; a cycle is refused with its path named;
//!   completing a task makes its dependents ready.
//! - [`tools`]: `task_create`, `task_update`, `task_list`, `task_get`.
//! - [`render`]: the list, the detail and the system prompt's `## tasks` block.

#![warn(missing_docs)]

mod check;
pub mod graph;
pub mod model;
pub mod render;
pub mod store;
pub mod tools;
mod view;

pub use graph::Tasks;
pub use model::{BadId, Status, Task, TaskId, UnknownStatus, parse_id};
pub use store::{
    Field, FileError, NewTask, Snapshot, TASKS_DIR, TaskChange, TaskError, TaskStore, Updated,
};
pub use tools::{TASK_CREATE, TASK_UPDATE, register, specs};
