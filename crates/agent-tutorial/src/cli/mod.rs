//! The `agent-tutorial` command line and the chapter binaries' entry point.
//!
//! Exit codes: 0 success; 1 the run failed (model error, turn limit, unused script);
//! 2 the command cannot start (bad arguments, unknown or unbuilt chapter, missing
//! configuration); 130 Ctrl-C ended the run (chapter 11 on).
//!
//! This file is the entry points: the subcommands, the two `main`s, and how an error becomes
//! an exit code. The flags of a run are in `args.rs`, the log setup in `logging.rs`, and each
//! subcommand in a file of its own.

mod args;
mod board;
mod chapters;
mod client;
mod cron;
pub mod deps;
pub mod hint;
pub mod line_editor;
mod logging;
mod mcp;
mod memory;
pub mod output;
mod prompt;
mod run;
mod sessions;
pub mod slash;
mod streaming;
mod tasks;
mod team;
pub mod trust;
mod worktrees;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::Profile;
use agent_openai::ModelEnv;
use agent_tools::Workspace;
use clap::{Parser, Subcommand};

pub use args::{PlacementArg, RunArgs};
use logging::init_tracing;

/// An error with the exit code it deserves.
#[derive(Debug)]
pub struct CliError {
    /// The process's exit code: 2 usage, 1 a failed run, 130 interrupted.
    pub code: u8,
    /// What is printed (with its chain of causes).
    pub error: anyhow::Error,
}

impl CliError {
    /// The command could not start: exit code 2.
    pub fn usage(error: impl Into<anyhow::Error>) -> Self {
        Self {
            code: 2,
            error: error.into(),
        }
    }

    /// The run failed: exit code 1.
    pub fn runtime(error: impl Into<anyhow::Error>) -> Self {
        Self {
            code: 1,
            error: error.into(),
        }
    }

    /// Ctrl-C ended the run (chapter 11 on): exit code 130, as a shell reports SIGINT.
    pub fn interrupted(error: impl Into<anyhow::Error>) -> Self {
        Self {
            code: client::EXIT_INTERRUPTED,
            error: error.into(),
        }
    }
}

/// What a command returns: its value, or the error and the exit code.
pub type CliResult<T = ()> = Result<T, CliError>;

#[derive(Debug, Parser)]
#[command(
    name = "agent-tutorial",
    version,
    about = "A coding-agent harness built chapter by chapter: run a chapter, or see exactly what it sends the model."
)]
struct Cli {
    /// More tracing on stderr (-v info, -vv debug). RUST_LOG overrides; the HTTP and TLS
    /// libraries stay silent either way (they could print the key).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a chapter's agent: one turn with --prompt, otherwise an interactive loop.
    Run {
        /// The chapter (profile) to run, e.g. 2.
        #[arg(long)]
        chapter: u8,
        #[command(flatten)]
        args: RunArgs,
    },
    /// Print the exact first request a chapter would send, without calling any model.
    Prompt(prompt::PromptArgs),
    /// List the chapters and what each profile adds.
    Chapters,
    /// Inspect and edit the workspace's memory (chapter 9 on).
    Memory(memory::MemoryArgs),
    /// Show the workspace's persistent task list (chapter 12 on).
    Tasks(tasks::TasksArgs),
    /// Show the workspace's durable scheduled prompts (chapter 14 on).
    Cron(cron::CronArgs),
    /// Show the team the last session left: status, current message, last result (chapter
    /// 15 on).
    Team(team::TeamArgs),
    /// Show one mailbox: how many messages wait, are processed, done or quarantined, and the
    /// oldest waiting (chapter 15 on).
    Mailbox(team::MailboxArgs),
    /// Review what the workspace ships that runs code or shapes the prompt (hooks, durable
    /// schedules, skills) and, if you say yes, trust that exact content; a change by anyone
    /// but this harness needs trusting again.
    Trust(trust::TrustArgs),
    /// The workspace's MCP servers: `mcp list` shows each one's command, trust, state and
    /// tools (chapter 19 on).
    Mcp(mcp::McpArgs),
    /// The OS sandbox commands run in (docs/sandbox.md).
    Sandbox {
        #[command(subcommand)]
        command: SandboxCommand,
    },
    /// The workspace's kept sessions: `sessions list` shows each one's id, start, turns and
    /// first prompt, and whether `--resume ID` can continue it (chapter 11 on).
    Sessions(sessions::SessionsArgs),
    /// Files written by --record.
    Record {
        #[command(subcommand)]
        command: RecordCommand,
    },
}

#[derive(Debug, Subcommand)]
enum RecordCommand {
    /// Print every request of a recording (either form) whole, one JSON line each: what
    /// --record-form full would have written.
    Expand {
        /// The file --record wrote.
        file: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
enum SandboxCommand {
    /// Print what this machine supports: namespaces, Landlock, and the level commands run at.
    Check,
}

/// First in every binary's `main`: run as the sandbox helper if asked to, and keep the key
/// out of reach of the commands (not dumpable, no core file).
fn enter() {
    agent_sandbox::enter_if_helper();
    agent_sandbox::harden_agent();
}

#[derive(Debug, Parser)]
struct ChapterCli {
    /// More tracing on stderr (-v info, -vv debug). RUST_LOG overrides; the HTTP and TLS
    /// libraries stay silent either way (they could print the key).
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
    #[command(flatten)]
    args: RunArgs,
}

/// `main` of the `agent-tutorial` binary. Call it first thing in `fn main`: it edits the
/// process environment, which is sound only while the process has one thread.
pub fn main() -> ExitCode {
    enter();
    // SAFETY: this runs at the start of the binary's `main` (see above), before the tokio
    // runtime, any other thread or any child exists, and nothing holds environment pointers.
    let env = unsafe { ModelEnv::take_from_process() };
    let cli = Cli::parse();
    init_tracing(cli.verbose);
    finish(match cli.command {
        Command::Run { chapter, args } => {
            args.apply_sandbox();
            profile(chapter).and_then(|p| run::run(p, &args, &env))
        }
        Command::Sandbox {
            command: SandboxCommand::Check,
        } => {
            print!(
                "{}",
                agent_sandbox::support(std::path::Path::new("/proc/self/exe")).summary()
            );
            Ok(())
        }
        Command::Prompt(args) => prompt::prompt(&args, &env),
        Command::Memory(args) => memory::memory(&args),
        Command::Tasks(args) => tasks::tasks(&args),
        Command::Cron(args) => cron::cron(&args),
        Command::Team(args) => team::team(&args),
        Command::Mailbox(args) => team::mailbox(&args),
        Command::Trust(args) => trust::trust(&args),
        Command::Mcp(args) => mcp::mcp(&args),
        Command::Sessions(args) => sessions::sessions(&args),
        Command::Chapters => {
            print!("{}", chapters::table());
            Ok(())
        }
        Command::Record {
            command: RecordCommand::Expand { file },
        } => expand_recording(&file),
    })
}

/// `agent-tutorial record expand FILE`: the recording's requests in the full form on stdout.
fn expand_recording(file: &std::path::Path) -> CliResult<()> {
    use std::io::Write as _;
    let input = std::fs::File::open(file).map_err(|err| {
        CliError::usage(anyhow::anyhow!(
            "cannot open the recording {}: {err}",
            file.display()
        ))
    })?;
    let mut out = std::io::stdout().lock();
    crate::record::expand_each(
        std::io::BufReader::new(input),
        crate::record::LIMITS,
        |request| {
            // JSON escapes every control character: nothing the file holds reaches the
            // terminal raw.
            serde_json::to_writer(&mut out, request)?;
            writeln!(out)
        },
    )
    .map_err(CliError::runtime)?;
    Ok(())
}

/// `main` of a chapter binary (`chapters/chNN/main.rs`). Like [`main`], call it first thing.
pub fn chapter_main(chapter: u8) -> ExitCode {
    enter();
    // SAFETY: as in `main`: still single-threaded, no child, no environment pointer held.
    let env = unsafe { ModelEnv::take_from_process() };
    let cli = parse_chapter_cli(
        chapter,
        std::iter::once(format!("ch{chapter:02}")).chain(std::env::args().skip(1)),
    );
    init_tracing(cli.verbose);
    cli.args.apply_sandbox();
    finish(profile(chapter).and_then(|p| run::run(p, &cli.args, &env)))
}

/// A chapter binary's help opens with what the chapter is, taken from the chapter table;
/// without an `about` clap would show the doc comment of the flattened `RunArgs`.
fn chapter_about(chapter: u8) -> String {
    match Profile::for_chapter(chapter) {
        Ok(p) => format!(
            "Chapter {chapter} ({}): {}. Runs this chapter's agent: one turn with --prompt, \
             otherwise an interactive loop (see docs/ch{chapter:02}.md).",
            p.id(),
            p.title
        ),
        Err(_) => format!("Chapter {chapter} of agent-tutorial."),
    }
}

fn parse_chapter_cli(chapter: u8, args: impl IntoIterator<Item = String>) -> ChapterCli {
    use clap::{CommandFactory as _, FromArgMatches as _};
    let matches = ChapterCli::command()
        .about(chapter_about(chapter))
        .long_about(None)
        .get_matches_from(args);
    ChapterCli::from_arg_matches(&matches).unwrap_or_else(|err| err.exit())
}

fn finish(result: CliResult) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let error: &(dyn std::error::Error + 'static) = err.error.as_ref();
            eprintln!(
                "error: {}",
                hint::with_hint(format_args!("{:#}", err.error), error)
            );
            ExitCode::from(err.code)
        }
    }
}

fn profile(chapter: u8) -> CliResult<Profile> {
    Profile::for_chapter(chapter).map_err(CliError::usage)
}

/// Opens the workspace: the given directory or the current one.
pub(crate) fn open_workspace(dir: Option<&Path>) -> CliResult<Workspace> {
    let dir = match dir {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir().map_err(CliError::usage)?,
    };
    Workspace::new(&dir).map_err(|err| {
        CliError::usage(anyhow::anyhow!(
            "cannot use {} as the workspace: {err}",
            dir.display()
        ))
    })
}

pub(crate) fn runtime() -> CliResult<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::runtime)
}
