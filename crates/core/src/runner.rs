//! `AgentRunner`: the loop every chapter shares.
//!
//! ```text
//! user prompt ─▶ [system prompt + processed history] ─▶ model ─▶ tool calls? ──no──▶ answer
//!                        ▲                                          │ yes
//!                        └──────── tool results appended ◀──────────┘
//! ```

use std::sync::{Arc, Mutex, PoisonError};

use tracing::{debug, info, warn};

use crate::cancel::{Cancellation, cancelled_failure};
use crate::draft::Drafted;
use crate::event::{AgentEvent, EventSink, NoEvents};
use crate::message::{Message, ToolCall};
use crate::model::{ModelClient, ModelError, ModelReply, ModelRequest};
use crate::pairing::{PairingError, PairingMemo, assign_unique_ids};
use crate::registry::ToolRegistry;
use crate::seams::{
    AllowAll, GateDecision, HistoryProcessor, HookStop, Inbox, NoHooks, PermissionGate,
    PostToolVerdict, PreToolVerdict, ProcessError, PromptBlocked, PromptError, ResultShaper,
    SystemPromptProvider, TurnHooks,
};
use crate::tool::{FailureCode, ToolFailure};

mod memo;
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

/// Why a run ended without an answer. Tool failures are not here: they go back to the model.
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
    final_answer: bool,
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

/// Builds an [`AgentRunner`]; only the model, tools and prompt are required.
pub struct AgentRunnerBuilder {
    runner: AgentRunner,
}

impl std::fmt::Debug for AgentRunnerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.runner.fmt(f)
    }
}

impl AgentRunnerBuilder {
    /// The bound on model requests per user turn (at least 1).
    pub fn max_turns(mut self, max_turns: usize) -> Self {
        self.runner.max_turns = max_turns.max(1);
        self
    }

    /// Off by default. When on, the last request the turn limit allows is sent without tools
    /// and with [`FINAL_ANSWER_NOTE`], so the model must answer in text instead of the run
    /// ending in [`RunError::TurnLimit`]. Useful with small models that never stop calling
    /// tools on their own.
    pub fn final_answer(mut self, on: bool) -> Self {
        self.runner.final_answer = on;
        self
    }

    /// The permission gate (chapter 3); every call runs without one.
    pub fn gate(mut self, gate: Arc<dyn PermissionGate>) -> Self {
        self.runner.gate = gate;
        self
    }

    /// The lifecycle hooks (chapter 4); none by default.
    pub fn hooks(mut self, hooks: Arc<dyn TurnHooks>) -> Self {
        self.runner.hooks = hooks;
        self
    }

    /// Appends a processor; processors run in the order they were added.
    pub fn processor(mut self, processor: Arc<dyn HistoryProcessor>) -> Self {
        self.runner.processors.push(processor);
        self
    }

    /// The processor that shrinks a request once when the model reports "prompt too long";
    /// the request is then retried once.
    pub fn overflow(mut self, processor: Arc<dyn HistoryProcessor>) -> Self {
        self.runner.overflow = Some(processor);
        self
    }

    /// Shapes each batch of tool results before it is stored.
    pub fn shaper(mut self, shaper: Arc<dyn ResultShaper>) -> Self {
        self.runner.shaper = Some(shaper);
        self
    }

    /// Where items from outside the loop come from (chapter 13's job notices).
    pub fn inbox(mut self, inbox: Arc<dyn Inbox>) -> Self {
        self.runner.inbox = Some(inbox);
        self
    }

    /// Where the loop's events go (requests, replies, tool calls and results).
    pub fn events(mut self, events: Arc<dyn EventSink>) -> Self {
        self.runner.events = events;
        self
    }

    /// The runner.
    pub fn build(self) -> AgentRunner {
        self.runner
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
                final_answer: false,
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

    /// [`assign_unique_ids`] for a reply to a request built from `history` (as `drafted`):
    /// the usual reply, whose ids are new, is told so by the runner's set of the history's
    /// ids; anything else goes through the whole check.
    fn unique_ids(
        &self,
        history: &[Arc<Message>],
        drafted: Option<Drafted>,
        calls: &mut [ToolCall],
    ) -> Vec<(String, String)> {
        if calls.is_empty() {
            return Vec::new();
        }
        let fresh = {
            let memo = self.history.lock().unwrap_or_else(PoisonError::into_inner);
            memo.ids
                .covers(drafted.map(Drafted::lineage), history.len())
                && calls.iter().enumerate().all(|(i, call)| {
                    !call.id.is_empty()
                        && calls[..i].iter().all(|earlier| earlier.id != call.id)
                        && !memo.ids.may_contain(&call.id)
                })
        };
        if fresh {
            return Vec::new();
        }
        assign_unique_ids(history, calls)
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
        let context = self
            .hooks
            .user_prompt_submit(prompt)
            .await
            .map_err(RunError::PromptBlocked)?;
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
        let offer = if self.final_answer && index + 1 == self.max_turns {
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

    /// Answers every call of one reply, in order. Returns the stop when a hook ended the run;
    /// later calls of the batch are still answered so the history stays paired. Once `cancel`
    /// fires, the running call is dropped and it and the rest are answered `Error [cancelled]`.
    async fn run_tool_batch(
        &self,
        history: &mut Vec<Arc<Message>>,
        calls: &[ToolCall],
        cancel: &Cancellation,
    ) -> Option<HookStop> {
        let mut stopped: Option<HookStop> = None;
        let mut batch: Vec<(ToolCall, String)> = Vec::with_capacity(calls.len());
        for call in calls {
            self.events.emit(&AgentEvent::ToolStarted(call.clone()));
            let result = if stopped.is_some() {
                Err(ToolFailure::new(
                    FailureCode::HookStoppedContinuation,
                    "a hook stopped the run before this call ran",
                ))
            } else {
                match cancel.run(self.run_one(call)).await {
                    Some(PostToolVerdict { output, stop }) => {
                        stopped = stop;
                        output
                    }
                    None => Err(cancelled_failure()),
                }
            };
            self.events.emit(&AgentEvent::ToolFinished {
                call: call.clone(),
                result: result.clone(),
            });
            let content = match result {
                Ok(text) => text,
                Err(failure) => failure.to_string(),
            };
            batch.push((call.clone(), content));
        }
        if let Some(shaper) = &self.shaper {
            shaper.shape(&mut batch).await;
        }
        history.extend(
            batch
                .into_iter()
                .map(|(call, content)| Arc::new(Message::tool_result(call.id, content))),
        );
        stopped
    }

    /// Runs one call through the hooks, the gate and its handler. Failures before the handler
    /// never stop the run: only a PostToolUse hook can.
    async fn run_one(&self, call: &ToolCall) -> PostToolVerdict {
        let failed = |failure| PostToolVerdict::proceed(Err(failure));
        let prepared = match self.tools.prepare(call) {
            Ok(prepared) => prepared,
            Err(failure) => return failed(failure),
        };
        let (prepared, hints) = match self.hooks.pre_tool_use(prepared).await {
            PreToolVerdict::Continue {
                call: rewritten,
                hints,
            } => {
                // A hook may rewrite the input, never the identity of the call.
                if rewritten.call_id != call.id || rewritten.name != call.name {
                    let failure = ToolFailure::new(
                        FailureCode::InvalidArguments,
                        "a PreToolUse hook changed the call id or tool name",
                    );
                    return failed(failure);
                }
                match self.tools.revalidate(&rewritten) {
                    Ok(valid) => (valid, hints),
                    Err(failure) => return failed(failure),
                }
            }
            PreToolVerdict::Block(failure) => return failed(failure),
        };
        let output = match self.gate.check(&prepared, &hints).await {
            GateDecision::Allow => self.tools.execute(&prepared).await,
            GateDecision::Deny { reason } => {
                Err(ToolFailure::new(FailureCode::PermissionDenied, reason))
            }
        };
        self.hooks.post_tool_use(&prepared, output).await
    }
}

impl AgentRunner {
    /// One model call, its text told to this runner's events as it streams (a client that
    /// does not stream answers as `complete`): the person reads the answer as it comes.
    async fn ask(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        self.model.complete_streamed(request, &*self.events).await
    }
}
