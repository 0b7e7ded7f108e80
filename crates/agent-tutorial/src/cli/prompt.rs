//! `agent-tutorial prompt`: what a chapter sends, without a model or credentials.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use agent_core::{ModelClient, ModelError, ModelReply, ModelRequest};

use crate::Profile;
use agent_policy::sanitize;
use agent_trust::{TrustKind, Verdict, WorkspaceTrust};
use async_trait::async_trait;
use clap::Args;

use super::trust::{StoreTrust, notice};
use super::{CliError, CliResult, open_workspace, runtime};
use crate::render;
use crate::{AgentDeps, build_preview_agent};

#[derive(Debug, Clone, Args)]
pub struct PromptArgs {
    /// The chapter whose first request to show.
    #[arg(long)]
    chapter: u8,
    /// The user prompt to put in the request.
    #[arg(short, long, default_value = "<your prompt>")]
    prompt: String,
    /// The workspace the request is built for (default: the current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Print the exact Chat Completions request body as JSON (not with --diff: the diff
    /// compares the readable rendering).
    #[arg(long, conflicts_with = "diff")]
    json: bool,
    /// Print a unified diff against chapter M's first request instead (default: the chapter
    /// before), to see exactly what a chapter changes in what the model receives.
    #[arg(long, value_name = "M", num_args = 0..=1, default_missing_value = "0")]
    diff: Option<u8>,
    /// The model name to put in the JSON body (default: OPENAI_MODEL, else a placeholder).
    #[arg(long)]
    model: Option<String>,
    /// Chapter 10 on: where the selected memories go, as with `run` (default: `prompt`).
    #[arg(long, value_enum, value_name = "WHERE")]
    memory_placement: Option<super::PlacementArg>,
    /// Show the workspace's skills without the trust recorded by `agent-tutorial trust`, as
    /// `run --trust-workspace` uses them. Without it the preview leaves out what a run would.
    #[arg(long, alias = "trust-hooks")]
    trust_workspace: bool,
}

/// The user's trust store as a run asks it, except that what a run would leave out is kept
/// for the preview to name (a run says it on stderr as it starts) and nothing is recorded (a
/// preview writes nothing).
struct PreviewTrust {
    store: StoreTrust,
    /// Each kind left out, with its verdict and how many items it held, in the order asked.
    left_out: Mutex<Vec<(TrustKind, Verdict, usize)>>,
}

impl PreviewTrust {
    fn new(root: &Path) -> Self {
        Self {
            store: StoreTrust::from_env(root),
            left_out: Mutex::default(),
        }
    }

    /// One line per kind left out, as a run words it (see [`notice`]).
    fn lines(&self, root: &Path) -> Vec<String> {
        self.left_out
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|&(kind, verdict, count)| notice(kind, verdict, count, root))
            .collect()
    }
}

impl WorkspaceTrust for PreviewTrust {
    fn verdict(&self, kind: TrustKind, fingerprint: &str) -> Verdict {
        self.store.verdict(kind, fingerprint)
    }

    fn record_written(&self, _kind: TrustKind, _fingerprint: &str) {}

    fn refused(&self, kind: TrustKind, verdict: Verdict, count: usize) {
        let mut left_out = self.left_out.lock().unwrap_or_else(PoisonError::into_inner);
        // `--diff` builds two requests: each kind is named once.
        if left_out.iter().all(|(seen, _, _)| *seen != kind) {
            left_out.push((kind, verdict, count));
        }
    }
}

/// A model that must never be called: `prompt` only builds requests.
struct NoModel;

#[async_trait]
impl ModelClient for NoModel {
    async fn complete(&self, _request: &ModelRequest) -> Result<ModelReply, ModelError> {
        Err(ModelError::InvalidResponse {
            message: "`prompt` never calls a model".into(),
        })
    }
}

/// The first request chapter `chapter` sends for `prompt` in `workspace`, with what the
/// workspace ships used as `trust` says.
pub fn first_request(
    profile: Profile,
    workspace: agent_tools::Workspace,
    prompt: &str,
    placement: crate::MemoryPlacement,
    trust: Arc<dyn WorkspaceTrust>,
) -> CliResult<ModelRequest> {
    let mut deps = AgentDeps::new(Arc::new(NoModel), workspace);
    deps.memory_placement = placement;
    deps.trust = trust;
    // Chapter 15 on: the lead's team tools, over a team that starts nobody (before, the
    // seat is unused).
    agent_harness::team_runtime::preview(&mut deps);
    // Chapter 17 on: the board's tools, over a board that opens nothing.
    if profile.features().board == agent_harness::Board::Shared {
        deps.board = Some(agent_harness::board_seat::BoardSeat::preview());
    }
    // Chapter 18 on: the worktree tools; building them runs no git and writes nothing.
    if profile.features().worktrees == agent_harness::WorktreeUse::On {
        deps.worktrees = Some(agent_worktree::Worktrees::new(
            agent_worktree::Git::new(&deps.workspace),
            Arc::new(agent_workspace::SystemClock),
        ));
    }
    // Chapter 19 on: the MCP tools, over servers that are never started.
    if profile.features().mcp == agent_harness::McpUse::On {
        deps.mcp = Some(Arc::new(agent_harness::mcp_hub::McpHub::new(
            deps.workspace.clone(),
            None,
        )));
    }
    let agent = build_preview_agent(profile, deps, prompt).map_err(CliError::usage)?;
    runtime()?
        .block_on(agent.preview_request(prompt))
        .map_err(CliError::runtime)
}

pub fn prompt(args: &PromptArgs, env: &agent_openai::ModelEnv) -> CliResult {
    let profile = Profile::for_chapter(args.chapter).map_err(CliError::usage)?;
    let placement = super::run::memory_placement(profile, args.memory_placement)?;
    let workspace = open_workspace(args.workspace.as_deref())?;
    let root = workspace.root().to_path_buf();
    let preview_trust = Arc::new(PreviewTrust::new(&root));
    let trust: Arc<dyn WorkspaceTrust> = if args.trust_workspace {
        Arc::new(agent_trust::TrustAll)
    } else {
        preview_trust.clone()
    };
    let request = first_request(
        profile,
        workspace.clone(),
        &args.prompt,
        placement,
        trust.clone(),
    )?;
    if let Some(base) = args.diff {
        let base = match base {
            0 if profile.chapter <= 1 => {
                return Err(CliError::usage(anyhow::anyhow!(
                    "chapter {} has no previous chapter to compare with; name one with --diff M",
                    profile.chapter
                )));
            }
            // The closest built chapter before it: a planned one in between has no request.
            0 => Profile::built()
                .filter(|p| p.chapter < profile.chapter)
                .last()
                .map_or(profile.chapter - 1, |p| p.chapter),
            base => base,
        };
        let base_profile = Profile::for_chapter(base).map_err(CliError::usage)?;
        // The base chapter gets the same placement where it has one (chapter 10 on).
        let base_placement = match base_profile.features().prompt {
            agent_harness::PromptStyle::Dynamic => placement,
            agent_harness::PromptStyle::Fixed => crate::MemoryPlacement::default(),
        };
        let base_request =
            first_request(base_profile, workspace, &args.prompt, base_placement, trust)?;
        let diff = render::unified_diff(
            &render::full(&base_request),
            &render::full(&request),
            &format!("chapter {base} ({})", base_profile.id()),
            &format!("chapter {} ({})", profile.chapter, profile.id()),
        );
        left_out_on_stderr(&preview_trust.lines(&root));
        if diff.is_empty() {
            println!(
                "The first request of chapter {} is identical to chapter {base}'s: the chapter changes what happens around the model, not what it is sent first.",
                profile.chapter
            );
        } else {
            print!("{}", sanitize(&diff));
        }
    } else if args.json {
        let model = args
            .model
            .clone()
            .or_else(|| env.get(agent_openai::config::MODEL_VAR))
            .unwrap_or_else(|| "$OPENAI_MODEL".to_string());
        let mut body =
            agent_openai::to_chat_request(&model, agent_openai::Sampling::default(), &request);
        // A run makes one key per session (chapter 10 on); a preview has no session.
        if profile.features().prompt == agent_harness::PromptStyle::Dynamic {
            body.prompt_cache_key = Some("<session id>".to_string());
        }
        left_out_on_stderr(&preview_trust.lines(&root));
        let text = serde_json::to_string_pretty(&body).map_err(CliError::runtime)?;
        println!("{}", json_for_terminal(&text));
    } else {
        println!(
            "# chapter {} ({}): the first request, as the model receives it",
            profile.chapter,
            profile.id()
        );
        // What a run would leave out is named under the title, as a comment of the preview.
        for line in preview_trust.lines(&root) {
            println!("# left out: {}", sanitize(&line));
        }
        // The prompt holds a repository's skills, stored tasks and memory: shown, never run.
        print!("{}", sanitize(&render::full(&request)));
    }
    Ok(())
}

/// What a run would leave out, for the forms whose standard output is only JSON or a diff.
fn left_out_on_stderr(lines: &[String]) {
    for line in lines {
        eprintln!("{}", sanitize(line));
    }
}

/// Pretty JSON for the terminal: every character the sanitizer would escape becomes a JSON
/// `\uXXXX` escape instead (`serde_json` leaves C1 controls, bidi and invisible characters
/// raw), so the output still parses and means the same. The layout's own line feeds stay.
fn json_for_terminal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c != '\n' && agent_policy::sanitize::needs_escape(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::json_for_terminal;

    #[test]
    fn json_output_escapes_what_the_terminal_would_act_on_and_still_parses() {
        let body =
            serde_json::json!({"content": "a\u{202e}b\u{9b}2J\u{e0101}\u{1b}]52;c;eA==\u{7}"});
        let text = serde_json::to_string_pretty(&body).unwrap();
        let shown = json_for_terminal(&text);
        assert_eq!(
            shown,
            "{\n  \"content\": \"a\\u202eb\\u009b2J\\udb40\\udd01\\u001b]52;c;eA==\\u0007\"\n}"
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&shown).unwrap(),
            body
        );
    }
}
