//! `MemorySession`: memory around one conversation — select before the turn, inject before
//! each request (chapter 9 only), extract and consolidate after the turn.
//!
//! Memory failures are told as [`AgentEvent::MemoryFailed`] events (and logged) and never break
//! the user's answer: a memory that could not be read or written is worse than none only if it
//! crashes the agent.

use std::sync::{Arc, Mutex, PoisonError};

use agent_core::seams::AllowAll;
use agent_core::side_call::{self, JsonShape, SideCallError, TranscriptStyle};
use agent_core::{AgentEvent, Events, FragmentKind, Message, ModelClient, PermissionGate};
use serde::Deserialize;

use crate::block::render_block;
use crate::keywords;
use crate::record::{MemoryRecord, RecordError, last_wins};
use crate::store::{MemoryError, MemoryStore};

/// At most this many records are selected per turn.
pub const MAX_SELECTED: usize = 5;
/// From this many records on, the set is consolidated after a turn.
pub const CONSOLIDATE_AT: usize = 10;

const SELECT_PROMPT: &str = include_str!("select_prompt.md");
const EXTRACT_PROMPT: &str = include_str!("extract_prompt.md");
const CONSOLIDATE_PROMPT: &str = include_str!("consolidate_prompt.md");

#[derive(Debug, Default)]
struct State {
    selected: Vec<MemoryRecord>,
}

/// Where the selected memory block goes, and so who shows it to the model: the one enum for
/// it (chapter 9's own message, chapter 10's `--memory-placement`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MemoryPlacement {
    /// Chapter 9: [`MemoryInjector`] puts the block into each request as its own system
    /// message, never stored.
    OwnMessage,
    /// Chapter 10's design: the system prompt renders the block as its `## memory` section;
    /// the session only selects. When the selection changes, the very first message changes,
    /// and a provider's prompt cache can reuse nothing after the bytes before that section.
    #[default]
    Prompt,
    /// The system prompt stays static; each turn's block is stored in the conversation as a
    /// system message right before that turn's user message, where it then stays. A new
    /// selection is appended after the cached history instead of rewriting its start.
    Reminder,
}

/// Why one step of the session failed. Recorded as text in the turn report, never returned
/// to the caller: a memory failure does not break the answer.
#[derive(Debug, thiserror::Error)]
enum SessionError {
    #[error(transparent)]
    SideCall(#[from] SideCallError),
    #[error("the reply is not a JSON array of names ({0})")]
    NotNames(serde_json::Error),
    /// The server stopped the reply at its length limit: the list may be missing names, and
    /// a cut list that still parses would be trusted as if it were whole.
    #[error("the reply was cut off at the length limit")]
    CutOff,
    #[error("{count} names selected, at most {MAX_SELECTED} allowed")]
    TooMany { count: usize },
    #[error("`{0}` is not a saved memory")]
    UnknownName(String),
    #[error("`{0}` in source_names is not a saved memory")]
    UnknownSource(String),
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(transparent)]
    Store(#[from] MemoryError),
    #[error(transparent)]
    Serialize(serde_json::Error),
    #[error("not saved: {0}")]
    NotAllowed(crate::consent::Refused),
}

pub struct MemorySession {
    store: MemoryStore,
    model: Arc<dyn ModelClient>,
    placement: MemoryPlacement,
    state: Mutex<State>,
    events: Events,
    /// Decides whether proposed records may be saved (see [`crate::consent`]).
    gate: Arc<dyn PermissionGate>,
}

impl std::fmt::Debug for MemorySession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemorySession")
            .field("placement", &self.placement)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Consolidation {
    source_names: Vec<String>,
    records: Vec<MemoryRecord>,
}

impl MemorySession {
    pub fn new(
        store: MemoryStore,
        model: Arc<dyn ModelClient>,
        placement: MemoryPlacement,
    ) -> Self {
        Self {
            store,
            model,
            placement,
            state: Mutex::new(State::default()),
            events: Events::default(),
            gate: Arc::new(AllowAll),
        }
    }

    /// Saves extracted and consolidated records only when `gate` allows a `memory_write`
    /// (the agent's permission pipeline: asked where writes ask). The default allows all.
    pub fn gate(mut self, gate: Arc<dyn PermissionGate>) -> Self {
        self.gate = gate;
        self
    }

    /// Where each turn's selection, extraction and failures are told.
    pub fn events(mut self, events: Events) -> Self {
        self.events = events;
        self
    }

    /// Starts with `selected` already chosen: for a preview session, built to show what a
    /// turn would send, so that previewing never changes a live session.
    pub fn with_selection(self, selected: Vec<MemoryRecord>) -> Self {
        self.state().selected = selected;
        self
    }

    pub fn store(&self) -> &MemoryStore {
        &self.store
    }

    pub fn placement(&self) -> MemoryPlacement {
        self.placement
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The usable stored records; the store warns about each corrupt one it leaves out.
    fn load_usable(&self) -> Result<Vec<MemoryRecord>, MemoryError> {
        Ok(self.store.load_all()?.records)
    }

    /// The usable stored records, or `None` with the error recorded.
    fn load(&self) -> Option<Vec<MemoryRecord>> {
        self.load_usable()
            .map_err(|err| self.record_error(format!("cannot load memories: {err}")))
            .ok()
    }

    /// Told once, as an event (the CLI prints it as `[memory] error: …`); not also logged as
    /// a warning, which printed every failure twice.
    fn record_error(&self, error: String) {
        self.events
            .emit(AgentEvent::MemoryFailed { message: error });
    }

    fn selected_now(&self, selected: Vec<MemoryRecord>) {
        let names = selected.iter().map(|r| r.name.clone()).collect();
        self.state().selected = selected;
        self.events.emit(AgentEvent::MemorySelected { names });
    }

    fn extracted_now(&self, names: Vec<String>) {
        self.events.emit(AgentEvent::MemoryExtracted { names });
    }

    /// The records selected for the current turn.
    pub fn selected(&self) -> Vec<MemoryRecord> {
        self.state().selected.clone()
    }

    /// The selected records as the `<relevant_memories>` block, if any.
    pub fn render_selected(&self) -> Option<String> {
        render_block(&self.state().selected)
    }

    /// Loads the records and selects up to five for `query`: by a model call without tools,
    /// or, when that fails or answers nonsense, by keyword overlap.
    pub async fn begin_turn(&self, query: &str) {
        self.state().selected.clear();
        let Some(records) = self.load() else {
            return self.selected_now(Vec::new());
        };
        if records.is_empty() {
            return self.selected_now(Vec::new());
        }
        let selected = match self.ask_selector(query, &records).await {
            Ok(names) => names
                .iter()
                .filter_map(|n| records.iter().find(|r| &r.name == n).cloned())
                .collect(),
            Err(err) => {
                self.record_error(format!("selector failed, used keyword fallback: {err}"));
                keywords::select(query, &records, MAX_SELECTED)
                    .into_iter()
                    .cloned()
                    .collect()
            }
        };
        self.selected_now(selected);
    }

    /// What a turn would select by keywords only, without a model call and without storing
    /// anything: for previews (`agent-tutorial prompt`), which must show what a turn would
    /// send without calling any model or changing a session.
    pub fn select_by_keywords(&self, query: &str) -> Result<Vec<MemoryRecord>, MemoryError> {
        let records = self.store.load_all()?.records;
        Ok(keywords::select(query, &records, MAX_SELECTED)
            .into_iter()
            .cloned()
            .collect())
    }

    async fn ask_selector(
        &self,
        query: &str,
        records: &[MemoryRecord],
    ) -> Result<Vec<String>, SessionError> {
        let list: Vec<String> = records
            .iter()
            .map(|r| format!("{}: {}", r.name, r.description))
            .collect();
        let input = format!("Message:\n{query}\n\nMemories:\n{}", list.join("\n"));
        let reply = self
            .model
            .complete(&side_call::request(SELECT_PROMPT, input))
            .await
            .map_err(|err| SessionError::SideCall(err.into()))?;
        if reply.finish_reason.as_deref() == Some("length") {
            return Err(SessionError::CutOff);
        }
        let text = reply.content.unwrap_or_default();
        let named: Vec<String> =
            side_call::parse_json(&text, JsonShape::Array).map_err(|err| match err {
                SideCallError::Reply(e) => SessionError::NotNames(e),
                other => SessionError::SideCall(other),
            })?;
        // A name given twice is selected once, where it first appears.
        let mut names: Vec<String> = Vec::with_capacity(named.len());
        for name in named {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        if names.len() > MAX_SELECTED {
            return Err(SessionError::TooMany { count: names.len() });
        }
        if let Some(unknown) = names
            .iter()
            .find(|n| !records.iter().any(|r| &r.name == *n))
        {
            return Err(SessionError::UnknownName(unknown.clone()));
        }
        Ok(names)
    }

    /// The block as a system message for this request only — with [`MemoryPlacement::OwnMessage`].
    pub fn before_model(&self) -> Option<Message> {
        if self.placement != MemoryPlacement::OwnMessage {
            return None;
        }
        self.render_selected().map(Message::system)
    }

    /// After the turn: extracts new records from `turn` (the messages of this turn) and, at
    /// [`CONSOLIDATE_AT`] or more records, consolidates. Failures are recorded, not returned.
    pub async fn complete(&self, turn: &[Message]) {
        let Some(existing) = self.load() else {
            return self.extracted_now(Vec::new());
        };
        match self.extract(turn, &existing).await {
            Ok(records) if records.is_empty() => self.extracted_now(Vec::new()),
            Ok(records) => {
                let names: Vec<String> = records.iter().map(|r| r.name.clone()).collect();
                // Every future prompt will show them: saved only as a write is allowed.
                if let Err(reason) = crate::consent::ask(self.gate.as_ref(), &records).await {
                    self.extracted_now(Vec::new());
                    return self.record_error(format!("extracted memories not saved: {reason}"));
                }
                match self.store.upsert(records) {
                    Ok(()) => self.extracted_now(names),
                    Err(err) => {
                        self.extracted_now(Vec::new());
                        return self.record_error(format!("cannot save extracted memories: {err}"));
                    }
                }
            }
            Err(err) => {
                self.extracted_now(Vec::new());
                return self.record_error(format!("extraction failed, nothing saved: {err}"));
            }
        }
        if let Err(err) = self.consolidate_if_needed().await {
            self.record_error(format!("consolidation failed, memories unchanged: {err}"));
        }
    }

    async fn extract(
        &self,
        turn: &[Message],
        existing: &[MemoryRecord],
    ) -> Result<Vec<MemoryRecord>, SessionError> {
        let known: Vec<String> = existing
            .iter()
            .map(|r| format!("- {}: {}", r.name, r.description))
            .collect();
        let known = if known.is_empty() {
            "(none)".to_string()
        } else {
            known.join("\n")
        };
        let input = format!(
            "Existing memories:\n{known}\n\nConversation:\n{}",
            conversation(turn)
        );
        let records: Vec<MemoryRecord> =
            side_call::ask_json(self.model.as_ref(), EXTRACT_PROMPT, input, JsonShape::Array)
                .await?;
        let records = last_wins(records);
        for record in &records {
            record.validate()?;
        }
        Ok(records)
    }

    async fn consolidate_if_needed(&self) -> Result<(), SessionError> {
        let version = self.store.version()?;
        let records = self.load_usable()?;
        if records.len() < CONSOLIDATE_AT {
            return Ok(());
        }
        let all = serde_json::to_string_pretty(&records).map_err(SessionError::Serialize)?;
        let plan: Consolidation = side_call::ask_json(
            self.model.as_ref(),
            CONSOLIDATE_PROMPT,
            all,
            JsonShape::Object,
        )
        .await?;
        if let Some(unknown) = plan
            .source_names
            .iter()
            .find(|n| !records.iter().any(|r| &r.name == *n))
        {
            return Err(SessionError::UnknownSource(unknown.clone()));
        }
        for record in &plan.records {
            record.validate()?;
        }
        // The merged records are new text for every future prompt, like extracted ones.
        if !plan.records.is_empty() {
            crate::consent::ask(self.gate.as_ref(), &plan.records)
                .await
                .map_err(SessionError::NotAllowed)?;
        }
        // Replacements are committed before the sources go, in one commit, and only if the
        // set is still the one the model saw.
        self.store
            .replace(&plan.source_names, plan.records, &version)?;
        Ok(())
    }
}

/// The turn as extraction reads it: what the person and the assistant said, the tool results,
/// and for each fragment (a job's notice, a hook's context, a scheduled run's prompt; later a
/// teammate's mail) one line that names it and leaves its text out. A fragment's text is not
/// the person's, and left out it cannot be saved as if they had said it, however it is worded.
fn conversation(turn: &[Message]) -> String {
    turn.iter()
        .map(|message| match FragmentKind::of(message) {
            Some(kind) => format!(
                "{}: (from the harness, not the user; left out)",
                kind.label()
            ),
            None => side_call::render_message(message, TranscriptStyle::Brief),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Puts the session's block into each request as its own system message, right after the
/// system prompt (chapter 9). Runs after compaction, so the block is never compacted away and
/// never counted as part of the conversation.
#[derive(Debug, Clone)]
pub struct MemoryInjector(pub Arc<MemorySession>);

#[async_trait::async_trait]
impl agent_core::HistoryProcessor for MemoryInjector {
    fn name(&self) -> &'static str {
        "memory_injector"
    }

    async fn process(
        &self,
        mut messages: Vec<Arc<Message>>,
    ) -> Result<Vec<Arc<Message>>, agent_core::seams::ProcessError> {
        if let Some(block) = self.0.before_model() {
            messages.insert(0, Arc::new(block));
        }
        Ok(messages)
    }
}
