//! `agent-tutorial memory list | show NAME | forget NAME | add NAME ...`: the store by hand.

use std::path::PathBuf;

use agent_memory::{MEMORY_DIR, MemoryError, MemoryRecord, MemoryStore, MemoryType};
use agent_policy::{escape_controls, sanitize};
use clap::{Args, Subcommand};

use super::{CliError, CliResult, open_workspace};

#[derive(Debug, Args)]
pub struct MemoryArgs {
    /// The workspace whose `.memory/` to use (default: the current directory).
    #[arg(long, value_name = "DIR", global = true)]
    workspace: Option<PathBuf>,
    #[command(subcommand)]
    command: MemoryCommand,
}

#[derive(Debug, Subcommand)]
enum MemoryCommand {
    /// One line per record: name, type, description.
    List,
    /// A record's file as stored.
    Show { name: String },
    /// Remove a record (its file moves to `.memory/archive/`).
    Forget { name: String },
    /// Add (or replace) a record.
    Add {
        name: String,
        #[arg(long = "type", value_enum)]
        kind: KindArg,
        #[arg(long)]
        description: String,
        #[arg(long, default_value = "")]
        body: String,
    },
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum KindArg {
    User,
    Feedback,
    Project,
    Reference,
}

impl From<KindArg> for MemoryType {
    fn from(kind: KindArg) -> Self {
        match kind {
            KindArg::User => Self::User,
            KindArg::Feedback => Self::Feedback,
            KindArg::Project => Self::Project,
            KindArg::Reference => Self::Reference,
        }
    }
}

fn find(store: &MemoryStore, name: &str) -> CliResult<MemoryRecord> {
    store
        .load()
        .map_err(CliError::runtime)?
        .into_iter()
        .find(|r| r.name == name)
        .ok_or_else(|| CliError::usage(anyhow::anyhow!("no memory named `{name}`")))
}

/// `memory list`'s lines (and `/memory`'s, chapter 20): one per record.
pub(super) fn list_text(workspace: &agent_tools::Workspace) -> CliResult<String> {
    let records = MemoryStore::open(workspace)
        .load()
        .map_err(CliError::runtime)?;
    if records.is_empty() {
        return Ok("(no memories)\n".to_string());
    }
    // Records are a model's or a repository's text: shown, never run.
    Ok(records
        .iter()
        .map(|r| {
            format!(
                "{}  ({})  {}\n",
                escape_controls(&r.name),
                r.kind.as_str(),
                escape_controls(&r.description)
            )
        })
        .collect())
}

pub fn memory(args: &MemoryArgs) -> CliResult {
    let workspace = open_workspace(args.workspace.as_deref())?;
    let store = MemoryStore::open(&workspace);
    match &args.command {
        MemoryCommand::List => print!("{}", list_text(&workspace)?),
        MemoryCommand::Show { name } => {
            let record = find(&store, name)?;
            let text = record
                .to_file_text()
                .map_err(|e| CliError::runtime(anyhow::anyhow!(e)))?;
            print!("{}", sanitize(&text));
        }
        MemoryCommand::Forget { name } => {
            // The store matches the name `list` shows (the index's) and reports only once the
            // record is out of the index and its file archived.
            let archived = store.forget(name).map_err(|err| match err {
                MemoryError::NotFound(_) => CliError::usage(err),
                other => CliError::runtime(other),
            })?;
            if archived.is_empty() {
                eprintln!(
                    "forgot {} (its file was already missing)",
                    escape_controls(name)
                );
            }
            for file in archived {
                eprintln!(
                    "forgot {} (archived as {MEMORY_DIR}/{})",
                    escape_controls(name),
                    escape_controls(&file)
                );
            }
        }
        MemoryCommand::Add {
            name,
            kind,
            description,
            body,
        } => {
            let record = MemoryRecord::new(name, (*kind).into(), description, body);
            record
                .validate()
                .map_err(|e| CliError::usage(anyhow::anyhow!(e)))?;
            store.upsert(vec![record]).map_err(CliError::runtime)?;
        }
    }
    Ok(())
}
