//! `agent-tutorial run` and the chapter binaries: one turn, or an interactive loop.

use std::sync::Arc;

use agent_core::{ModelClient, RunError, TurnOutcome};
use agent_test_support::ScriptedModel;

use crate::{Capability, Profile};
use agent_openai::{ConfigOverrides, FallbackNeed, ModelEnv, OpenAiModel};
use agent_recovery::{Fallback, RetryPolicy};

use super::deps::{JsonlAudit, load_shell_hooks};
use super::interrupt::Interrupts;
use super::line_editor::{Input, LineEditor};
use super::trust::HookTrust;
use super::{CliError, CliResult, RunArgs, open_workspace, runtime};
use crate::bootstrap::{Agent, AgentDeps, build_agent};
use crate::observer::CliObserver;

/// The model a run talks to: a script (offline) or a real server.
enum ModelChoice {
    Scripted(Arc<ScriptedModel>),
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
        match self {
            Self::Scripted(model) => model.clone(),
            Self::Real { model, .. } => with_spinner(model),
        }
    }

    /// A script has no second model to switch to.
    fn fallback(&self) -> Option<Fallback> {
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
            Self::Scripted(model) => model.finish().map_err(CliError::runtime),
            Self::Real { .. } => Ok(()),
        }
    }
}

/// The retry parameters the flags set; the rest are the policy's defaults.
fn retry_policy(args: &RunArgs) -> RetryPolicy {
    RetryPolicy {
        max_attempts: args.retry_attempts,
        deadline: std::time::Duration::from_secs(args.retry_deadline),
        base: std::time::Duration::from_millis(args.retry_base_ms),
        ..RetryPolicy::default()
    }
}

fn choose_model(profile: Profile, args: &RunArgs, env: &ModelEnv) -> CliResult<ModelChoice> {
    if let Some(script) = &args.script {
        // The message already names the cause; as a chain, `{:#}` would print it twice.
        let model = ScriptedModel::from_file(script)
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
        fallback: if profile.has(Capability::Recovery) {
            FallbackNeed::Required
        } else {
            FallbackNeed::NotUsed
        },
    };
    let dotenv = std::env::current_dir().ok().map(|d| d.join(".env"));
    let config = agent_openai::resolve(&overrides, |k| env.get(k), dotenv.as_deref())
        .map_err(CliError::usage)?;
    tracing::info!(base_url = %config.base_url, model = %config.model, "model configuration");
    // Chapter 10 on: one prompt cache key for the whole session (see `session_cache_key`).
    let cache_key = profile
        .has(Capability::DynamicPrompt)
        .then(session_cache_key);
    let build = |config: &agent_openai::OpenAiConfig| -> CliResult<OpenAiModel> {
        let model = OpenAiModel::new(config).map_err(CliError::usage)?;
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
fn memory_placement(profile: Profile, args: &RunArgs) -> CliResult<crate::MemoryPlacement> {
    match args.memory_placement {
        Some(_) if !profile.has(Capability::DynamicPrompt) => {
            Err(CliError::usage(anyhow::anyhow!(
                "--memory-placement needs chapter 10 or later: chapter {}'s system prompt is fixed (chapter 9 sends memory as its own message)",
                profile.chapter
            )))
        }
        placement => Ok(placement.unwrap_or_default()),
    }
}

/// `env` holds the `OPENAI_*` variables taken out of the process environment at start-up.
pub fn run(profile: Profile, args: &RunArgs, env: &ModelEnv) -> CliResult {
    let placement = memory_placement(profile, args)?;
    let workspace = open_workspace(args.workspace.as_deref())?;
    let model = choose_model(profile, args, env)?;
    let mut deps = AgentDeps::new(model.client(), workspace.clone());
    deps.memory_placement = placement;
    deps.retry = retry_policy(args);
    deps.fallback = model.fallback();
    deps.max_tokens = args.max_tokens;
    let observer = CliObserver::new(args.record.as_deref()).map_err(|err| {
        let path = args.record.as_deref().unwrap_or(std::path::Path::new("?"));
        CliError::usage(anyhow::anyhow!(
            "cannot open the --record file {}: {err}",
            path.display()
        ))
    })?;
    let observer = Arc::new(match args.cache_report {
        Some(_) => observer.with_cache_report(),
        None => observer,
    });
    deps.events = observer.clone();
    deps.max_turns = args.max_turns;
    deps.final_answer = args.final_answer;
    deps.approval = Some(args.approve.provider());
    deps.audit = Arc::new(JsonlAudit::new(&workspace));
    if profile.has(Capability::Hooks) {
        let trust = if args.trust_hooks {
            HookTrust::Bypassed
        } else {
            HookTrust::Required
        };
        let loaded = load_shell_hooks(&workspace, &mut deps.hooks, trust)?;
        tracing::info!(hooks = loaded, "shell hooks loaded");
    }
    let mut agent = build_agent(profile, deps).map_err(CliError::usage)?;
    let rt = runtime()?;
    // Chapter 11 on, Ctrl-C cancels a turn cleanly; before, it keeps its default (the
    // process dies), as those chapters always did.
    let interrupts = if profile.has(Capability::Recovery) {
        Some(Interrupts::install(&rt).map_err(CliError::runtime)?)
    } else {
        None
    };
    // Chapter 13's jobs are ended by the agent's drop; a quit by Ctrl-C skips every drop.
    if let (Some(interrupts), Some(jobs)) = (&interrupts, agent.jobs()) {
        let jobs = jobs.clone();
        interrupts.on_quit(move || jobs.kill_all(agent_jobs::KillReason::SessionEnded));
    }
    let outcome = match &args.prompt {
        Some(prompt) => one_turn(&rt, &mut agent, prompt, interrupts.as_ref()).map(|()| {
            // Chapter 14: what is due runs after the prompt's turn, before the process exits.
            super::scheduled::run_due(&mut agent, |a, p| run_turn(&rt, a, p, interrupts.as_ref()));
        }),
        None => interactive(&rt, &mut agent, interrupts.as_ref()),
    };
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
    outcome?;
    model.finish()
}

/// Runs one turn; with `interrupts` (chapter 11 on) a Ctrl-C cancels it.
fn run_turn(
    rt: &tokio::runtime::Runtime,
    agent: &mut Agent,
    prompt: &str,
    interrupts: Option<&Interrupts>,
) -> Result<TurnOutcome, RunError> {
    match interrupts {
        Some(interrupts) => {
            let turn = interrupts.turn();
            rt.block_on(agent.run_turn_cancellable(prompt, turn.cancellation()))
        }
        None => rt.block_on(agent.run_turn(prompt)),
    }
}

/// A cancelled one-shot run ends with 130 and leaves the script check out: the run took the
/// path the user chose, not the scripted one.
fn one_turn(
    rt: &tokio::runtime::Runtime,
    agent: &mut Agent,
    prompt: &str,
    interrupts: Option<&Interrupts>,
) -> CliResult {
    match run_turn(rt, agent, prompt, interrupts) {
        Ok(outcome) => {
            println!("{}", outcome.final_text);
            Ok(())
        }
        Err(RunError::Cancelled) => Err(CliError::interrupted(RunError::Cancelled)),
        Err(err) => Err(CliError::runtime(err)),
    }
}

/// `chNN >> ` prompt; an empty line asks again; `exit`, `quit` or end of input (Ctrl-D)
/// ends. A failed or cancelled turn is reported and the loop goes on: the history stays
/// valid. Chapter 11 on, a terminal gets a line editor and Ctrl-C at the prompt quits (130).
fn interactive(
    rt: &tokio::runtime::Runtime,
    agent: &mut Agent,
    interrupts: Option<&Interrupts>,
) -> CliResult {
    let prompt = format!("ch{:02} >> ", agent.profile().chapter);
    let mut input = match interrupts {
        Some(_) => LineEditor::open(),
        None => LineEditor::Plain,
    };
    loop {
        // Chapter 14: schedules due now (after a turn, or missed while the process was down).
        super::scheduled::run_due(agent, |a, p| run_turn(rt, a, p, interrupts));
        // Chapter 13: jobs that ended while the person was reading or typing.
        for line in agent.finished_jobs() {
            eprintln!("{line}");
        }
        let line = match input.read(&prompt).map_err(CliError::runtime)? {
            Input::Line(line) => line,
            Input::End => {
                eprintln!();
                return Ok(());
            }
            Input::Interrupted => {
                return Err(CliError::interrupted(anyhow::anyhow!(
                    "interrupted at the prompt"
                )));
            }
        };
        match line.trim() {
            "" => continue,
            "exit" | "quit" => return Ok(()),
            prompt => match run_turn(rt, agent, prompt, interrupts) {
                Ok(outcome) => println!("{}", outcome.final_text),
                Err(RunError::Cancelled) => eprintln!("[cancel] turn cancelled"),
                Err(err) => eprintln!("error: {}", super::hint::with_hint(&err, &err)),
            },
        }
    }
}
