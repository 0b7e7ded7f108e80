//! `agent-tutorial trust`: the user's consent before a workspace's hooks, durable schedules
//! and skills are used.
//!
//! A cloned repository can bring `.agent_tutorial/hooks.json` (commands run at every turn),
//! `.agent_tutorial/crons.json` (prompts run as user turns) and `skills/` (text in every
//! system prompt). So each kind is used only where the user trusted that exact content, the
//! way Claude Code trusts a folder: `trust` lists every item, escaped, asks, and records one
//! fingerprint per kind in the user's config directory (outside any workspace, where the
//! repository cannot write it; see `agent-trust`), keyed by the workspace's canonical path.
//! Any change by anyone else needs a new `trust`; what the harness writes itself (a schedule
//! the agent adds) is recorded as it writes it.

mod gate;

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;

use agent_cron::Schedule;
use agent_policy::escape_controls;
use agent_skills::SkillCatalog;
use agent_tools::{PathError, Workspace};
use agent_trust::{TrustKind, TrustStore, Verdict, WorkspaceEntry};
use clap::Args;

use super::deps::{HookSpec, parse_hooks};
use super::{CliError, CliResult, open_workspace};

pub use agent_trust::{StoreError as TrustError, read_bounded};
pub use gate::{StoreTrust, notice, shell_word};

/// The hooks file, relative to the workspace root.
pub const HOOKS_FILE: &str = ".agent_tutorial/hooks.json";
/// A larger hooks file is a configuration error, not something to read whole.
pub const MAX_HOOKS_FILE_BYTES: u64 = 1 << 20;

/// Whether a run asks the trust store before using what the workspace ships.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookTrust {
    /// Hooks, schedules, skills and MCP servers are used only if the user trusted them (the
    /// default).
    Required,
    /// `--trust-workspace`: use them without asking (CI, or a repository the user wrote).
    Bypassed,
}

/// Why the hooks file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum HooksReadError {
    /// The workspace boundary refused the file (a symlink out, not a regular file, I/O).
    #[error(transparent)]
    Boundary(#[from] PathError),
    /// The file is over the read limit.
    #[error("{} is larger than {limit} bytes", path.display())]
    TooLarge {
        /// The hooks file.
        path: PathBuf,
        /// The limit in bytes.
        limit: u64,
    },
}

/// The exact bytes of a workspace's hooks file, read once: what is shown, hashed and run is
/// the same content.
#[derive(Debug, Clone)]
pub struct HooksFile {
    /// The file's content.
    pub bytes: Vec<u8>,
}

impl HooksFile {
    /// Reads `.agent_tutorial/hooks.json` (`None` when there is none) through the workspace
    /// boundary: a symlink leading out (the file or the folder), a FIFO or anything but a
    /// regular file is refused, and at most [`MAX_HOOKS_FILE_BYTES`] are read.
    pub fn read(workspace: &Workspace) -> Result<Option<Self>, HooksReadError> {
        let path = workspace.inside(HOOKS_FILE)?;
        match workspace.read_bytes(&path, MAX_HOOKS_FILE_BYTES) {
            Ok(bytes) => Ok(Some(Self { bytes })),
            Err(err) if err.is_not_found() => Ok(None),
            Err(PathError::TooLarge { limit, .. }) => Err(HooksReadError::TooLarge {
                path: workspace.root().join(HOOKS_FILE),
                limit,
            }),
            Err(err) => Err(err.into()),
        }
    }

    /// Lower-case hex SHA-256 of the bytes.
    pub fn sha256(&self) -> String {
        agent_trust::sha256_hex(&self.bytes)
    }
}

/// Everything the workspace ships that `trust` covers, read once: what is listed is what is
/// fingerprinted.
struct Shipped {
    hooks: Vec<HookSpec>,
    schedules: Vec<Schedule>,
    skills: SkillCatalog,
    /// `.mcp.json` (chapter 19), parsed: a file that would not load is refused before it is
    /// trusted.
    mcp: Option<agent_mcp::ConfigFile>,
    fingerprints: BTreeMap<TrustKind, String>,
}

impl Shipped {
    fn read(workspace: &Workspace) -> CliResult<Self> {
        let mut fingerprints = BTreeMap::new();
        let hooks = match HooksFile::read(workspace).map_err(CliError::usage)? {
            Some(file) => {
                // A file that would not load is refused before it is trusted.
                let hooks = parse_hooks(&file.bytes).map_err(CliError::usage)?;
                fingerprints.insert(TrustKind::Hooks, file.sha256());
                hooks
            }
            None => Vec::new(),
        };
        let (schedules, print) =
            agent_cron::trust_gate::durable_schedules(workspace).map_err(CliError::usage)?;
        if let Some(print) = print {
            fingerprints.insert(TrustKind::Schedules, print);
        }
        let skills = SkillCatalog::scan(workspace);
        if let Some(print) = skills.fingerprint() {
            fingerprints.insert(TrustKind::Skills, print);
        }
        let mcp = agent_mcp::ConfigFile::load(workspace).map_err(CliError::usage)?;
        if let Some(file) = &mcp {
            fingerprints.insert(TrustKind::McpServers, file.fingerprint().to_string());
        }
        Ok(Self {
            hooks,
            schedules,
            skills,
            mcp,
            fingerprints,
        })
    }

    fn count(&self, kind: TrustKind) -> usize {
        match kind {
            TrustKind::Hooks => self.hooks.len(),
            TrustKind::Schedules => self.schedules.len(),
            TrustKind::Skills => self.skills.entries().len(),
            TrustKind::McpServers => self
                .mcp
                .as_ref()
                .map_or(0, |file| file.config().servers().len()),
        }
    }

    /// The items of `kind`, one block each, every text the repository wrote escaped.
    fn items(&self, kind: TrustKind) -> String {
        let mut out = String::new();
        match kind {
            TrustKind::Hooks => {
                for (index, hook) in self.hooks.iter().enumerate() {
                    let matcher = hook.matcher.as_deref().map_or("(any)".into(), shown);
                    out.push_str(&format!(
                        "  #{index} {:?} matcher: {matcher} timeout: {}s\n      {}\n",
                        hook.event,
                        hook.timeout.as_secs_f64(),
                        shown(&hook.command)
                    ));
                }
            }
            TrustKind::Schedules => {
                for s in &self.schedules {
                    out.push_str(&format!(
                        "  {} `{}` {}\n      {}\n",
                        escape_controls(&s.id.to_string()),
                        escape_controls(&s.cron),
                        escape_controls(&s.timezone),
                        shown(&s.prompt)
                    ));
                }
            }
            TrustKind::Skills => {
                for skill in self.skills.entries() {
                    out.push_str(&format!(
                        "  {}: {}\n",
                        escape_controls(&skill.name),
                        escape_controls(&skill.description)
                    ));
                }
            }
            TrustKind::McpServers => {
                let servers = self.mcp.as_ref().map(|file| file.config().servers());
                for (alias, server) in servers.into_iter().flatten() {
                    out.push_str(&super::mcp::describe_server(alias, server, shown));
                }
            }
        }
        out
    }

    /// The whole listing `trust` prints before it asks.
    fn listing(&self, recorded: &WorkspaceEntry, root: &str) -> String {
        let mut out = format!(
            "In {root}, this runs code or goes into the model's prompt (hooks run as you, with bash; schedules run as your prompts; skills are in every system prompt):\n"
        );
        for kind in TrustKind::ALL {
            let Some(print) = self.fingerprints.get(&kind) else {
                continue;
            };
            let state = match recorded.trusted.get(&kind).or(recorded.written.get(&kind)) {
                Some(old) if old == print => "trusted already",
                Some(_) => "changed since trusted",
                None => "not trusted",
            };
            out.push_str(&format!(
                "\n{} in {} ({}, {state}):\n{}",
                kind.noun(),
                kind.location(),
                self.count(kind),
                self.items(kind)
            ));
        }
        out
    }
}

/// A command or prompt as the user must see it: verbatim when every character shows as
/// itself, otherwise escaped and marked (a control or invisible character could make the
/// terminal show something other than what runs).
pub(super) fn shown(text: &str) -> String {
    let escaped = escape_controls(text);
    if escaped == text {
        escaped
    } else {
        format!("{escaped} (escaped: it holds control or invisible characters)")
    }
}

/// The options of `agent-tutorial trust`.
#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The workspace to review (default: the current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Forget the trust recorded for the workspace: its hooks, schedules, skills and MCP
    /// servers stop being used.
    #[arg(long, conflicts_with = "yes")]
    revoke: bool,
    /// Trust without asking (scripts). Read the listing first.
    #[arg(long)]
    yes: bool,
}

/// Whether the user said yes, asked on stderr, answered on stdin (end of input is no).
fn confirmed() -> CliResult<bool> {
    eprint!("Trust all of this for this workspace? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(CliError::runtime)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// `agent-tutorial trust [--workspace DIR] [--yes | --revoke]`. Needs no model configuration.
pub fn trust(args: &TrustArgs) -> CliResult {
    let workspace = open_workspace(args.workspace.as_deref())?;
    let root = workspace.root();
    let shown_root = escape_controls(&root.display().to_string());
    let store = TrustStore::from_env(|k| std::env::var_os(k)).map_err(CliError::usage)?;
    if args.revoke {
        if store.revoke(root).map_err(CliError::usage)? {
            println!(
                "Revoked: hooks, schedules, skills and MCP servers in {shown_root} are no longer used."
            );
        } else {
            println!("{shown_root} was not trusted; nothing to revoke.");
        }
        return Ok(());
    }
    let shipped = Shipped::read(&workspace)?;
    if shipped.fingerprints.is_empty() {
        println!(
            "Nothing in {shown_root} runs code or shapes the prompt (no hooks, durable schedules, skills or MCP servers); nothing to trust."
        );
        return Ok(());
    }
    let recorded = store.entry(root).map_err(CliError::usage)?;
    print!("{}", shipped.listing(&recorded, &shown_root));
    let _ = std::io::stdout().flush();
    if !args.yes && !confirmed()? {
        println!("Not trusted; nothing was recorded.");
        return Ok(());
    }
    store
        .trust(root, &shipped.fingerprints)
        .map_err(CliError::usage)?;
    let kinds: Vec<&str> = shipped.fingerprints.keys().map(|k| k.noun()).collect();
    println!(
        "Trusted {} until they change (recorded in {}).",
        kinds.join(", "),
        escape_controls(&store.path().display().to_string())
    );
    Ok(())
}

/// The verdict for the hooks file `file`, reported through `gate` when it is not trusted.
/// A trust store that cannot be read is an error here (a run stops with a configuration
/// error rather than run without the hooks the user trusted).
pub fn hooks_verdict(
    gate: &StoreTrust,
    file: &HooksFile,
    hooks: usize,
) -> Result<Verdict, TrustError> {
    use agent_trust::WorkspaceTrust;
    let verdict = gate.try_verdict(TrustKind::Hooks, &file.sha256())?;
    if verdict != Verdict::Trusted {
        gate.refused(TrustKind::Hooks, verdict, hooks);
    }
    Ok(verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_that_show_as_themselves_are_printed_verbatim() {
        assert_eq!(shown(r#"echo '{"a": "b\n"}'"#), r#"echo '{"a": "b\n"}'"#);
        assert_eq!(shown("ls é"), "ls é");
    }

    #[test]
    fn control_bidi_and_invisible_characters_are_escaped() {
        assert_eq!(
            shown("ls\u{1b}[2K\rrm -rf ~"),
            r"ls\e[2K\rrm -rf ~ (escaped: it holds control or invisible characters)"
        );
        assert_eq!(
            shown("echo \u{202e}fdp.exe\u{3164}"),
            r"echo \u{202e}fdp.exe\u{3164} (escaped: it holds control or invisible characters)"
        );
    }
}
