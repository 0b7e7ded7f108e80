//! The arguments every way of running a chapter takes: [`RunArgs`], flattened into both
//! `agent-tutorial run --chapter N` and each chapter binary, and the value types only they use.
//!
//! Apart from the entry points (`mod.rs`) because this is the run's whole configuration
//! surface, one documented field per flag, read by `run.rs`, `sessions.rs`, `team.rs` and
//! `streaming.rs`: it grows with every chapter, the entry points do not.

use std::path::PathBuf;

use clap::Args;

use super::{deps, output};

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
    pub(super) fn apply_sandbox(&self) {
        agent_sandbox::set_default(agent_sandbox::Sandbox::new(
            self.sandbox,
            self.sandbox_network,
        ));
    }
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
