//! Chapters 15–16 in the CLI: the team set up for a run (a teammate's dependencies are the
//! lead's settings, with its own sink and approval questions naming it), and the read-only
//! `agent-tutorial team list` and `agent-tutorial mailbox NAME`, which work without a key.

use std::path::PathBuf;
use std::sync::Arc;

use agent_core::AgentId;
use agent_cron::SystemClock;
use agent_harness::session::Session;
use agent_harness::team_runtime::{
    SHUTDOWN_DEADLINE, SessionTeam, TeamSetup, TeammateDeps, attach as attach_team,
};
use agent_policy::sanitize;
use agent_team::{MailKind, Mailbox, TeamFile};
use agent_tools::Workspace;
use clap::{Args, Subcommand};

use super::deps::{ApproveMode, AuditedApproval, AuditedEvents, load_shell_hooks};
use super::run::{ModelChoice, retry_policy};
use super::trust::{HookTrust, StoreTrust};
use super::{CliError, CliResult, RunArgs, open_workspace};
use crate::{AgentDeps, Profile};

/// Sets up the team of a run whose lead has `lead_deps` (chapter 15 on; `false` before).
/// A teammate gets the lead's model settings, approval mode, hooks, trust and memory placement; its events and
/// questions carry its name. `gate` is the lead's trust store: shared, so what it refused
/// (hooks nobody trusted) is said once per run, not once more per teammate.
pub(super) fn attach(
    session: &mut Session,
    profile: Profile,
    lead_deps: &mut AgentDeps,
    gate: &Arc<StoreTrust>,
    args: &RunArgs,
    model: &Arc<ModelChoice>,
    terminal: bool,
) -> CliResult<Option<Arc<SessionTeam>>> {
    let spec = crate::agents::spec(profile).map_err(CliError::usage)?;
    let workspace = lead_deps.workspace.clone();
    let one_shot = args.prompt.is_some();
    let (args, model) = (args.clone(), model.clone());
    let ws = workspace.clone();
    let gate = gate.clone();
    // A teammate reads the project's memory where the lead's chapter places it.
    let placement = lead_deps.memory_placement;
    let teammate_deps: TeammateDeps = Arc::new(move |name: &AgentId, joiner| {
        let mut deps = AgentDeps::new(model.client_for(name), ws.clone());
        deps.memory_placement = placement;
        deps.retry = retry_policy(&args);
        deps.fallback = model.fallback();
        deps.max_tokens = args.max_tokens;
        deps.max_turns = args.max_turns;
        deps.final_answer = if args.final_answer {
            agent_core::FinalAnswer::OnLastRequest
        } else {
            agent_core::FinalAnswer::Off
        };
        deps.events = Arc::new(AuditedEvents::new(
            &ws,
            Arc::new(SystemClock),
            name.clone(),
            joiner.sink(name),
        ));
        let approval = match args.approve {
            ApproveMode::Prompt if terminal => joiner.approval(name),
            mode => mode.provider(),
        };
        deps.approval = Some(Arc::new(AuditedApproval::new(approval, &ws)));
        if !args.trust_workspace {
            deps.trust = gate.clone();
        }
        let trust = if args.trust_workspace {
            HookTrust::Bypassed
        } else {
            HookTrust::Required
        };
        load_shell_hooks(&ws, &mut deps.hooks, trust, &gate)
            .map_err(|err| Box::<dyn std::error::Error + Send + Sync>::from(err.error))?;
        Ok(deps)
    });
    let setup = TeamSetup {
        workspace,
        clock: Arc::new(SystemClock),
        shutdown_deadline: SHUTDOWN_DEADLINE,
        teammate_deps,
    };
    let team = attach_team(session, &spec, lead_deps, setup).map_err(CliError::runtime)?;
    // Chapter 17, one-shot: nobody adds tasks after the prompt, so a teammate that finds
    // nothing open rests at once instead of keeping the run going for the idle limit.
    if let Some(team) = &team
        && one_shot
    {
        team.set_idle_limit(std::time::Duration::ZERO);
    }
    Ok(team)
}

/// After the session ended: what a cut-short teammate turn still holds goes back to `ready`
/// (the session's end tried once; this is the retry), and what cannot is said, escaped. The
/// next session's start puts it back otherwise.
pub(super) fn close(team: &SessionTeam) {
    if let Err(err) = team.close() {
        eprintln!("team: {}", agent_policy::escape_controls(&err.to_string()));
    }
}

#[derive(Debug, Args)]
pub struct TeamArgs {
    /// The workspace whose `.agent_tutorial/team.json` to read (default: the current directory).
    #[arg(long, value_name = "DIR", global = true)]
    workspace: Option<PathBuf>,
    #[command(subcommand)]
    command: TeamCommand,
}

#[derive(Debug, Subcommand)]
enum TeamCommand {
    /// One line per teammate of the last session: name, status, role, current message, last
    /// result.
    List,
}

/// `agent-tutorial team list`.
pub fn team(args: &TeamArgs) -> CliResult {
    let workspace = open_workspace(args.workspace.as_deref())?;
    match args.command {
        TeamCommand::List => print!("{}", sanitize(&team_table(&workspace)?)),
    }
    Ok(())
}

/// The longest result or message head shown on one line, in characters.
const HEAD_CHARS: usize = 80;

/// The first line of `text`, cut to [`HEAD_CHARS`].
fn head(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut cut: String = line.chars().take(HEAD_CHARS).collect();
    if cut.len() < line.len() || text.lines().nth(1).is_some() {
        cut.push('…');
    }
    cut
}

pub(super) fn team_table(workspace: &Workspace) -> CliResult<String> {
    let loaded = TeamFile::new(workspace).load().map_err(CliError::runtime)?;
    let mut out = String::new();
    if loaded.records.is_empty() {
        out.push_str("no teammates (a chapter 15 session's lead starts them)\n");
    }
    for r in &loaded.records {
        out.push_str(&format!("{}: {} ({})\n", r.name, r.status, r.role));
        if let Some(current) = &r.current {
            out.push_str(&format!("  working on message {current}\n"));
        }
        if let Some(result) = &r.last_result {
            out.push_str(&format!("  last result: {}\n", head(result)));
        }
    }
    if loaded.skipped > 0 {
        out.push_str(&format!(
            "warning: {} more records in the team file were left out (at most {} are read)\n",
            loaded.skipped,
            agent_team::roster::MAX_TEAMMATES
        ));
    }
    Ok(out)
}

#[derive(Debug, Args)]
pub struct MailboxArgs {
    /// Whose mailbox: `lead` or a teammate's name.
    name: String,
    /// The workspace whose `.agent_tutorial/mail/` to read (default: the current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
}

/// How many waiting messages `mailbox NAME` shows.
const HEADS: usize = 5;

/// `agent-tutorial mailbox NAME`.
pub fn mailbox(args: &MailboxArgs) -> CliResult {
    let workspace = open_workspace(args.workspace.as_deref())?;
    // A slug or nothing: a name cannot reach outside `.agent_tutorial/mail/`.
    let name = AgentId::new(&args.name).map_err(CliError::usage)?;
    print!("{}", sanitize(&mailbox_text(&workspace, &name)?));
    Ok(())
}

fn mailbox_text(workspace: &Workspace, name: &AgentId) -> CliResult<String> {
    let mailbox = Mailbox::new(workspace.clone(), Arc::new(SystemClock));
    let counts = mailbox.counts(name).map_err(CliError::runtime)?;
    let mut out = format!(
        "mailbox {name}: ready {}, processing {}, done {}, quarantine {}\n",
        counts.ready, counts.processing, counts.done, counts.quarantine
    );
    for m in mailbox.peek(name, HEADS).map_err(CliError::runtime)? {
        let kind = match &m.kind {
            MailKind::Message => "message".to_string(),
            MailKind::Result => "result".to_string(),
            MailKind::Request {
                request_id,
                request,
            } => format!("{request} request {}", request_id.0),
            MailKind::Response {
                request_id,
                request,
                decision,
            } => format!("{request} {decision} {}", request_id.0),
        };
        out.push_str(&format!(
            "  ready {} from {} ({kind}): {}\n",
            m.id,
            m.from,
            head(&m.body)
        ));
    }
    for q in mailbox.quarantined(name).map_err(CliError::runtime)? {
        // Our own words (bounded when read back), so the first line is shown whole.
        let reason = q.reason.lines().next().unwrap_or_default();
        out.push_str(&format!("  quarantined {}: {reason}\n", q.file));
    }
    Ok(out)
}
