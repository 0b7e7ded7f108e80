//! Sessions that can be continued (chapter 11 on): every run keeps the lead's history in
//! `.agent_tutorial/sessions/` ([`SessionRecorder`]); `--continue` / `--resume ID` start from
//! one ([`setup`]); `agent-tutorial sessions list` shows them ([`sessions`]).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use agent_core::Message;
use agent_harness::{Features, HistoryLog, ModelFallback};
use agent_sessions::{
    Appended, Header, LIMITS, Line, Listed, SealStore, SessionError, SessionId, SessionWriter,
    Status,
};
use agent_tools::Workspace;
use clap::{Args, Subcommand};

use super::{CliError, CliResult, RunArgs, open_workspace};

#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// The workspace whose sessions to show (default: the current directory).
    #[arg(long, value_name = "DIR", global = true)]
    workspace: Option<PathBuf>,
    #[command(subcommand)]
    command: SessionsCommand,
}

#[derive(Debug, Subcommand)]
enum SessionsCommand {
    /// One line per session, oldest first: id, start, chapter, turns, whether it can be
    /// continued, first prompt.
    List,
}

/// `agent-tutorial sessions list`.
pub fn sessions(args: &SessionsArgs) -> CliResult {
    let workspace = open_workspace(args.workspace.as_deref())?;
    let SessionsCommand::List = args.command;
    let seals = seal_store(&workspace).map_err(CliError::usage)?;
    let listed = agent_sessions::list(&workspace, &seals, LIMITS).map_err(CliError::runtime)?;
    // First prompts and unreadable files' reasons are a repository's or a person's text.
    print!("{}", agent_policy::sanitize(&table(&listed)));
    Ok(())
}

/// The table `sessions list` prints.
pub(crate) fn table(listed: &[Listed]) -> String {
    if listed.is_empty() {
        return "(no sessions)\n".to_string();
    }
    let mut out = format!(
        "{:<22}  {:<20}  {:>2}  {:>5}  {:<9}  FIRST PROMPT\n",
        "ID", "STARTED", "CH", "TURNS", "STATE"
    );
    for session in listed {
        let (started, chapter, prompt) = match &session.header {
            Some(h) => (
                h.started.as_str(),
                h.chapter.to_string(),
                first_line(&h.first_prompt),
            ),
            None => ("-", "-".to_string(), String::new()),
        };
        let (state, prompt) = match &session.status {
            Status::Sealed => ("ok", prompt),
            Status::Unsealed => ("unsealed", prompt),
            Status::Changed => ("changed", prompt),
            Status::Linked => ("linked", prompt),
            Status::Truncated => ("truncated", prompt),
            Status::Unreadable(why) => ("refused", first_line(why)),
        };
        out.push_str(&format!(
            "{:<22}  {:<20}  {:>2}  {:>5}  {:<9}  {prompt}\n",
            session.id, started, chapter, session.turns, state
        ));
    }
    out
}

/// The first line of `text`, at most 60 characters.
fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

/// The seals of `workspace`'s sessions, in the user's config folder (next to the trust
/// store, outside every workspace).
fn seal_store(workspace: &Workspace) -> Result<SealStore, agent_trust::StoreError> {
    let trust = agent_trust::TrustStore::from_env(|k| std::env::var_os(k))?;
    // `<config>/agent-tutorial/trusted.json` -> `<config>`.
    let config = trust
        .path()
        .parent()
        .and_then(std::path::Path::parent)
        .unwrap_or(std::path::Path::new("/"));
    Ok(SealStore::new(config, workspace.root()))
}

/// What a run starts with: where its history goes and, when it continues a session, that
/// session's history.
pub(super) struct SessionSetup {
    pub(super) recorder: Arc<SessionRecorder>,
    pub(super) resumed: Option<Vec<Message>>,
    /// The `prompt_cache_key` the continued session was started with (chapter 10 on).
    pub(super) cache_key: Option<String>,
}

/// Chapter 11 on (the chapter that owns the transport, like `--stream`): the recorder for this
/// run, continuing the session `--continue` or `--resume` names. Before chapter 11 nothing is
/// kept, and the flags are refused.
pub(super) fn setup(
    chapter: u8,
    features: Features,
    args: &RunArgs,
    workspace: &Workspace,
) -> CliResult<Option<SessionSetup>> {
    let asked = args.continue_session || args.resume.is_some();
    if features.fallback != ModelFallback::Required {
        if asked {
            let flag = if args.continue_session {
                "--continue"
            } else {
                "--resume"
            };
            return Err(CliError::usage(anyhow::anyhow!(
                "{flag} needs chapter 11 or later (the chapter that owns the transport); chapter {chapter} keeps no session"
            )));
        }
        return Ok(None);
    }
    let seals = match seal_store(workspace) {
        Ok(seals) => seals,
        Err(err) if asked => return Err(CliError::usage(err)),
        Err(err) => {
            tracing::warn!("this session is not kept: {err}");
            return Ok(None);
        }
    };
    let recorder = |writer, kept| {
        Arc::new(SessionRecorder {
            workspace: workspace.clone(),
            seals: seals.clone(),
            chapter,
            cache_key: Mutex::new(None),
            state: Mutex::new(Recording {
                writer,
                kept,
                turn_pending: false,
                failed: false,
            }),
        })
    };
    if !asked {
        return Ok(Some(SessionSetup {
            recorder: recorder(None, 0),
            resumed: None,
            cache_key: None,
        }));
    }
    let id = match &args.resume {
        Some(id) => SessionId::parse(id).ok_or_else(|| SessionError::BadId { id: id.clone() }),
        None => agent_sessions::latest(workspace),
    }
    .map_err(CliError::usage)?;
    // The message names the file and the cause; as a chain, `{:#}` would repeat the cause. A
    // parser's message can quote the file (an unknown `kind`): it passes the sanitizer.
    let (writer, loaded) =
        SessionWriter::resume(workspace, seals.clone(), &id, LIMITS).map_err(|err| {
            CliError::usage(anyhow::anyhow!(
                "{}",
                agent_policy::escape_controls(&err.to_string())
            ))
        })?;
    if loaded.header.chapter != chapter {
        return Err(CliError::usage(anyhow::anyhow!(
            "session {id} ran chapter {}; continue it with that chapter (its tools and prompt are that chapter's)",
            loaded.header.chapter
        )));
    }
    Ok(Some(SessionSetup {
        recorder: recorder(Some(writer), loaded.messages.len()),
        resumed: Some(loaded.messages),
        cache_key: loaded.header.cache_key,
    }))
}

/// Writes the lead's history to its session file as it grows ([`HistoryLog`]). The file is
/// made at the first turn (its header holds the first prompt); `/clear` starts a new one.
/// A failure to write is said once and the session goes on unkept.
#[derive(Debug)]
pub(crate) struct SessionRecorder {
    workspace: Workspace,
    seals: SealStore,
    chapter: u8,
    /// The run's `prompt_cache_key`, kept in each new session's header.
    cache_key: Mutex<Option<String>>,
    state: Mutex<Recording>,
}

#[derive(Debug)]
struct Recording {
    writer: Option<SessionWriter>,
    /// Messages of the history already in the file.
    kept: usize,
    /// A turn started and its marker is not written yet (it goes before its first message).
    turn_pending: bool,
    /// Writing failed: nothing more is tried.
    failed: bool,
}

impl SessionRecorder {
    /// The `prompt_cache_key` this run sends (chapter 10 on): new sessions keep it in their
    /// header, and continuing one sends it again.
    pub(crate) fn set_cache_key(&self, key: Option<String>) {
        *self
            .cache_key
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = key;
    }

    /// The id of the session being kept (`None` before the first turn, or when it failed).
    pub(crate) fn id(&self) -> Option<String> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.writer.as_ref().map(|w| w.id().to_string())
    }
}

impl Recording {
    fn append(&mut self, line: &Line) {
        let Some(writer) = &mut self.writer else {
            return;
        };
        match writer.append(line) {
            Ok(Appended::Kept | Appended::Stopped) => {}
            Ok(Appended::LimitReached) => tracing::warn!(
                "session {} reached its size bound: the rest of it is not kept",
                writer.id()
            ),
            Err(err) => self.fail(&err),
        }
    }

    fn fail(&mut self, err: &SessionError) {
        tracing::warn!("this session is no longer kept: {err}");
        self.failed = true;
        self.writer = None;
    }
}

impl HistoryLog for SessionRecorder {
    fn turn_started(&self, prompt: &str) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.failed {
            return;
        }
        if state.writer.is_none() {
            let mut header = Header::start(self.chapter, prompt);
            header.cache_key = self
                .cache_key
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            match SessionWriter::create(&self.workspace, self.seals.clone(), header, LIMITS) {
                Ok(writer) => state.writer = Some(writer),
                Err(err) => return state.fail(&err),
            }
        }
        state.turn_pending = true;
    }

    fn observe(&self, history: &[Arc<Message>]) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.writer.is_none() || history.len() <= state.kept {
            return;
        }
        if std::mem::take(&mut state.turn_pending) {
            state.append(&Line::Turn);
        }
        let kept = state.kept;
        for message in &history[kept..] {
            state.append(&Line::Message {
                message: Message::clone(message),
            });
        }
        state.kept = history.len();
    }

    fn cleared(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.writer = None;
        state.kept = 0;
        state.turn_pending = false;
    }
}
