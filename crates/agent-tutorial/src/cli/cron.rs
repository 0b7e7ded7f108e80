//! `agent-tutorial cron list`: the workspace's durable schedules (chapter 14) for people, in
//! the table `list_crons` shows the model. Session schedules live only in their process.

use std::path::PathBuf;

use agent_policy::sanitize;
use clap::{Args, Subcommand};

use super::{CliError, CliResult, open_workspace};

#[derive(Debug, Args)]
pub struct CronArgs {
    /// The workspace whose `.agent_tutorial/crons.json` to read (default: the current directory).
    #[arg(long, value_name = "DIR", global = true)]
    workspace: Option<PathBuf>,
    #[command(subcommand)]
    command: CronCommand,
}

#[derive(Debug, Subcommand)]
enum CronCommand {
    /// One line per durable schedule: id, cron, time zone, next run (UTC), prompt.
    List,
}

pub fn cron(args: &CronArgs) -> CliResult {
    let workspace = open_workspace(args.workspace.as_deref())?;
    match args.command {
        CronCommand::List => {
            let table = agent_cron::durable_table(&workspace).map_err(CliError::runtime)?;
            // A schedule's prompt is a model's or a repository's text: shown, never run.
            println!("{}", sanitize(&table.to_string()));
        }
    }
    Ok(())
}
