//! Shaping what is sent when the history grows: snip, micro, summary.
//!
//! All three work on what a request is built from; the stored history stays canonical (and
//! complete). Groups ([`crate::groups`]) are kept or dropped whole, so every request still
//! pairs each tool call with its result.
//!
//! A summary covers the history's groups up to a *cut*; later requests send the first group,
//! the summary and the groups after the cut. The model is asked again at most once per
//! [`CompactionConfig::summary_every_requests`] over-budget requests, and then only for what
//! happened after the cut (the previous summary is extended, not rebuilt).
//!
//! Fragments stay what they are. Snip and micro keep or drop a fragment's message whole and
//! never touch its text (micro stubs tool results only), so a kept notice keeps its marker;
//! the summary's transcript names each fragment (`job notice (from the harness, not the
//! user): <job …>`) instead of calling it `user`.
//!
//! The stages live in their own files: `window.rs` (snip, micro and the assembly of a request)
//! needs no model and no state; `summary.rs` (the structured summary) needs both, a side call
//! and the cached summary later requests reuse. This file holds the [`Compactor`] that decides,
//! per request, which of them runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::seams::ProcessError;
use agent_core::{
    AgentEvent, CompactionKind, Draft, Events, HistoryProcessor, Message, ModelClient,
};
use agent_workspace::Workspace;
use async_trait::async_trait;
use tokio::sync::Mutex;

use crate::groups::Grouped;
use crate::transcript::TranscriptLog;

mod on_demand;
mod summary;
mod window;

pub use on_demand::CompactOnDemand;
pub use summary::{Summary, SummaryError};
pub use window::{micro, snip};

use summary::Cached;
use window::{Part, Shaped, assemble};

/// The bounds of the three stages (snip, micro, summary).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionConfig {
    /// Snip: the newest groups kept (plus the first user message).
    pub keep_groups: usize,
    /// Micro: tool results older than the newest this-many groups become a stub.
    pub micro_keep_groups: usize,
    /// Summary: above this many bytes, the older part is replaced by a summary.
    pub byte_budget: usize,
    /// Summary: the newest groups kept verbatim next to the summary.
    pub summary_keep_groups: usize,
    /// Summary: the model is asked at most once per this many over-budget requests; the
    /// requests in between reuse the previous summary (each call is a paid, slow request).
    pub summary_every_requests: usize,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        Self {
            keep_groups: 40,
            micro_keep_groups: 3,
            byte_budget: 50_000,
            summary_keep_groups: 4,
            summary_every_requests: 8,
        }
    }
}

struct State {
    summary: Option<Cached>,
    /// Over-budget requests since the model was last asked for a summary (`None`: never).
    since_call: Option<usize>,
    /// A summary was asked for ([`CompactOnDemand`]): it is sent under the budget too.
    asked: bool,
    transcript: TranscriptLog,
}

/// The chapter-8 history processor.
///
/// ```
/// use std::sync::Arc;
///
/// use agent_compaction::{CompactionConfig, Compactor};
/// use agent_core::{HistoryProcessor, Message};
/// use agent_test_support::ScriptedModel;
/// use agent_workspace::Workspace;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// let config = CompactionConfig { keep_groups: 2, ..CompactionConfig::default() };
/// // Far under the byte budget: no summary, so the model is never asked.
/// let model = Arc::new(ScriptedModel::replies([]));
/// let compactor = Compactor::new(model, Workspace::new(dir.path()).unwrap(), config);
///
/// let mut history = Vec::new();
/// for n in 1..=5 {
///     history.push(Arc::new(Message::user(format!("question {n}"))));
///     history.push(Arc::new(Message::assistant_text(format!("answer {n}"))));
/// }
/// let sent = compactor.process(history).await.unwrap();
/// let texts: Vec<&str> = sent.iter().map(|m| m.text()).collect();
/// let marker = "[snipped: 7 earlier messages (0 tool rounds) are not shown]";
/// // Snip: the first user message, a marker for what is left out, the newest exchange.
/// assert_eq!(texts, ["question 1", marker, "question 5", "answer 5"]);
/// # });
/// ```
pub struct Compactor {
    model: Arc<dyn ModelClient>,
    workspace: Workspace,
    config: CompactionConfig,
    /// The history's groups as of the previous request (locked before `state`).
    grouped: Mutex<Grouped>,
    state: Mutex<State>,
    summaries: AtomicUsize,
    events: Events,
    on_demand: CompactOnDemand,
}

impl std::fmt::Debug for Compactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compactor")
            .field("config", &self.config)
            .field("summaries", &self.summaries_made())
            .finish_non_exhaustive()
    }
}

impl Compactor {
    /// A compactor that asks `model` for summaries and saves transcripts under `workspace`.
    pub fn new(
        model: Arc<dyn ModelClient>,
        workspace: Workspace,
        config: CompactionConfig,
    ) -> Self {
        Self {
            model,
            workspace,
            config,
            grouped: Mutex::default(),
            state: Mutex::new(State {
                summary: None,
                since_call: None,
                asked: false,
                transcript: TranscriptLog::new(),
            }),
            summaries: AtomicUsize::new(0),
            events: Events::default(),
            on_demand: CompactOnDemand::default(),
        }
    }

    /// The handle a front end asks for a summary with (chapter 20's `/compact`).
    pub fn on_demand(mut self, handle: CompactOnDemand) -> Self {
        self.on_demand = handle;
        self
    }

    /// Where each shaping of a request is told, as [`AgentEvent::Compacted`].
    pub fn events(mut self, events: Events) -> Self {
        self.events = events;
        self
    }

    fn compacted(&self, kind: CompactionKind, before: usize, after: usize) {
        if after < before {
            self.events.emit(AgentEvent::Compacted {
                kind,
                before,
                after,
            });
        }
    }

    /// How many times the model was asked for a summary.
    pub fn summaries_made(&self) -> usize {
        self.summaries.load(Ordering::SeqCst)
    }

    /// The request with `cached`'s summary in place of the groups it covers.
    fn with_summary(&self, grouped: &Grouped, cached: &Cached, total: usize) -> Shaped {
        let head = vec![
            Part::Group(&grouped.groups()[0]),
            Part::Made(cached.message.clone()),
        ];
        let shaped = assemble(
            head,
            grouped,
            cached.cut,
            self.config.keep_groups,
            self.config.micro_keep_groups,
        );
        self.compacted(CompactionKind::Summary, total, shaped.messages.len());
        shaped
    }
}

#[async_trait]
impl HistoryProcessor for Compactor {
    fn name(&self) -> &'static str {
        "compaction"
    }

    async fn process(
        &self,
        messages: Vec<Arc<Message>>,
    ) -> Result<Vec<Arc<Message>>, ProcessError> {
        Ok(self.shape(Draft::owned(messages)).await?.into_vec())
    }

    async fn shape<'a>(&self, draft: Draft<'a>) -> Result<Draft<'a>, ProcessError> {
        // The history's groups are kept from the request before (see `Grouped`): only what
        // was stored since is grouped, and this request's added messages, taken off again.
        let mut grouped = self.grouped.lock().await;
        let mark = grouped.take(&draft);
        let sent = self.compact(&grouped, draft.len()).await;
        grouped.back_to(mark);
        Ok(Draft::owned(sent))
    }
}

impl Compactor {
    /// The messages to send for `grouped`, `total` messages. Only what is sent is assembled
    /// (`assemble`), the history's messages shared, an old result only as its stub.
    async fn compact(&self, grouped: &Grouped, total: usize) -> Vec<Arc<Message>> {
        let groups = grouped.groups();
        let Some(first) = groups.first() else {
            return Vec::new();
        };
        let config = &self.config;
        let plain = assemble(
            vec![Part::Group(first)],
            grouped,
            1,
            config.keep_groups,
            config.micro_keep_groups,
        );
        self.compacted(CompactionKind::Snip, total, plain.messages.len());
        self.compacted(CompactionKind::Micro, plain.raw_bytes, plain.bytes);
        let keep = config.summary_keep_groups;
        // Taken even when nothing can be summarized: a request for a summary is answered by
        // the next request, not carried to some later one.
        let asked_now = self.on_demand.take();
        if plain.parts <= keep + 1 {
            return plain.messages;
        }
        let over = plain.bytes > config.byte_budget;
        let mut guard = self.state.lock().await;
        let state = &mut *guard;
        state.asked |= asked_now;
        let cached = state.summary.as_ref().filter(|c| c.covers(groups));
        if !over && !asked_now {
            // Under the budget the history goes out whole — unless the user asked for a
            // summary: the conversation they compacted stays compacted while it covers it.
            return match cached.filter(|_| state.asked) {
                Some(c) => self.with_summary(grouped, c, total).messages,
                None => plain.messages,
            };
        }
        let due = asked_now
            || state
                .since_call
                .is_none_or(|n| n >= config.summary_every_requests);
        state.since_call = state.since_call.map(|n| n.saturating_add(1));
        let cut = groups.len() - keep;
        // Before the next call is due, or with nothing new to summarize, the previous summary
        // stands. Should the request still be over budget (the groups after the cut are too
        // large by themselves), it goes out as it is: a new summary could not shrink the
        // newest groups either, and a server's hard limit is met by the overflow retry.
        if let Some(c) = cached.filter(|c| !due || c.cut >= cut) {
            let shaped = self.with_summary(grouped, c, total);
            if shaped.bytes > config.byte_budget {
                tracing::warn!(
                    bytes = shaped.bytes,
                    budget = config.byte_budget,
                    "over the byte budget with the previous summary"
                );
            }
            return shaped.messages;
        }
        // A summary call failed or the history is new, and the next call is not due yet.
        if !due {
            return plain.messages;
        }
        let window = groups.len().saturating_sub(config.keep_groups).max(1);
        let from = cached.map_or(window, |c| c.cut.max(window));
        if from >= cut {
            return plain.messages;
        }
        state.since_call = Some(1);
        let previous = cached.map(|c| &c.summary);
        match self
            .summarize(&mut state.transcript, groups, previous, (from, cut))
            .await
        {
            Ok(made) => {
                let shaped = self.with_summary(grouped, &made, total);
                state.summary = Some(made);
                shaped.messages
            }
            Err(err) => {
                // A failed summary must not break the answer: send the snipped request.
                tracing::warn!(
                    "compaction summary failed: {}",
                    agent_core::error_chain(&err)
                );
                plain.messages
            }
        }
    }
}
