//! `agent-tutorial run` and the chapter binaries: one session with the chapter's agent as its
//! lead, driven one-shot (`--prompt`) or interactively, the terminal being the session's client.

use std::sync::Arc;

use agent_core::{ModelClient, RunError};
use agent_test_support::ScriptBook;

use crate::Profile;
use agent_harness::{Features, Input, ModelFallback, PromptStyle, ShellHooks};
use agent_openai::{ConfigOverrides, FallbackNeed, ModelEnv, OpenAiModel};
use agent_recovery::{Fallback, RetryPolicy};

use std::collections::{BTreeSet, VecDeque};
use std::io::IsTerminal;

use agent_core::AgentId;
use agent_harness::session::{EndReason, InterruptFrom, Mode, Op, Session, SessionHandle};

use super::client::{Client, ClientMode, Screen};
use super::deps::{ApproveMode, AuditedApproval, AuditedEvents, load_shell_hooks, terminal_width};
use super::line_editor::{Completion, LineEditor, spawn_editor};
use super::trust::HookTrust;
use super::{CliError, CliResult, RunArgs, open_workspace, runtime};
use crate::observer::CliObserver;
use crate::{AgentDeps, build_agent};

/// The model a run talks to: a script (offline; one per agent from chapter 15 on) or a real
/// server.
pub(super) enum ModelChoice {
    Scripted(Arc<ScriptBook>),
    /// The fallback model is built from chapter 11 on only.
    Real {
        model: Arc<OpenAiModel>,
        fallback: Option<Arc<OpenAiModel>>,
    },
}

/// Only a real server makes anyone wait: a script answers at once.
fn with_spinner(model: &Arc<OpenAiModel>) -> Arc<dyn ModelClient> {
    if crate::spinner::wanted() {
        Arc::new(crate::spinner::Spinning::new(model.clone()))
    } else {
        model.clone()
    }
}

impl ModelChoice {
    fn client(&self) -> Arc<dyn ModelClient> {
        self.client_for(&AgentId::lead())
    }

    /// The model agent `id` talks to: its own script, or the one server.
    pub(super) fn client_for(&self, id: &AgentId) -> Arc<dyn ModelClient> {
        match self {
            Self::Scripted(book) => book.model(id.as_str()),
            Self::Real { model, .. } => with_spinner(model),
        }
    }

    /// A script has no second model to switch to.
    pub(super) fn fallback(&self) -> Option<Fallback> {
        match self {
            Self::Real {
                fallback: Some(model),
                ..
            } => Some(Fallback {
                client: with_spinner(model),
                name: model.model().to_string(),
            }),
            _ => None,
        }
    }

    /// A script must be used up: leftovers mean the run took a different path than scripted.
    fn finish(&self) -> CliResult {
        match self {
            Self::Scripted(book) => book.finish().map_err(CliError::runtime),
            Self::Real { .. } => Ok(()),
        }
    }
}

/// The retry parameters the flags set; the rest are the policy's defaults.
pub(super) fn retry_policy(args: &RunArgs) -> RetryPolicy {
    RetryPolicy {
        max_attempts: args.retry_attempts,
        deadline: std::time::Duration::from_secs(args.retry_deadline),
        base: std::time::Duration::from_millis(args.retry_base_ms),
        ..RetryPolicy::default()
    }
}

fn choose_model(
    features: Features,
    stream: agent_openai::Streaming,
    args: &RunArgs,
    env: &ModelEnv,
    cache_key: Option<String>,
) -> CliResult<ModelChoice> {
    if let Some(script) = &args.script {
        // The message already names the cause; as a chain, `{:#}` would print it twice.
        let model = ScriptBook::from_file(script)
            .map_err(|err| CliError::usage(anyhow::anyhow!("{err}")))?;
        return Ok(ModelChoice::Scripted(Arc::new(model)));
    }
    let overrides = ConfigOverrides {
        base_url: args.base_url.clone(),
        model: args.model.clone(),
        sampling: agent_openai::Sampling {
            temperature: args.temperature,
            max_tokens: args.max_tokens,
        },
        request_timeout: Some(std::time::Duration::from_secs(args.request_timeout)),
        fallback_model: args.fallback_model.clone(),
        fallback: match features.fallback {
            ModelFallback::Required => FallbackNeed::Required,
            ModelFallback::NotUsed => FallbackNeed::NotUsed,
        },
    };
    let dotenv = std::env::current_dir().ok().map(|d| d.join(".env"));
    let config = agent_openai::resolve(&overrides, |k| env.get(k), dotenv.as_deref())
        .map_err(CliError::usage)?;
    tracing::info!(base_url = %config.base_url, model = %config.model, "model configuration");
    let build = |config: &agent_openai::OpenAiConfig| -> CliResult<OpenAiModel> {
        let model = OpenAiModel::new(config)
            .map_err(CliError::usage)?
            .streaming(stream);
        Ok(match &cache_key {
            Some(key) => model.prompt_cache_key(key.clone()),
            None => model,
        })
    };
    let model = build(&config)?;
    let fallback = match &config.fallback_model {
        Some(name) => Some(Arc::new(build(&agent_openai::OpenAiConfig {
            model: name.clone(),
            ..config.clone()
        })?)),
        None => None,
    };
    Ok(ModelChoice::Real {
        model: Arc::new(model),
        fallback,
    })
}

/// A new id for this session's `prompt_cache_key`, made once at start-up: random enough that
/// two sessions never share one (std's `RandomState` is seeded from the OS), and then the same
/// for every request, so the provider routes them all to one cache.
fn session_cache_key() -> String {
    use std::hash::{BuildHasher as _, Hasher as _};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    if let Ok(now) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        hasher.write_u128(now.as_nanos());
    }
    format!("agent-tutorial-{:016x}", hasher.finish())
}

/// `--memory-placement` means something only where the prompt is built at run time.
pub(crate) fn memory_placement(
    profile: Profile,
    placement: Option<super::PlacementArg>,
) -> CliResult<crate::MemoryPlacement> {
    match placement {
        Some(_) if profile.features().prompt == PromptStyle::Fixed => {
            Err(CliError::usage(anyhow::anyhow!(
                "--memory-placement needs chapter 10 or later: chapter {}'s system prompt is fixed (chapter 9 sends memory as its own message)",
                profile.chapter
            )))
        }
        placement => Ok(placement.unwrap_or_default().into()),
    }
}

/// `env` holds the `OPENAI_*` variables taken out of the process environment at start-up.
pub fn run(profile: Profile, args: &RunArgs, env: &ModelEnv) -> CliResult {
    let features = profile.features();
    let placement = memory_placement(profile, args.memory_placement)?;
    let workspace = open_workspace(args.workspace.as_deref())?;
    let stream = super::streaming::streaming(profile.chapter, features, args)?;
    let kept = super::sessions::setup(profile.chapter, features, args, &workspace)?;
    // Chapter 10 on: one prompt cache key for the whole session (see `session_cache_key`); a
    // continued session keeps the one it was started with, so its requests are the same bytes.
    let cache_key = (features.prompt == PromptStyle::Dynamic).then(|| {
        kept.as_ref()
            .and_then(|kept| kept.cache_key.clone())
            .unwrap_or_else(session_cache_key)
    });
    if let Some(kept) = &kept {
        kept.recorder.set_cache_key(cache_key.clone());
    }
    let model = Arc::new(choose_model(features, stream, args, env, cache_key)?);
    let observer = CliObserver::new(args.record.as_deref(), args.record_form).map_err(|err| {
        let path = args.record.as_deref().unwrap_or(std::path::Path::new("?"));
        CliError::usage(anyhow::anyhow!(
            "cannot open the --record file {}: {err}",
            path.display()
        ))
    })?;
    let observer = match args.cache_report {
        Some(_) => observer.with_cache_report(),
        None => observer,
    };
    let observer = Arc::new(match stream {
        agent_openai::Streaming::On => observer.with_streamed_text(),
        agent_openai::Streaming::Off => observer,
    });
    // Chapter 11 on, Ctrl-C cancels a turn and a second one quits; before, the first one ends
    // the session (and the command running with it).
    let mut session = Session::new(features.interrupts);
    let lead = AgentId::lead();
    let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let mut deps = AgentDeps::new(model.client(), workspace.clone());
    deps.memory_placement = placement;
    deps.retry = retry_policy(args);
    deps.fallback = model.fallback();
    deps.max_tokens = args.max_tokens;
    deps.events = Arc::new(AuditedEvents::new(
        &workspace,
        Arc::new(agent_workspace::SystemClock),
        lead.clone(),
        session.sink(&lead),
    ));
    deps.max_turns = args.max_turns;
    deps.final_answer = if args.final_answer {
        agent_core::FinalAnswer::OnLastRequest
    } else {
        agent_core::FinalAnswer::Off
    };
    deps.history_log = kept
        .as_ref()
        .map(|kept| kept.recorder.clone() as Arc<dyn agent_harness::HistoryLog>);
    let approval = match args.approve {
        // Asked through the session, so the question names who asks and Ctrl-C cancels it.
        ApproveMode::Prompt if terminal => session.approval(&lead),
        mode => mode.provider(),
    };
    deps.approval = Some(Arc::new(AuditedApproval::new(approval, &workspace)));
    // Skills and durable schedules only as the user trusted them (see `trust.rs`). One gate
    // for the run: the lead, its hooks and its teammates each say what they refused once.
    let gate = Arc::new(super::trust::StoreTrust::from_env(workspace.root()));
    if !args.trust_workspace {
        deps.trust = gate.clone();
    }
    if features.shell_hooks == ShellHooks::Loaded {
        let trust = if args.trust_workspace {
            HookTrust::Bypassed
        } else {
            HookTrust::Required
        };
        let loaded = load_shell_hooks(&workspace, &mut deps.hooks, trust, &gate)?;
        tracing::info!(hooks = loaded, "shell hooks loaded");
    }
    let rt = runtime()?;
    // Chapter 17 on: the task board every agent of the session shares.
    if features.board == agent_harness::Board::Shared {
        let board = super::board::open(&workspace, args.board.as_deref(), &rt)?;
        deps.board = Some(agent_harness::board_seat::BoardSeat::new(board));
    }
    // Chapter 18 on: the repository's worktrees, reconciled before the first turn.
    if features.worktrees == agent_harness::WorktreeUse::On {
        deps.worktrees = Some(super::worktrees::open(&workspace, &rt));
    }
    // Chapter 19 on: the trusted `.mcp.json`'s servers, started before the first turn.
    if features.mcp == agent_harness::McpUse::On {
        let trust = if args.trust_workspace {
            HookTrust::Bypassed
        } else {
            HookTrust::Required
        };
        deps.mcp = Some(super::mcp::open(&workspace, &gate, trust, &rt));
    }
    // Chapter 15 on: the lead can start teammates, each one more agent of this session.
    let team = super::team::attach(
        &mut session,
        profile,
        &mut deps,
        &gate,
        args,
        &model,
        terminal,
    )?;
    let compact = deps.compact_on_demand.clone();
    let mut agent = build_agent(profile, deps).map_err(CliError::usage)?;
    let (recorder, resumed) = match kept {
        Some(kept) => (Some(kept.recorder), kept.resumed),
        None => (None, None),
    };
    if let Some(history) = resumed {
        agent.resume(history);
    }
    // Chapter 20: slash commands at the prompt.
    let slash = (features.slash_commands == agent_harness::SlashCommands::On).then(|| {
        super::slash::SlashContext {
            workspace: workspace.clone(),
            tools: agent.tools().clone(),
            board: args.board.clone().unwrap_or_default(),
            compact,
        }
    });
    session.add(lead.clone(), agent);
    let terminal_mode = TerminalMode::save();
    let (mode, client_mode) = match &args.prompt {
        Some(_) => (Mode::OneShot, ClientMode::OneShot),
        None => (Mode::Interactive, ClientMode::Interactive),
    };
    let (reads_tx, reads) = tokio::sync::mpsc::unbounded_channel();
    let (asks, printer) = match mode {
        Mode::OneShot | Mode::UntilIdle => (None, None),
        Mode::Interactive => {
            // Chapter 11 on, a terminal gets a line editor; before, plain lines.
            let mut editor = match features.input {
                Input::LineEditor => LineEditor::open(if slash.is_some() {
                    Completion::SlashCommands
                } else {
                    Completion::Off
                }),
                Input::PlainLines => LineEditor::Plain,
            };
            let printer = editor.printer();
            (Some(spawn_editor(editor, reads_tx)), printer)
        }
    };
    let handle = session.handle();
    if let Some(prompt) = &args.prompt {
        handle.submit(Op::Prompt {
            agent: lead.clone(),
            text: prompt.clone(),
        });
    }
    let events = session
        .take_events()
        .ok_or_else(|| CliError::runtime(anyhow::anyhow!("the session has no event stream")))?;
    let summary = Arc::new(std::sync::Mutex::new(super::output::Summary::default()));
    let client = Client {
        handle: handle.clone(),
        lead,
        observer: observer.clone(),
        screen: Screen::new(printer),
        mode: client_mode,
        prompt: format!("ch{:02} >> ", profile.chapter),
        // With a team every line says who said it, the lead's too.
        agents: if team.is_some() {
            2
        } else {
            session.agents().len()
        },
        asks,
        reading: None,
        questions: VecDeque::new(),
        idle: false,
        interrupted_at_prompt: false,
        scheduled: BTreeSet::new(),
        width: terminal_width(),
        closing: false,
        format: args.output_format,
        summary: summary.clone(),
        slash,
        cost: super::output::Summary::default(),
    };
    let started = std::time::Instant::now();
    let end = rt.block_on(async {
        let signals = forward_signals(handle).map_err(CliError::runtime)?;
        let session = tokio::spawn(async move { session.run(mode).await });
        let end = client.run(events, reads).await;
        // The client returns on the session's last event; the session has returned too.
        let _ = session.await;
        signals.abort();
        Ok::<_, CliError>(end)
    })?;
    terminal_mode.restore();
    if let Some(team) = &team {
        super::team::close(team);
    }
    if args.output_format == super::output::OutputFormat::Json {
        let mut summary = std::mem::take(
            &mut *summary
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        summary.session_id = recorder.as_ref().and_then(|r| r.id());
        println!("{}", summary.finish(started.elapsed(), &end));
    }
    // Also after a failed run: the requests that were sent are what the report is about.
    if let Some(format) = args.cache_report {
        let format = if args.json {
            crate::cache_report::ReportFormat::Json
        } else {
            format
        };
        eprint!(
            "{}",
            crate::cache_report::render(&observer.cache_rows(), format)
        );
    }
    match end {
        EndReason::Done => model.finish(),
        EndReason::TurnFailed(err) => Err(CliError::runtime(err)),
        // A cancelled run took the path the user chose, not the scripted one: no script check.
        EndReason::Interrupted => Err(CliError::interrupted(match client_mode {
            ClientMode::OneShot => anyhow::Error::new(RunError::Cancelled),
            ClientMode::Interactive => anyhow::anyhow!("interrupted"),
        })),
        EndReason::Signal(signal) => Err(CliError {
            code: u8::try_from(128 + signal).unwrap_or(1),
            error: anyhow::anyhow!("ended by signal {signal}"),
        }),
    }
}

/// Turns signals into submissions: SIGINT is a Ctrl-C from outside the line editor (the
/// terminal between reads, `kill -INT`, a pipe's sender); SIGTERM and SIGHUP end the session
/// like a second Ctrl-C (jobs killed, their records closed as ended by the session).
fn forward_signals(handle: SessionHandle) -> std::io::Result<tokio::task::JoinHandle<()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    Ok(tokio::spawn(async move {
        loop {
            let op = tokio::select! {
                Some(()) = interrupt.recv() => Op::Interrupt(InterruptFrom::Signal),
                Some(()) = terminate.recv() => Op::Shutdown(EndReason::Signal(libc::SIGTERM)),
                Some(()) = hangup.recv() => Op::Shutdown(EndReason::Signal(libc::SIGHUP)),
                else => break,
            };
            if !handle.submit(op) {
                break;
            }
        }
    }))
}

/// The terminal's settings at start-up, put back at the end: a session ended by a signal while
/// the line editor had the terminal in raw mode must not leave it so.
struct TerminalMode(Option<libc::termios>);

impl TerminalMode {
    fn save() -> Self {
        if !std::io::stdin().is_terminal() {
            return Self(None);
        }
        let mut mode = std::mem::MaybeUninit::<libc::termios>::uninit();
        // SAFETY: `tcgetattr` writes a whole `termios` through the pointer when it returns 0,
        // and only then is it read.
        let saved = unsafe {
            (libc::tcgetattr(libc::STDIN_FILENO, mode.as_mut_ptr()) == 0)
                .then(|| mode.assume_init())
        };
        Self(saved)
    }

    fn restore(&self) {
        if let Some(mode) = &self.0 {
            // SAFETY: `mode` is a `termios` that `tcgetattr` filled in.
            unsafe {
                libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, mode);
            }
        }
    }
}
