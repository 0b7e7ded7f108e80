//! Chapter 18 in the CLI: the repository's worktrees a run opens, settled against git's
//! records before the first turn, and what that found said on stderr.

use std::sync::Arc;

use agent_policy::escape_controls;
use agent_tools::Workspace;
use agent_workspace::SystemClock;
use agent_worktree::{Git, Reconciled, Worktrees};

/// Opens the worktrees of the repository at `workspace` and reconciles their bindings (an
/// interrupted create, a folder deleted by hand), saying on stderr what was settled. A
/// repository that cannot be reconciled is said once; the run goes on (the worktree tools
/// then report the same refusal to the model).
pub(super) fn open(workspace: &Workspace, rt: &tokio::runtime::Runtime) -> Worktrees {
    let trees = Worktrees::new(Git::new(workspace), Arc::new(SystemClock));
    match rt.block_on(trees.reconcile()) {
        Ok(found) => {
            for line in found.iter().map(describe) {
                eprintln!("worktrees: {}", escape_controls(&line));
            }
        }
        Err(err) => eprintln!(
            "worktrees: not reconciled: {}",
            escape_controls(&err.to_string())
        ),
    }
    trees
}

/// One line of what [`Worktrees::reconcile`] found.
pub(super) fn describe(found: &Reconciled) -> String {
    match found {
        Reconciled::Completed { task, name } => {
            format!(
                "task {task}'s worktree `{name}` was added before the last run ended; it is active"
            )
        }
        Reconciled::Abandoned {
            task,
            name,
            branch_kept,
        } => format!(
            "task {task}'s worktree `{name}` was being created when the last run ended; marked failed{}",
            if *branch_kept {
                format!(" (its branch wt/{name} is kept: delete it to use the name again)")
            } else {
                String::new()
            }
        ),
        Reconciled::Missing { task, name } => format!(
            "task {task}'s worktree `{name}` is gone (deleted by hand?); its branch wt/{name} is kept, marked needs_review"
        ),
        Reconciled::Unbound { path } => {
            format!("{path} is a worktree no task holds; left as it is")
        }
    }
}
