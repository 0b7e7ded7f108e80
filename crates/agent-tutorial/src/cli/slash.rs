//! Slash commands in the interactive loop (chapter 20: [`SlashCommands::On`]; before it a
//! line starting with `/` is a prompt like any other).
//!
//! One table ([`COMMANDS`]) describes each command once: `/help` prints it, the line editor
//! completes its names, and [`parse`] is the one place a line becomes a [`SlashCommand`].
//!
//! [`SlashCommands::On`]: agent_harness::SlashCommands::On

use std::sync::Arc;

use agent_compaction::CompactOnDemand;
use agent_core::{AgentId, ToolRegistry};
use agent_harness::session::{EndReason, Op};
use agent_tools::Workspace;

use super::output::Summary;

/// A slash command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlashCommand {
    /// What the commands do.
    Help,
    /// The tools the model is offered.
    Tools,
    /// The workspace's memories.
    Memory,
    /// The task board's tasks.
    Tasks,
    /// The team the session runs.
    Team,
    /// The MCP servers.
    Mcp,
    /// Summarize the conversation at the next request.
    Compact,
    /// A new conversation, same settings.
    Clear,
    /// Tokens and requests so far.
    Cost,
    /// End the session.
    Quit,
}

/// One row of the table: a command, its name (without the `/`) and what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandSpec {
    /// The command.
    pub command: SlashCommand,
    /// Its name, typed after `/`.
    pub name: &'static str,
    /// What it does, one line.
    pub about: &'static str,
}

const fn spec(command: SlashCommand, name: &'static str, about: &'static str) -> CommandSpec {
    CommandSpec {
        command,
        name,
        about,
    }
}

/// Every command, in the order `/help` lists them.
pub const COMMANDS: [CommandSpec; 10] = [
    spec(SlashCommand::Help, "help", "what each command does"),
    spec(
        SlashCommand::Tools,
        "tools",
        "the tools the model is offered",
    ),
    spec(SlashCommand::Memory, "memory", "the workspace's memories"),
    spec(SlashCommand::Tasks, "tasks", "the task board"),
    spec(SlashCommand::Team, "team", "the teammates and what they do"),
    spec(SlashCommand::Mcp, "mcp", "the MCP servers and their tools"),
    spec(
        SlashCommand::Compact,
        "compact",
        "summarize the conversation at the next request",
    ),
    spec(
        SlashCommand::Clear,
        "clear",
        "a new conversation, same settings",
    ),
    spec(SlashCommand::Cost, "cost", "requests and tokens so far"),
    spec(SlashCommand::Quit, "quit", "end the session"),
];

/// What a typed line is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// Not a command: a prompt.
    Prompt,
    /// A command.
    Command(SlashCommand),
    /// `/name` that is no command: the name.
    Unknown(String),
    /// A known command with something after it (commands take no arguments).
    Arguments(SlashCommand),
}

/// What `line` is: a command when it starts with `/` (after blanks).
pub fn parse(line: &str) -> Parsed {
    let Some(rest) = line.trim().strip_prefix('/') else {
        return Parsed::Prompt;
    };
    let (name, arguments) = match rest.split_once(char::is_whitespace) {
        Some((name, arguments)) => (name, arguments.trim()),
        None => (rest, ""),
    };
    match COMMANDS.iter().find(|spec| spec.name == name) {
        Some(spec) if arguments.is_empty() => Parsed::Command(spec.command),
        Some(spec) => Parsed::Arguments(spec.command),
        None => Parsed::Unknown(name.to_string()),
    }
}

/// `/help`'s text.
pub fn help() -> String {
    COMMANDS
        .iter()
        .map(|spec| format!("  /{:<9}{}\n", spec.name, spec.about))
        .collect()
}

/// The command names (with their `/`) that complete `typed`, in table order; none when
/// `typed` is not the start of a command name.
pub fn completions(typed: &str) -> Vec<String> {
    let Some(start) = typed.strip_prefix('/') else {
        return Vec::new();
    };
    COMMANDS
        .iter()
        .filter(|spec| spec.name.starts_with(start))
        .map(|spec| format!("/{}", spec.name))
        .collect()
}

fn name(command: SlashCommand) -> &'static str {
    COMMANDS
        .iter()
        .find(|spec| spec.command == command)
        .map_or("?", |spec| spec.name)
}

/// What the commands read: the session's workspace and the lead's tools.
#[derive(Debug, Clone)]
pub(crate) struct SlashContext {
    pub(crate) workspace: Workspace,
    pub(crate) tools: Arc<ToolRegistry>,
    /// `--board`: the board `/tasks` shows (empty: the workspace's SQLite board).
    pub(crate) board: String,
    /// The lead's compactor's handle (`/compact`).
    pub(crate) compact: CompactOnDemand,
}

/// What a command does: text for stdout or stderr, and what to submit to the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// For stdout (what was asked for).
    pub(crate) out: String,
    /// For stderr (a notice or an error).
    pub(crate) err: String,
    /// What the session is asked to do.
    pub(crate) op: Option<Op>,
}

impl Outcome {
    fn out(text: String) -> Self {
        Self {
            out: text,
            err: String::new(),
            op: None,
        }
    }

    fn err(text: String) -> Self {
        Self {
            out: String::new(),
            err: text,
            op: None,
        }
    }
}

/// What the line `parsed` does in a session whose lead is `lead`; `cost` is what the session
/// used so far. `None`: the line is a prompt.
pub(crate) fn run(
    parsed: Parsed,
    context: &SlashContext,
    lead: &AgentId,
    cost: &Summary,
) -> Option<Outcome> {
    let known = || {
        COMMANDS
            .iter()
            .map(|spec| format!("/{}", spec.name))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let command = match parsed {
        Parsed::Prompt => return None,
        Parsed::Command(command) => command,
        Parsed::Unknown(name) => {
            return Some(Outcome::err(format!(
                "unknown command /{name}; the commands are: {}\n",
                known()
            )));
        }
        Parsed::Arguments(command) => {
            let name = name(command);
            return Some(Outcome::err(format!("/{name} takes no arguments\n")));
        }
    };
    Some(match command {
        SlashCommand::Help => Outcome::out(help()),
        SlashCommand::Tools => Outcome::out(
            context
                .tools
                .names()
                .iter()
                .map(|name| format!("{name}\n"))
                .collect(),
        ),
        SlashCommand::Memory => view(|| super::memory::list_text(&context.workspace)),
        SlashCommand::Tasks => view(|| {
            super::board::show(&context.workspace, &context.board, super::board::View::List)
        }),
        SlashCommand::Team => view(|| super::team::team_table(&context.workspace)),
        SlashCommand::Mcp => view(|| super::mcp::list(&context.workspace)),
        SlashCommand::Compact => {
            context.compact.request();
            Outcome::err(COMPACT.to_string())
        }
        SlashCommand::Clear => Outcome {
            out: String::new(),
            err: "[clear] a new conversation: the next prompt starts it (and a new session)\n"
                .to_string(),
            op: Some(Op::Clear(lead.clone())),
        },
        SlashCommand::Cost => Outcome::out(format!(
            "requests: {}\ntokens in: {} (cached: {})\ntokens out: {}\nreplies without usage: {}\n",
            cost.requests,
            cost.input_tokens,
            cost.cached_tokens,
            cost.output_tokens,
            cost.replies_without_usage
        )),
        SlashCommand::Quit => Outcome {
            out: String::new(),
            err: String::new(),
            op: Some(Op::Shutdown(EndReason::Done)),
        },
    })
}

/// `/compact`'s notice. Nothing is sent now: the summary call is part of the next request,
/// made with the history that request has (chapter 8's summary, asked for instead of waited for).
const COMPACT: &str = "[compact] the next request summarizes the older part of the conversation \
(the newest rounds stay as they are); the stored history stays whole\n";

/// A listing read from the workspace. On a thread of its own: the board's reader runs a
/// runtime of its own, which cannot start inside the session's.
fn view(read: impl FnOnce() -> super::CliResult<String> + Send) -> Outcome {
    let read = std::thread::scope(|scope| scope.spawn(read).join());
    match read {
        Ok(Ok(text)) => Outcome::out(text),
        Ok(Err(err)) => Outcome::err(format!("error: {:#}\n", err.error)),
        Err(_) => Outcome::err("error: the listing failed\n".to_string()),
    }
}

#[cfg(test)]
mod tests;
