//! `agent-tutorial tasks list [--status S] | show ID`: the persistent task list (chapter 12)
//! for people, in the same lines the model reads; with `--board`, chapter 17's task board.

use std::path::PathBuf;

use agent_policy::sanitize;
use agent_tasks::{Status, TaskError, TaskStore, render};
use clap::{Args, Subcommand};

use super::{CliError, CliResult, open_workspace};

#[derive(Debug, Args)]
pub struct TasksArgs {
    /// The workspace whose `.tasks/` to read (default: the current directory).
    #[arg(long, value_name = "DIR", global = true)]
    workspace: Option<PathBuf>,
    /// Chapter 17: show the task board instead of chapter 12's list: the workspace's SQLite
    /// board, or with `--board=postgres://…` (or $AGENT_TUTORIAL_BOARD) a PostgreSQL one.
    #[arg(long, value_name = "URL", global = true, num_args = 0..=1, require_equals = true, default_missing_value = "")]
    board: Option<String>,
    #[command(subcommand)]
    command: TasksCommand,
}

#[derive(Debug, Subcommand)]
enum TasksCommand {
    /// One line per task: id, status, subject, and whether it is ready or what blocks it.
    List {
        /// Only tasks with this status.
        #[arg(long, value_enum)]
        status: Option<StatusArg>,
    },
    /// One task in full.
    Show {
        /// The task's id, e.g. 3.
        id: u64,
    },
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum StatusArg {
    Pending,
    InProgress,
    Completed,
    Cancelled,
}

impl From<StatusArg> for Status {
    fn from(status: StatusArg) -> Self {
        match status {
            StatusArg::Pending => Self::Pending,
            StatusArg::InProgress => Self::InProgress,
            StatusArg::Completed => Self::Completed,
            StatusArg::Cancelled => Self::Cancelled,
        }
    }
}

pub fn tasks(args: &TasksArgs) -> CliResult {
    let workspace = open_workspace(args.workspace.as_deref())?;
    if let Some(url) = &args.board {
        let view = match &args.command {
            TasksCommand::List { status: None } => super::board::View::List,
            TasksCommand::List { status: Some(_) } => {
                return Err(CliError::usage(anyhow::anyhow!(
                    "--status is for chapter 12's list; the board's list shows every task"
                )));
            }
            TasksCommand::Show { id } => {
                super::board::View::Show(i64::try_from(*id).map_err(CliError::usage)?)
            }
        };
        // Subjects, descriptions, results and reasons were written by a model or a
        // repository: shown, never run.
        print!("{}", sanitize(&super::board::show(&workspace, url, view)?));
        return Ok(());
    }
    let store = TaskStore::open(&workspace);
    match &args.command {
        TasksCommand::List { status } => {
            let tasks = store.load().map_err(CliError::runtime)?;
            // Subjects and descriptions were written by a model or a repository: shown, never run.
            println!(
                "{}",
                sanitize(&render::list(&tasks, status.map(Status::from)))
            );
        }
        TasksCommand::Show { id } => {
            let task = store.get(*id).map_err(|err| match err {
                TaskError::NotFound(_) => CliError::usage(err),
                other => CliError::runtime(other),
            })?;
            let tasks = store.load().map_err(CliError::runtime)?;
            println!(
                "{}",
                sanitize(&render::detail_with(&tasks, &task, &readable_time))
            );
        }
    }
    Ok(())
}

/// Epoch seconds as a UTC date and time (`2023-11-14 22:13:20 UTC`), like `cron list`; the raw
/// number when it is past what a date can hold (a hand-edited record).
pub(super) fn readable_time(seconds: u64) -> String {
    i64::try_from(seconds)
        .ok()
        .and_then(|s| agent_cron::Timestamp::from_second(s).ok())
        .map_or_else(
            || seconds.to_string(),
            |t| t.strftime("%Y-%m-%d %H:%M:%S UTC").to_string(),
        )
}

#[cfg(test)]
mod tests {
    #[test]
    fn times_are_dates_in_utc() {
        assert_eq!(
            super::readable_time(1_700_000_000),
            "2023-11-14 22:13:20 UTC"
        );
        assert_eq!(super::readable_time(u64::MAX), u64::MAX.to_string());
    }
}
