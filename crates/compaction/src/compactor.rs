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

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::fragment::Template;
use agent_core::seams::ProcessError;
use agent_core::side_call::{self, JsonShape, SideCallError, TranscriptStyle};
use agent_core::{
    AgentEvent, CompactionKind, Draft, Events, FragmentKind, HistoryProcessor, Message, ModelClient,
};
use agent_workspace::Workspace;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use crate::groups::{Grouped, is_tool_round, message_bytes};
use crate::transcript::{TranscriptError, TranscriptLog};

const SUMMARY_PROMPT: &str = include_str!("summary_prompt.md");
/// The summary as a request carries it, and the line standing for snipped messages: both
/// fragments, laid out in their own files.
const SUMMARY_MESSAGE: Template = Template::new(
    FragmentKind::ConversationSummary,
    include_str!("summary_message.md"),
);
const SNIP_MARKER: Template =
    Template::new(FragmentKind::SnipMarker, include_str!("snip_marker.md"));

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

/// The structured summary the model must return: exactly these fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// What the user wants done now.
    pub current_goal: String,
    /// Facts learned that are still needed.
    pub key_findings: Vec<String>,
    /// Paths, and what happened to them.
    pub files_read_or_changed: Vec<String>,
    /// Steps not done yet.
    pub remaining_work: Vec<String>,
    /// Instructions and preferences the user gave: the part a summary must never lose.
    pub user_constraints: Vec<String>,
}

/// Keeps the first group and the newest `keep`, with a one-line marker for what is left out.
pub fn snip(groups: Vec<Vec<Message>>, keep: usize) -> Vec<Vec<Message>> {
    if groups.len() <= keep + 1 {
        return groups;
    }
    let omit = groups.len() - 1 - keep;
    let mut iter = groups.into_iter();
    let mut out: Vec<Vec<Message>> = iter.next().into_iter().collect();
    let dropped: Vec<Vec<Message>> = iter.by_ref().take(omit).collect();
    out.push(vec![snip_marker(&dropped)]);
    out.extend(iter);
    out
}

fn snip_marker<M: std::borrow::Borrow<Message>>(dropped: &[Vec<M>]) -> Message {
    let messages: usize = dropped.iter().map(Vec::len).sum();
    let rounds = dropped.iter().filter(|g| is_tool_round(g)).count();
    marker(messages, rounds)
}

/// The line standing for `messages` left out, `rounds` of them tool rounds.
fn marker(messages: usize, rounds: usize) -> Message {
    SNIP_MARKER
        .fill()
        .inline("messages", messages)
        .inline("rounds", rounds)
        .render()
        .into_message()
}

/// Replaces tool results older than the newest `keep` groups with a short stub.
pub fn micro(mut groups: Vec<Vec<Message>>, keep: usize) -> Vec<Vec<Message>> {
    let old = groups.len().saturating_sub(keep);
    for group in groups.iter_mut().take(old) {
        for message in group.iter_mut() {
            if let Message::Tool { content, .. } = message
                && let Some(stub) = stub(content)
            {
                *content = stub;
            }
        }
    }
    groups
}

/// The stub an old tool result becomes, when it is shorter than the result.
fn stub(content: &str) -> Option<String> {
    let stub = format!("[earlier tool result cleared: {} bytes]", content.len());
    (stub.len() < content.len()).then_some(stub)
}

/// A copy of `message` with its tool result stubbed, without copying the result first.
fn stubbed(message: &Message) -> Message {
    match message {
        Message::Tool {
            tool_call_id,
            content,
        } => Message::Tool {
            tool_call_id: tool_call_id.clone(),
            content: stub(content).unwrap_or_else(|| content.clone()),
        },
        other => other.clone(),
    }
}

/// One unit of a request being assembled: a group of the history, or a message made here.
enum Part<'a> {
    Group(&'a [Arc<Message>]),
    Made(Arc<Message>),
}

/// A request's messages, and its bytes before and after micro.
struct Shaped {
    messages: Vec<Arc<Message>>,
    parts: usize,
    raw_bytes: usize,
    bytes: usize,
}

/// `head`, then the groups from `from` on (the tail) snipped to the newest `keep` (a marker
/// stands for the rest), with tool results outside the newest `micro_keep` parts stubbed. Only
/// what is sent is copied, and an old result only as its stub: the cost follows the window,
/// not the history.
fn assemble<'g>(
    head: Vec<Part<'g>>,
    grouped: &'g Grouped,
    from: usize,
    keep: usize,
    micro_keep: usize,
) -> Shaped {
    let tail = &grouped.groups()[from..];
    let mut parts = head;
    let start = tail.len().saturating_sub(keep);
    if start > 0 {
        let (messages, rounds) = grouped.counts(from..from + start);
        parts.push(Part::Made(Arc::new(marker(messages, rounds))));
    }
    parts.extend(tail[start..].iter().map(|g| Part::Group(g)));
    let old = parts.len().saturating_sub(micro_keep);
    let mut shaped = Shaped {
        messages: Vec::new(),
        parts: parts.len(),
        raw_bytes: 0,
        bytes: 0,
    };
    for (i, part) in parts.iter().enumerate() {
        let messages = match part {
            Part::Group(group) => *group,
            Part::Made(message) => std::slice::from_ref(message),
        };
        for message in messages {
            // Shared, not copied: only an old result is made anew, as its stub.
            let sent = if i < old && matches!(**message, Message::Tool { .. }) {
                Arc::new(stubbed(message))
            } else {
                Arc::clone(message)
            };
            shaped.raw_bytes += message_bytes(message);
            shaped.bytes += message_bytes(&sent);
            shaped.messages.push(sent);
        }
    }
    shaped
}

/// The summary of the history's groups `1..cut` (or of the part of them the snip window
/// showed), recognised by content: the first group and the group just before the cut. The
/// history only grows, so those two pin the rest; comparing every covered message would cost a
/// pass over the whole history on every request.
struct Cached {
    first: Vec<Arc<Message>>,
    cut: usize,
    boundary: Vec<Arc<Message>>,
    summary: Summary,
    message: Arc<Message>,
}

impl Cached {
    fn covers(&self, groups: &[Vec<Arc<Message>>]) -> bool {
        self.cut <= groups.len()
            && groups.first() == Some(&self.first)
            && self.cut.checked_sub(1).and_then(|i| groups.get(i)) == Some(&self.boundary)
    }
}

struct State {
    summary: Option<Cached>,
    /// Over-budget requests since the model was last asked for a summary (`None`: never).
    since_call: Option<usize>,
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
                transcript: TranscriptLog::new(),
            }),
            summaries: AtomicUsize::new(0),
            events: Events::default(),
        }
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

    /// Asks the model to summarize `groups[from..cut]`, extending `previous` when there is one,
    /// after appending what the session transcript lacks of `groups[..cut]`.
    async fn summarize(
        &self,
        transcript: &mut TranscriptLog,
        groups: &[Vec<Arc<Message>>],
        previous: Option<&Summary>,
        (from, cut): (usize, usize),
    ) -> Result<Cached, SummaryError> {
        let path = transcript.append(&self.workspace, &groups[..cut])?;
        let mut input = String::new();
        if let Some(previous) = previous {
            input.push_str("Summary of the conversation so far:\n");
            input
                .push_str(&serde_json::to_string_pretty(previous).map_err(SummaryError::Previous)?);
            input.push_str("\n\nWhat happened after that:\n");
        }
        // Each message ends with a newline here (the memory transcript joins them instead).
        let new_part = &groups[from..cut];
        for message in new_part.iter().flatten() {
            input.push_str(&summary_line(message));
            input.push('\n');
        }
        self.summaries.fetch_add(1, Ordering::SeqCst);
        tracing::info!(transcript = %path, groups = new_part.len(), "summarizing older messages");
        let summary: Summary = side_call::ask_json(
            self.model.as_ref(),
            SUMMARY_PROMPT,
            input,
            JsonShape::Object,
        )
        .await?;
        let json = serde_json::to_string_pretty(&summary).map_err(SummaryError::Render)?;
        Ok(Cached {
            first: groups[0].clone(),
            cut,
            boundary: groups[cut - 1].clone(),
            summary,
            // The summary is the model's text: escaped, so it cannot close its own marker.
            message: Arc::new(
                SUMMARY_MESSAGE
                    .fill()
                    .text("summary", json)
                    .render()
                    .into_message(),
            ),
        })
    }
}

/// One message as the summary's transcript shows it. A fragment (a job's notice, a hook's
/// context, a scheduled run) keeps its text, marker and escaping included, but is named for
/// what it is instead of `user`: the summary's `user_constraints` must never hold what a job
/// printed. Every other message is the side call's usual line.
fn summary_line(message: &Message) -> String {
    let line = side_call::render_message(message, TranscriptStyle::Detailed);
    let Some(kind) = FragmentKind::of(message) else {
        return line;
    };
    // The line is `<role>: <text cut to its bound>`; only the name in front changes.
    let text = line
        .strip_prefix(message.role())
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(&line);
    format!("{} (from the harness, not the user): {text}", kind.label())
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
        if plain.bytes <= config.byte_budget || plain.parts <= keep + 1 {
            return plain.messages;
        }
        let mut guard = self.state.lock().await;
        let state = &mut *guard;
        let due = state
            .since_call
            .is_none_or(|n| n >= config.summary_every_requests);
        state.since_call = state.since_call.map(|n| n.saturating_add(1));
        let cached = state.summary.as_ref().filter(|c| c.covers(groups));
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

/// Why no summary was made (the request is then sent snipped, without one).
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    /// The messages to be summarized could not be saved first, so none is summarized.
    #[error("cannot save the transcript")]
    Transcript(#[from] TranscriptError),
    /// The previous summary could not be written into the summary request.
    #[error("cannot serialize the previous summary")]
    Previous(#[source] serde_json::Error),
    /// The new summary could not be written into the request.
    #[error("cannot serialize the summary")]
    Render(#[source] serde_json::Error),
    /// The model's summary call failed, or its answer was not a [`Summary`].
    #[error("the summary call failed")]
    Call(#[from] SideCallError),
}
