//! Features instead of fields: one module per [`Capability`], each installing itself into the
//! agent being built ([`Assembly`]) — its tools, history processors, prompt sections, inbox
//! sources and what a subagent gets of it.
//!
//! [`FEATURES`] is the table. [`installed`] walks it once for a set of capabilities; it holds
//! the only `has(..)` of the workspace, so "which capability does what" is answered by one
//! module each, never by a test scattered over the composition root or a front end. A front end
//! asks the same walk through [`Features`], a value of typed answers.

mod artifacts;
mod assembly;
mod autonomy;
mod background;
mod bash;
mod compaction;
mod cron;
mod dynamic_prompt;
mod files;
mod full_harness;
mod hooks;
mod mailbox;
mod mcp;
mod memory;
mod plan_gate;
mod policy;
mod protocols;
mod recovery;
mod skills;
mod subagent;
mod task_board;
mod task_graph;
mod teammates;
mod todo;
mod worktrees;

pub(crate) use assembly::{Assembly, ChildAssembly, StartSelection, ToolSlot};

use crate::session::Interrupts;
use crate::{BuildError, Capabilities, Capability};

/// One capability's part of the composition root.
pub(crate) trait Feature: Sync {
    /// The capability that switches this feature on.
    fn capability(&self) -> Capability;

    /// What the feature changes in the answers a front end asks for (see [`Features`]).
    fn describe(&self, _features: &mut Features) {}

    /// Installs the feature into the agent being built: tools, processors, prompt sections,
    /// what its subagents get. Features are installed in [`FEATURES`] order.
    fn install(&self, _agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        Ok(())
    }
}

/// Every feature, in the order they are installed. The order is one of dependencies, not of
/// chapters: what a feature captures must be in place before it (the recovering model, the
/// gate, the hooks, the jobs `bash` hands work to), and the history processors run in the order
/// their features are installed. Where tools go in the registry is their [`ToolSlot`]'s
/// business, where prompt sections go their order's, so neither depends on this table.
pub(crate) const FEATURES: [&dyn Feature; 24] = [
    // Wraps the model every later feature captures (memory, compaction, subagents).
    &recovery::Recovery,
    // A teammate's rule, added to the pipeline the policy feature builds next.
    &plan_gate::PlanGate,
    // The gate memory and subagents share.
    &policy::Policy,
    // The hooks subagents share.
    &hooks::Hooks,
    // Wraps the hooks (fencing) and the model (renewal) every later feature captures.
    &task_board::TaskBoard,
    // The lead's worktree tools, and the routing `bash` and the file tools of a teammate
    // take (so before them).
    &worktrees::Worktrees,
    // The jobs `bash` hands background commands to.
    &background::Background,
    // These four also give a subagent its tools.
    &bash::Bash,
    &files::Files,
    // Its reminder is the first history processor: it counts rounds in the full history.
    &todo::Todo,
    &skills::Skills,
    &task_graph::TaskGraph,
    &cron::Cron,
    &artifacts::Artifacts,
    // Shapes the conversation after the reminder has counted it.
    &compaction::Compaction,
    // Its injector (chapter 9) runs last, so the memory message is never compacted.
    &memory::Memory,
    &dynamic_prompt::DynamicPrompt,
    // The team's tools (chapters 15–16), for the lead and its teammates, never a subagent.
    &teammates::Teammates,
    &mailbox::Mailbox,
    &protocols::Protocols,
    &autonomy::Autonomy,
    // The lead's MCP servers (chapter 19): never a teammate's or a subagent's.
    &mcp::Mcp,
    // Changes only what a front end is told (streaming, sessions, slash commands).
    &full_harness::FullHarness,
    // Last: a subagent gets what every feature before it gives children.
    &subagent::Subagent,
];

/// The features `capabilities` switch on, in installation order. The only `has(..)`: every
/// question about a capability goes through here.
pub(crate) fn installed(capabilities: Capabilities) -> impl Iterator<Item = &'static dyn Feature> {
    FEATURES
        .into_iter()
        .filter(move |feature| capabilities.has(feature.capability()))
}

/// How a terminal front end reads the person's lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// Plain lines from standard input (chapters 1–10).
    PlainLines,
    /// A line editor, whose Ctrl-C cancels the turn (chapter 11 on).
    LineEditor,
}

/// Whether a second model is asked after repeated overloads (chapter 11 on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelFallback {
    /// No fallback model is read or used.
    NotUsed,
    /// A fallback model must be configured like the main one.
    Required,
}

/// How the system prompt is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptStyle {
    /// Fixed when the agent is built (chapters 1–9).
    Fixed,
    /// Rendered from live state before every request (chapter 10 on): a provider's prompt
    /// cache then pays off with one cache key per session, and the selected memories have a
    /// placement to choose.
    Dynamic,
}

/// Whether a front end loads the workspace's shell hooks (chapter 4 on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellHooks {
    /// The agent runs no hooks: none are loaded.
    Ignored,
    /// The agent runs the hooks the front end registers.
    Loaded,
}

/// Whether the agent leads a team (chapter 15 on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Team {
    /// It works alone: no teammate, no mailbox to set up.
    Alone,
    /// It starts teammates, each one more agent of the session, and talks to them by mail:
    /// a front end sets the team up (`team_runtime::attach`).
    Lead,
}

/// What a set of capabilities means to a front end: the typed answers a CLI asks the harness
/// instead of testing capabilities itself.
///
/// ```
/// use agent_harness::{Capabilities, Capability, Features, Input, PromptStyle};
///
/// let chapter_10: Capabilities = [Capability::Bash, Capability::DynamicPrompt].into_iter().collect();
/// let features = Features::of(chapter_10);
/// assert_eq!(features.prompt, PromptStyle::Dynamic);
/// assert_eq!(features.input, Input::PlainLines);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Features {
    /// What Ctrl-C does.
    pub interrupts: Interrupts,
    /// How the person's lines are read at a terminal.
    pub input: Input,
    /// Whether a fallback model is configured.
    pub fallback: ModelFallback,
    /// How the system prompt is built.
    pub prompt: PromptStyle,
    /// Whether shell hooks are loaded.
    pub shell_hooks: ShellHooks,
    /// Whether the agent leads a team.
    pub team: Team,
    /// Whether a team's shutdown and plan-approval requests are on (chapter 16).
    pub protocols: agent_team::Protocols,
    /// Whether a task board is opened for the session (chapter 17).
    pub board: Board,
    /// Whether idle teammates claim the board's ready tasks on their own (chapter 17).
    pub autonomy: Autonomy,
    /// Whether claimed tasks get their own git worktrees (chapter 18).
    pub worktrees: WorktreeUse,
    /// Whether the lead uses the workspace's MCP servers (chapter 19).
    pub mcp: McpUse,
    /// Whether replies stream when neither `--stream` nor `--no-stream` is given (chapter 20).
    pub stream_default: StreamDefault,
    /// Whether the interactive prompt takes slash commands (chapter 20).
    pub slash_commands: SlashCommands,
}

/// Whether the model's replies stream when the person asks neither way (chapter 20 on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamDefault {
    /// Each reply is read whole unless `--stream` is given (chapters 11–19: streaming is a
    /// flag there, so their request snapshots and printed output stay what they teach).
    Whole,
    /// Replies stream unless `--no-stream` is given (chapter 20).
    Streamed,
}

/// Whether a line starting with `/` at the interactive prompt is a command for the harness
/// (chapter 20 on) or a prompt for the model like any other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlashCommands {
    /// Every line is a prompt.
    Off,
    /// `/help`, `/tools`, `/cost` … are the harness's; only other lines reach the model.
    On,
}

/// Whether the lead uses MCP servers (chapter 19 on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpUse {
    /// No server is read or started.
    Off,
    /// A front end reads `.mcp.json`, admits it through the trust store, starts its servers
    /// with the session and hands them to the lead ([`crate::mcp_hub::McpHub`]).
    On,
}

/// Whether the session's tasks can have worktrees (chapter 18 on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorktreeUse {
    /// Every agent works in the workspace's root.
    Off,
    /// A front end opens the repository's worktrees ([`agent_worktree::Worktrees`]),
    /// reconciles them at start, and gives them to every agent.
    On,
}

/// Whether the session has a task board (chapter 17 on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Board {
    /// No board: nothing is opened.
    None,
    /// A front end opens the board ([`crate::board_seat::BoardSeat`]) and seats every agent
    /// at it.
    Shared,
}

/// What an idle teammate does when it has no mail (chapter 17 on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Autonomy {
    /// It waits for mail.
    Off,
    /// It polls the board and claims the oldest ready task.
    On,
}

impl Features {
    /// The answers for an agent built with `capabilities`.
    pub fn of(capabilities: Capabilities) -> Self {
        Self::told_by(installed(capabilities))
    }

    /// The answers `installed` features give.
    pub(crate) fn told_by<'f>(installed: impl IntoIterator<Item = &'f dyn Feature>) -> Self {
        let mut features = Self {
            interrupts: Interrupts::EndSession,
            input: Input::PlainLines,
            fallback: ModelFallback::NotUsed,
            prompt: PromptStyle::Fixed,
            shell_hooks: ShellHooks::Ignored,
            team: Team::Alone,
            protocols: agent_team::Protocols::Off,
            board: Board::None,
            autonomy: Autonomy::Off,
            worktrees: WorktreeUse::Off,
            mcp: McpUse::Off,
            stream_default: StreamDefault::Whole,
            slash_commands: SlashCommands::Off,
        };
        for feature in installed {
            feature.describe(&mut features);
        }
        features
    }
}

#[cfg(test)]
mod tests;
