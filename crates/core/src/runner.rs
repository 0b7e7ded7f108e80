//! `AgentRunner`: the loop every chapter shares.
//!
//! ```text
//! user prompt ─▶ [system prompt + processed history] ─▶ model ─▶ tool calls? ──no──▶ answer
//!                        ▲                                          │ yes
//!                        └──────── tool results appended ◀──────────┘
//! ```

use std::sync::{Arc, Mutex, PoisonError};

use tracing::{debug, info, warn};

use crate::cancel::Cancellation;
use crate::draft::Drafted;
use crate::event::{AgentEvent, EventSink, NoEvents};
use crate::message::Message;
use crate::model::{ModelClient, ModelError, ModelReply, ModelRequest};
use crate::pairing::{PairingError, PairingMemo};
use crate::registry::ToolRegistry;
use crate::seams::{
    AllowAll, HistoryProcessor, HookStop, Inbox, NoHooks, PermissionGate, ProcessError,
    PromptBlocked, PromptError, ResultShaper, SystemPromptProvider, TurnHooks,
};

mod builder;
mod memo;
mod tools;

pub use builder::AgentRunnerBuilder;
use memo::HistoryMemo;

/// The default bound on model requests per user turn.
pub const DEFAULT_MAX_TURNS: usize = 30;

/// Appended to the last request of a turn when `final_answer` is on (and no tools are sent): a
/// fixed fragment, its text in `final_answer_note.md`.
pub const FINAL_ANSWER_NOTE: &str = crate::fragment::Template::new(
    crate::fragment::FragmentKind::FinalAnswerNote,
    include_str!("final_answer_note.md"),
)
.source();

/// Whether a turn's last allowed request asks for an answer in text (see
/// [`AgentRunnerBuilder::final_answer`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FinalAnswer {
    /// The last request offers the tools like every other; a model still calling tools then
    /// ends the run at the turn limit.
    #[default]
    Off,
    /// The last request the limit allows is sent without tools, with [`FINAL_ANSWER_NOTE`].
    OnLastRequest,
}

/// How a request's history is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shaping {
    /// The processors every request goes through.
    Normal,
    /// The server said "prompt too long": the overflow processor runs too (once).
    AfterOverflow,
}

/// What the request offers the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Offer {
    Tools,
    /// `--final-answer` on the last allowed request: no tools, and a note asking for the answer.
    FinalAnswerOnly,
}

/// Why a turn ended without an answer. Tool failures are not here: they go back to the
/// model and the loop goes on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The model call failed.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The model still asked for tools when the bound on requests was reached.
    #[error("turn limit reached: the model still asked for tools after {limit} requests")]
    TurnLimit {
        /// The bound.
        limit: usize,
    },
    /// The system prompt provider failed.
    #[error("the system prompt provider failed")]
    Prompt(#[source] PromptError),
    /// The system prompt provider returned an empty prompt.
    #[error("the system prompt provider returned an empty prompt; there is no fallback prompt")]
    EmptySystemPrompt,
    /// A history processor failed; the request was not sent.
    #[error("history processor `{name}` failed")]
    Processor {
        /// The processor's name.
        name: &'static str,
        /// Why.
        #[source]
        error: ProcessError,
    },
    /// The request would break the pairing invariant.
    #[error("refusing to send a request that breaks tool-call pairing (a harness bug): {0}")]
    Pairing(PairingError),
    /// A UserPromptSubmit hook refused the prompt.
    #[error("the prompt was blocked by a hook: {0}")]
    PromptBlocked(PromptBlocked),
    /// The caller cancelled the turn (Ctrl-C). The history is closed: every call in it has a
    /// result, those that did not finish `Error [cancelled]`.
    #[error("cancelled: the turn was stopped before it finished")]
    Cancelled,
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnOutcome {
    /// The model's final answer.
    pub final_text: String,
    /// Model requests made during the turn.
    pub requests: usize,
    /// Tool calls executed (or answered with an error) during the turn.
    pub tool_calls: usize,
    /// Set when a PostToolUse hook ended the turn; `final_text` is then its `Display`.
    pub stopped: Option<HookStop>,
}

/// The loop, with its seams filled in by the composition root.
///
/// ```
/// use std::sync::Arc;
///
/// use agent_core::{AgentRunner, FixedPrompt, ModelReply, ToolRegistry};
/// use agent_test_support::ScriptedModel;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let model = Arc::new(ScriptedModel::replies([ModelReply::text("Hello.")]));
/// let runner = AgentRunner::builder(
///     model,
///     Arc::new(ToolRegistry::empty()),
///     Arc::new(FixedPrompt("You are terse.".into())),
/// )
/// .build();
/// let mut history = Vec::new();
/// let outcome = runner.run_turn(&mut history, "Hi").await.unwrap();
/// assert_eq!(outcome.final_text, "Hello.");
/// assert_eq!(history.len(), 2); // the prompt and the answer; the system prompt is not stored
/// # });
/// ```
pub struct AgentRunner {
    model: Arc<dyn ModelClient>,
    tools: Arc<ToolRegistry>,
    prompt: Arc<dyn SystemPromptProvider>,
    gate: Arc<dyn PermissionGate>,
    hooks: Arc<dyn TurnHooks>,
    processors: Vec<Arc<dyn HistoryProcessor>>,
    /// Applied once, after the other processors, when the model says the prompt is too long.
    overflow: Option<Arc<dyn HistoryProcessor>>,
    shaper: Option<Arc<dyn ResultShaper>>,
    /// Items from outside the loop (chapter 13's job notices), stored before the request they join.
    inbox: Option<Arc<dyn Inbox>>,
    events: Arc<dyn EventSink>,
    max_turns: usize,
    final_answer: FinalAnswer,
    /// Where the previous request's pairing check ended, so the next one checks only what is
    /// new (the check runs on every request; a long session would hash every call id again).
    pairing: Mutex<PairingMemo>,
    /// The lineage of the stored history each request is built from, and the call ids it
    /// uses: a round reads what is new, not the whole session.
    history: Mutex<HistoryMemo>,
}

/// A request, and the draft of the history it was built from.
struct Built {
    request: ModelRequest,
    drafted: Option<Drafted>,
}

impl std::fmt::Debug for AgentRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentRunner")
            .field("tools", &self.tools.names())
            .field(
                "processors",
                &self.processors.iter().map(|p| p.name()).collect::<Vec<_>>(),
            )
            .field("max_turns", &self.max_turns)
            .finish_non_exhaustive()
    }
}

impl AgentRunner {
    /// A runner over a model, its tools and its system prompt; the rest is optional.
    pub fn builder(
        model: Arc<dyn ModelClient>,
        tools: Arc<ToolRegistry>,
        prompt: Arc<dyn SystemPromptProvider>,
    ) -> AgentRunnerBuilder {
        AgentRunnerBuilder {
            runner: AgentRunner {
                model,
                tools,
                prompt,
                gate: Arc::new(AllowAll),
                hooks: Arc::new(NoHooks),
                processors: Vec::new(),
                overflow: None,
                shaper: None,
                inbox: None,
                events: Arc::new(NoEvents),
                max_turns: DEFAULT_MAX_TURNS,
                final_answer: FinalAnswer::Off,
                pairing: Mutex::default(),
                history: Mutex::default(),
            },
        }
    }

    /// The live tool registry.
    pub fn tools(&self) -> &Arc<ToolRegistry> {
        &self.tools
    }

    /// The bound on model requests per user turn.
    pub fn max_turns(&self) -> usize {
        self.max_turns
    }

    /// The names of the history processors every request goes through, in order.
    pub fn processor_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.processors.iter().map(|p| p.name())
    }

    /// Builds the request the runner would send next for `history`, without sending it.
    /// `agent-tutorial prompt` uses this, so what it prints is what the loop sends.
    pub async fn prepare_request(
        &self,
        history: &[Arc<Message>],
    ) -> Result<ModelRequest, RunError> {
        self.build_request(history, Shaping::Normal, Offer::Tools, None)
            .await
            .map(|built| built.request)
    }

    async fn build_request(
        &self,
        history: &[Arc<Message>],
        shaping: Shaping,
        offer: Offer,
        since: Option<Drafted>,
    ) -> Result<Built, RunError> {
        // The stored history is borrowed by the processors, not copied: a pointer is taken
        // only to what the request finally sends.
        let mut draft = {
            let mut memo = self.history.lock().unwrap_or_else(PoisonError::into_inner);
            let memo = &mut *memo;
            let draft = memo.tracker.draft_appended(history, since);
            memo.ids.update(draft.lineage(), history);
            draft
        };
        let drafted = draft.drafted();
        let overflow = self
            .overflow
            .iter()
            .filter(|_| shaping == Shaping::AfterOverflow);
        for processor in self.processors.iter().chain(overflow) {
            draft = processor
                .shape(draft)
                .await
                .map_err(|error| RunError::Processor {
                    name: processor.name(),
                    error,
                })?;
        }
        // Asked last, after memory selection and history preparation, so the prompt reflects
        // the state this very request is built from (chapter 10).
        let system = match offer {
            Offer::Tools => self.prompt.system_prompt().await,
            Offer::FinalAnswerOnly => self.prompt.system_prompt_without_tools().await,
        }
        .map_err(RunError::Prompt)?;
        if system.trim().is_empty() {
            return Err(RunError::EmptySystemPrompt);
        }
        // Room for a note, so adding it does not reallocate.
        let mut messages = Vec::with_capacity(draft.len() + 2);
        messages.push(Arc::new(Message::system(system)));
        messages.extend(draft.iter().cloned());
        self.pairing
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .check(&messages)
            .map_err(RunError::Pairing)?;
        let request = if offer == Offer::FinalAnswerOnly {
            messages.push(Arc::new(Message::system(FINAL_ANSWER_NOTE)));
            ModelRequest {
                messages,
                ..ModelRequest::default()
            }
        } else {
            ModelRequest {
                messages,
                tools: self.tools.specs(),
                max_tokens: None,
            }
        };
        Ok(Built { request, drafted })
    }

    /// Runs one user turn: appends the prompt to `history`, loops until the model answers
    /// without tool calls, and returns that answer. `history` always stays valid (every call
    /// answered), even when the turn ends in an error.
    pub async fn run_turn(
        &self,
        history: &mut Vec<Arc<Message>>,
        prompt: &str,
    ) -> Result<TurnOutcome, RunError> {
        self.run_turn_cancellable(history, prompt, &Cancellation::new())
            .await
    }

    /// [`run_turn`](Self::run_turn), stopped by `cancel`: the model call or the tool call
    /// running then is dropped (a `bash` call's processes die with it), the calls of the reply
    /// that did not finish are answered `Error [cancelled]`, and the turn ends in
    /// [`RunError::Cancelled`] with `history` valid.
    pub async fn run_turn_cancellable(
        &self,
        history: &mut Vec<Arc<Message>>,
        prompt: &str,
        cancel: &Cancellation,
    ) -> Result<TurnOutcome, RunError> {
        let context = self.submit_prompt(prompt).await?;
        self.run_submitted(history, prompt, context, cancel).await
    }

    /// The prompt-submit hooks for `prompt`: the context they add, or the block that ends the
    /// turn before anything else of it runs (a caller with work of its own before the loop,
    /// chapter 9's memory selection, runs it after this, then [`run_submitted`](Self::run_submitted)).
    pub async fn submit_prompt(&self, prompt: &str) -> Result<Vec<Message>, RunError> {
        self.hooks
            .user_prompt_submit(prompt)
            .await
            .map_err(RunError::PromptBlocked)
    }

    /// [`run_turn_cancellable`](Self::run_turn_cancellable) for a prompt that already passed
    /// [`submit_prompt`](Self::submit_prompt), `context` being what its hooks added.
    pub async fn run_submitted(
        &self,
        history: &mut Vec<Arc<Message>>,
        prompt: &str,
        context: Vec<Message>,
        cancel: &Cancellation,
    ) -> Result<TurnOutcome, RunError> {
        history.push(Arc::new(Message::user(prompt)));
        history.extend(context.into_iter().map(Arc::new));

        let mut requests = 0;
        let mut tool_calls = 0;
        // The draft of the turn's previous request (see `request`).
        let mut prior = None;
        let mut stop_forced = false;
        loop {
            if requests == self.max_turns {
                return Err(RunError::TurnLimit {
                    limit: self.max_turns,
                });
            }
            // Here and only here: the history ends with the prompt, a stop-hook message or a
            // whole batch of results, so a stored notice keeps every call next to its result.
            if let Some(inbox) = &self.inbox {
                let items = inbox.take();
                if !items.is_empty() {
                    // One rendering for every item: its body, as its feature marked it.
                    let bodies: Vec<&str> = items.iter().map(|i| i.body.as_str()).collect();
                    history.push(Arc::new(Message::user(bodies.join("\n"))));
                }
            }
            let Some(reply) = cancel
                .run(self.request(history, requests, &mut prior))
                .await
            else {
                info!(
                    requests,
                    tool_calls, "turn cancelled during a model request"
                );
                return Err(RunError::Cancelled);
            };
            let mut reply = reply?;
            requests += 1;
            // Before anything runs or is stored: every call must be answerable exactly once.
            for (old, new) in self.unique_ids(history, prior, &mut reply.tool_calls) {
                warn!(old = %old.escape_debug(), %new, "the model sent an empty or reused tool-call id; renamed it");
            }
            self.events.emit(&AgentEvent::ReplyReceived(reply.clone()));
            history.push(Arc::new(reply.to_message()));

            if reply.tool_calls.is_empty() {
                let text = reply.content.unwrap_or_default();
                if !stop_forced && let Some(message) = self.hooks.stop(&text).await {
                    stop_forced = true;
                    history.push(Arc::new(Message::user(message)));
                    continue;
                }
                info!(requests, tool_calls, "turn finished");
                return Ok(TurnOutcome {
                    final_text: text,
                    requests,
                    tool_calls,
                    stopped: None,
                });
            }

            let stopped = self
                .run_tool_batch(history, &reply.tool_calls, cancel)
                .await;
            tool_calls += reply.tool_calls.len();
            // The batch is stored and closed; no further request once the user asked to stop.
            if cancel.is_cancelled() {
                info!(requests, tool_calls, "turn cancelled during tool calls");
                return Err(RunError::Cancelled);
            }
            if let Some(stop) = stopped {
                return Ok(TurnOutcome {
                    final_text: stop.to_string(),
                    requests,
                    tool_calls,
                    stopped: Some(stop),
                });
            }
        }
    }

    /// Sends one request; on "prompt too long" shrinks it once with the overflow processor and
    /// retries once.
    async fn request(
        &self,
        history: &[Arc<Message>],
        index: usize,
        drafted: &mut Option<Drafted>,
    ) -> Result<ModelReply, RunError> {
        let offer =
            if self.final_answer == FinalAnswer::OnLastRequest && index + 1 == self.max_turns {
                Offer::FinalAnswerOnly
            } else {
                Offer::Tools
            };
        // Shared with the event: a watcher that keeps it holds the same request, not a copy.
        // The turn holds the history and only appends to it, so the draft of its previous
        // request tells the next one what it need not compare again.
        let built = self
            .build_request(history, Shaping::Normal, offer, *drafted)
            .await?;
        *drafted = built.drafted;
        let request = built.request;
        let request = Arc::new(request);
        self.events.emit(&AgentEvent::RequestSent {
            index,
            request: request.clone(),
        });
        debug!(
            request = index,
            messages = request.messages.len(),
            tools = request.tools.len(),
            "model request"
        );
        match self.ask(&request).await {
            Err(ModelError::PromptTooLong { message }) if self.overflow.is_some() => {
                info!(%message, "prompt too long: compacting once and retrying");
                let built = self
                    .build_request(history, Shaping::AfterOverflow, offer, *drafted)
                    .await?;
                *drafted = built.drafted;
                let smaller = Arc::new(built.request);
                self.events.emit(&AgentEvent::RequestSent {
                    index,
                    request: smaller.clone(),
                });
                Ok(self.ask(&smaller).await?)
            }
            other => Ok(other?),
        }
    }
}

impl AgentRunner {
    /// One model call, its text told to this runner's events as it streams (a client that
    /// does not stream answers as `complete`): the person reads the answer as it comes.
    async fn ask(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        self.model.complete_streamed(request, &*self.events).await
    }
}
