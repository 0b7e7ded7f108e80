//! The `agent-tutorial` command line and the chapter binaries' entry point.
//!
//! Exit codes: 0 success; 1 the run failed (model error, turn limit, unused script);
//! 2 the command cannot start (bad arguments, unknown or unbuilt chapter, missing
//! configuration); 130 Ctrl-C ended the run (chapter 11 on).

mod board;
mod chapters;
mod client;
mod cron;
pub mod deps;
pub mod hint;
pub mod line_editor;
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
use clap::{Args, Parser, Subcommand};

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
    /// How --record writes a request: `full` repeats the whole history on every line (the
    /// file grows with the square of the session); `delta` writes what changed since the
    /// line before (`agent-tutorial record expand FILE` prints the full form).
    #[arg(long, value_enum, value_name = "FORM", default_value_t = crate::record::RecordForm::Full)]
    pub record_form: crate::record::RecordForm,
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
    /// Use the workspace's shell hooks (chapter 4 on), skills (7 on) and durable schedules
    /// (14 on) without the trust recorded by `agent-tutorial trust` (for CI, or a repository
    /// you wrote). Off by default. `--trust-hooks` is the old name.
    #[arg(long, alias = "trust-hooks")]
    pub trust_workspace: bool,
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
    pub memory_placement: Option<PlacementArg>,
    /// Chapter 11 on: stream the model's replies (server-sent events) and print the answer
    /// as it arrives. Off by default before chapter 20.
    #[arg(long, overrides_with = "no_stream")]
    pub stream: bool,
    /// Chapter 11 on: read each reply whole (the default before chapter 20).
    #[arg(long, overrides_with = "stream")]
    pub no_stream: bool,
    /// Chapter 11 on, with `--prompt`: what stdout gets — `text` (the answer), `json` (one
    /// object when the run ends) or `stream-json` (one object per event as it happens).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = output::OutputFormat::Text)]
    pub output_format: output::OutputFormat,
    /// Chapter 11 on: continue this workspace's latest session (its history is the start of
    /// this one's; `agent-tutorial sessions list` shows them).
    #[arg(long = "continue", conflicts_with = "resume")]
    pub continue_session: bool,
    /// Chapter 11 on: continue the session ID (from `agent-tutorial sessions list`).
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,
    /// What commands may write: `workspace-write` (the workspace but .git/), `read-only`,
    /// `repository-write` (the workspace with .git/) or `off` (no sandbox). See docs/sandbox.md.
    #[arg(long, value_name = "MODE", default_value = "workspace-write")]
    pub sandbox: agent_sandbox::Mode,
    /// Whether sandboxed commands may use the network.
    #[arg(long, value_name = "on|off", default_value = "off")]
    pub sandbox_network: agent_sandbox::Network,
    /// Chapter 17 on: the task board's PostgreSQL server (`postgres://user@host:port/db`),
    /// for teammates on several machines. Without it, the board is the SQLite file
    /// `.agent_tutorial/board.sqlite3` in the workspace. Default: $AGENT_TUTORIAL_BOARD.
    #[arg(long, value_name = "URL")]
    pub board: Option<String>,
}

impl RunArgs {
    /// Makes `--sandbox` and `--sandbox-network` the sandbox of every command this process
    /// starts for the model.
    fn apply_sandbox(&self) {
        agent_sandbox::set_default(agent_sandbox::Sandbox::new(
            self.sandbox,
            self.sandbox_network,
        ));
    }
}

/// First in every binary's `main`: run as the sandbox helper if asked to, and keep the key
/// out of reach of the commands (not dumpable, no core file).
fn enter() {
    agent_sandbox::enter_if_helper();
    agent_sandbox::harden_agent();
}

/// `--memory-placement`: the harness's [`crate::MemoryPlacement`] as a command-line value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum PlacementArg {
    /// Chapter 10's design: the system prompt renders the block as its `## memory` section.
    /// When the selection changes, the very first message changes, and a provider's prompt
    /// cache can reuse nothing after the bytes before that section.
    #[default]
    Prompt,
    /// The system prompt stays static; each turn's block is stored in the conversation as a
    /// system message right before that turn's user message, where it then stays. A new
    /// selection is appended after the cached history instead of rewriting its start.
    Reminder,
}

impl From<PlacementArg> for crate::MemoryPlacement {
    fn from(arg: PlacementArg) -> Self {
        match arg {
            PlacementArg::Prompt => Self::Prompt,
            PlacementArg::Reminder => Self::Reminder,
        }
    }
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

/// Whether log lines may carry colour codes: only on a terminal, and not when `NO_COLOR` is set
/// to anything non-empty (<https://no-color.org>).
fn colored(terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    terminal && no_color.is_none_or(std::ffi::OsStr::is_empty)
}

fn init_tracing(verbose: u8) {
    use tracing_subscriber::field::MakeExt as _;
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
    // Every field passes the terminal sanitizer: a log line quotes stored text (a skipped
    // record, a server's message) that an attacker wrote, and a raw escape sequence or bidi
    // control in it must reach the terminal as text, like everything else we print.
    let fields = tracing_subscriber::fmt::format::debug_fn(|writer, field, value| {
        let text = agent_policy::escape_controls(&format!("{value:?}"));
        if field.name() == "message" {
            write!(writer, "{text}")
        } else {
            write!(writer, "{field}={text}")
        }
    })
    .delimited(" ");
    let output = tracing_subscriber::fmt::layer()
        .fmt_fields(fields)
        .with_writer(std::io::stderr)
        .with_ansi(colored(
            std::io::IsTerminal::is_terminal(&std::io::stderr()),
            std::env::var_os("NO_COLOR").as_deref(),
        ))
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
    #[test]
    fn no_color_turns_colour_off_on_a_terminal() {
        use std::ffi::OsStr;
        let cases = [
            (true, None, true),
            (true, Some(OsStr::new("1")), false),
            (true, Some(OsStr::new("")), true),
            (false, None, false),
        ];
        for (terminal, no_color, want) in cases {
            assert_eq!(super::colored(terminal, no_color), want, "{no_color:?}");
        }
    }

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
