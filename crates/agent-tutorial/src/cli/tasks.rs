//! `agent-tutorial tasks list [--status S] | show ID`: the persistent task list (chapter 12)
//! for people, in the same lines the model reads.

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
            println!("{}", sanitize(&render::detail(&tasks, &task)));
        }
    }
    Ok(())
}
