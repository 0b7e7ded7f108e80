//! The `agent-tutorial` command line and the chapter binaries' entry point.
//!
//! Exit codes: 0 success; 1 the run failed (model error, turn limit, unused script);
//! 2 the command cannot start (bad arguments, unknown or unbuilt chapter, missing
//! configuration); 130 Ctrl-C ended the run (chapter 11 on).

mod chapters;
mod cron;
pub mod deps;
pub mod hint;
mod interrupt;
pub mod line_editor;
mod memory;
mod prompt;
mod run;
pub mod scheduled;
mod tasks;
pub mod trust;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::Profile;
use agent_openai::ModelEnv;
use agent_tools::Workspace;
use clap::{Args, Parser, Subcommand};

/// An error with the exit code it deserves.
#[derive(Debug)]
pub struct CliError {
    pub code: u8,
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
            code: interrupt::EXIT_INTERRUPTED,
            error: error.into(),
        }
    }
}

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
    /// Review the workspace's shell hooks (.agent_tutorial/hooks.json) and trust that exact
    /// file, so chapter 4 on runs them; a changed file needs trusting again.
    Trust(trust::TrustArgs),
}

/// Arguments shared by `agent-tutorial run` and the chapter binaries.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The user prompt for one turn. Without it, an interactive loop starts.
    #[arg(short, long)]
    pub prompt: Option<String>,
    /// The directory the agent works in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Model name (overrides OPENAI_MODEL).
    #[arg(long)]
    pub model: Option<String>,
    /// Server address, e.g. http://127.0.0.1:8080/v1 (overrides OPENAI_BASE_URL).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Sampling temperature (default: the server's).
    #[arg(long)]
    pub temperature: Option<f32>,
    /// Seconds one model request may take in all (connecting, sending, reading the whole
    /// reply) before it fails with a timeout. Before chapter 11 a request is never retried.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub request_timeout: u64,
    /// At most this many tokens per reply (sent as `max_tokens`).
    #[arg(long)]
    pub max_tokens: Option<u32>,
    /// Append every request, exactly as the loop built it, as one JSON line to FILE.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Replay model replies from a JSON script instead of calling a model (offline, no key).
    /// A JSON array, one element per model request: {"content": "..."} or
    /// {"tool_calls": [{"name": "bash", "arguments": {...}}]}; memory and compaction side
    /// calls take elements too. Format: docs/scripts.md.
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// How `ask` permission decisions are answered (chapter 3 on). `prompt` asks on the
    /// terminal and denies when there is none.
    #[arg(long, value_enum, default_value_t = deps::ApproveMode::Prompt)]
    pub approve: deps::ApproveMode,
    /// Send the last request the turn limit allows without tools, so the model must answer
    /// instead of the run failing at the limit (for small models that never stop calling tools).
    #[arg(long)]
    pub final_answer: bool,
    /// At most this many model requests per turn.
    #[arg(long, default_value_t = agent_core::runner::DEFAULT_MAX_TURNS)]
    pub max_turns: usize,
    /// Chapter 11 on: attempts per model request, the first one included.
    #[arg(long, value_name = "N", default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..))]
    pub retry_attempts: u32,
    /// Chapter 11 on: seconds all attempts of one model request may take; a wait that would
    /// end later gives up with an error.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub retry_deadline: u64,
    /// Chapter 11 on: milliseconds of the first wait before a retry (doubled each time, at
    /// most 32 s, plus up to 25 % jitter); a server's Retry-After wins.
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pub retry_base_ms: u64,
    /// Chapter 11 on: the model asked after 3 overloaded answers in a row (overrides
    /// OPENAI_FALLBACK_MODEL).
    #[arg(long, value_name = "MODEL")]
    pub fallback_model: Option<String>,
    /// Run the workspace's shell hooks (chapter 4 on) without the trust recorded by
    /// `agent-tutorial trust` (for CI, or a repository you wrote). Off by default.
    #[arg(long)]
    pub trust_hooks: bool,
    /// After the run, print on stderr one row per model request: its size, the stable prefix
    /// it shares with the request before (what a provider's prompt cache can reuse), and the
    /// prompt and cached tokens the server reported (`-` when it did not). `=json`: as JSON.
    #[arg(long, value_enum, value_name = "FORMAT", num_args = 0..=1,
          default_missing_value = "table", require_equals = true)]
    pub cache_report: Option<crate::cache_report::ReportFormat>,
    /// With --cache-report: print the report as JSON (the same as --cache-report=json).
    #[arg(long, requires = "cache_report")]
    pub json: bool,
    /// Chapter 10 on: where the selected memories go. `prompt` (default): the system prompt's
    /// `## memory` section; `reminder`: a static system prompt, and the block as a system
    /// message before each turn's user message, so a new selection keeps the cached history.
    #[arg(long, value_enum, value_name = "WHERE")]
    pub memory_placement: Option<crate::MemoryPlacement>,
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
    // SAFETY: this runs at the start of the binary's `main` (see above), before the tokio
    // runtime, any other thread or any child exists, and nothing holds environment pointers.
    let env = unsafe { ModelEnv::take_from_process() };
    let cli = Cli::parse();
    init_tracing(cli.verbose);
    finish(match cli.command {
        Command::Run { chapter, args } => profile(chapter).and_then(|p| run::run(p, &args, &env)),
        Command::Prompt(args) => prompt::prompt(&args, &env),
        Command::Memory(args) => memory::memory(&args),
        Command::Tasks(args) => tasks::tasks(&args),
        Command::Cron(args) => cron::cron(&args),
        Command::Trust(args) => trust::trust(&args),
        Command::Chapters => {
            print!("{}", chapters::table());
            Ok(())
        }
    })
}

/// `main` of a chapter binary (`chapters/chNN/main.rs`). Like [`main`], call it first thing.
pub fn chapter_main(chapter: u8) -> ExitCode {
    // SAFETY: as in `main`: still single-threaded, no child, no environment pointer held.
    let env = unsafe { ModelEnv::take_from_process() };
    let cli = parse_chapter_cli(
        chapter,
        std::iter::once(format!("ch{chapter:02}")).chain(std::env::args().skip(1)),
    );
    init_tracing(cli.verbose);
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

/// Log targets that never print, whatever `-v` or `RUST_LOG` say: the HTTP and TLS stack can log
/// request and reply contents (headers, error bodies), and a server may echo the key in them.
const SILENCED_TARGETS: [&str; 8] = [
    "async_openai",
    "reqwest",
    "hyper",
    "hyper_util",
    "h2",
    "rustls",
    "tower",
    "tower_http",
];

fn silenced(target: &str) -> bool {
    SILENCED_TARGETS.iter().any(|silenced| {
        target
            .strip_prefix(silenced)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
    })
}

fn init_tracing(verbose: u8) {
    use tracing_subscriber::layer::{Layer as _, SubscriberExt as _};
    use tracing_subscriber::util::SubscriberInitExt as _;
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let levels = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // A separate filter rather than `target=off` directives: a more specific RUST_LOG
    // directive (`hyper::proto=trace`) would win over those.
    let not_silenced = tracing_subscriber::filter::filter_fn(|meta| !silenced(meta.target()));
    let output = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .without_time()
        .with_target(false)
        .with_filter(levels)
        .with_filter(not_silenced);
    let _ = tracing_subscriber::registry().with(output).try_init();
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

#[cfg(test)]
mod tests {
    use super::silenced;

    #[test]
    fn http_and_tls_targets_are_silenced_and_ours_are_not() {
        let targets = [
            "async_openai::error",
            "hyper",
            "hyper::proto::h1::io",
            "hyper_util::client::legacy",
            "reqwest::connect",
            "h2::codec",
            "rustls::client::hs",
            "agent_openai::client",
            "agent_tutorial::cli",
            "hyperfine",
        ];
        assert_eq!(
            targets.map(silenced),
            [
                true, true, true, true, true, true, true, false, false, false
            ]
        );
    }
}
