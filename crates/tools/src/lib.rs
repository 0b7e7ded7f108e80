//! `agent-tools`: the built-in tools, each confined to a [`Workspace`].
//!
//! | tool | effect | chapter |
//! |---|---|---|
//! | `bash` | execute | 1 |
//! | `read_file`, `glob` | read | 2 |
//! | `write_file`, `edit_file` | write | 2 |
//! | `todo_write` | read (it only changes the plan) | 5 |
//! | `task` | external (a child agent) | 6 |

#![warn(missing_docs)]

pub mod bash;
pub mod files;
pub mod glob;
pub mod output;
pub mod preview;
pub mod subagent;
pub mod todo;

use std::sync::Arc;

use agent_core::ToolRegistryBuilder;

pub use agent_workspace::{PathError, Workspace};
pub use bash::{Background, BackgroundJobs, BashConfig, BashTool};

use agent_core::ToolFailure;

/// Runs blocking file work off the async threads; a panic there is a failed call, not a crash.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolFailure> + Send + 'static,
) -> Result<T, ToolFailure> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| ToolFailure::execution(format!("the file operation failed: {err}")))?
}

/// Adds `bash` (chapter 1).
pub fn add_bash(
    builder: ToolRegistryBuilder,
    workspace: &Workspace,
    config: BashConfig,
) -> ToolRegistryBuilder {
    builder.tool(
        bash::spec(),
        Arc::new(BashTool::new(workspace.clone(), config)),
    )
}

/// Adds `bash` that can also start background jobs (chapter 13); with [`Background::Off`] the
/// same as [`add_bash`]. The jobs' own tools (`job_output`, `job_kill`) are the jobs crate's to
/// add.
pub fn add_bash_with(
    builder: ToolRegistryBuilder,
    workspace: &Workspace,
    config: BashConfig,
    background: Background,
) -> ToolRegistryBuilder {
    builder.tool(
        bash::spec_for(&background),
        Arc::new(BashTool::new(workspace.clone(), config).background(background)),
    )
}

/// Adds `read_file`, `write_file`, `edit_file` and `glob` (chapter 2).
///
/// ```
/// use agent_core::ToolRegistry;
/// use agent_test_support::call_tool;
/// use agent_tools::{Workspace, add_file_tools};
/// use serde_json::json;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// let workspace = Workspace::new(dir.path()).unwrap();
/// let registry = add_file_tools(ToolRegistry::builder(), &workspace).build().unwrap();
///
/// let args = json!({"path": "notes.txt", "content": "one\n"});
/// call_tool(&registry, "write_file", args).await;
/// assert_eq!(std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(), "one\n");
/// // A path out of the workspace is a failed call the model reads, not an error of ours.
/// let escape = call_tool(&registry, "read_file", json!({"path": "../etc/passwd"})).await;
/// assert_eq!(escape, "Error [path_escape]: `../etc/passwd` resolves outside the workspace");
/// # });
/// ```
pub fn add_file_tools(builder: ToolRegistryBuilder, workspace: &Workspace) -> ToolRegistryBuilder {
    builder
        .tool(
            files::read_spec(),
            Arc::new(files::ReadFile(workspace.clone())),
        )
        .tool(
            files::write_spec(),
            Arc::new(files::WriteFile(workspace.clone())),
        )
        .tool(
            files::edit_spec(),
            Arc::new(files::EditFile(workspace.clone())),
        )
        .tool(glob::spec(), Arc::new(glob::Glob(workspace.clone())))
}
