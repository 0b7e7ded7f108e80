//! Chapter 5: `todo_write` and the stale-plan reminder.
//!
//! The model keeps its plan by rewriting the whole list each time (a snapshot, not a diff):
//! nothing can drift between what the model believes and what is stored. When the model has
//! gone three tool rounds without touching the plan, the next request carries one reminder.

use std::sync::{Arc, Mutex, PoisonError};

use agent_core::fragment::{FragmentKind, Template};
use agent_core::{
    AgentEvent, CallSummary, Draft, Events, FailureCode, HistoryProcessor, Lineage, Message,
    PlanStep, PreparedCall, StepStatus, ToolEffect, ToolFailure, ToolHandler, ToolSpec, schema,
    seams::ProcessError,
};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The longest plan `todo_write` accepts, so a plan cannot grow without bound.
pub const MAX_TODOS: usize = 50;
/// Tool rounds without `todo_write` before the reminder.
pub const REMINDER_AFTER_ROUNDS: usize = 3;
/// The reminder, a fixed fragment laid out in `plan_reminder.md`.
const REMINDER: Template =
    Template::new(FragmentKind::PlanReminder, include_str!("plan_reminder.md"));
/// The reminder's text, as the model reads it.
pub const REMINDER_TEXT: &str = REMINDER.source();

/// Where one step of the plan stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on now (the model is asked to keep exactly one).
    InProgress,
    /// Done.
    Completed,
}

/// One step of the plan, as the model writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TodoItem {
    /// What the step is, in the model's words.
    pub content: String,
    /// Where it stands.
    pub status: TodoStatus,
}

impl From<&TodoItem> for PlanStep {
    fn from(item: &TodoItem) -> Self {
        let status = match item.status {
            TodoStatus::Pending => StepStatus::Pending,
            TodoStatus::InProgress => StepStatus::InProgress,
            TodoStatus::Completed => StepStatus::Completed,
        };
        PlanStep {
            content: item.content.clone(),
            status,
        }
    }
}

/// The stored plan; every write is told to the event sink as [`AgentEvent::PlanUpdated`].
#[derive(Debug, Default)]
pub struct TodoList {
    items: Mutex<Vec<TodoItem>>,
    events: Events,
}

impl TodoList {
    /// An empty plan that tells `events` of every write.
    pub fn new(events: Events) -> Self {
        Self {
            items: Mutex::default(),
            events,
        }
    }

    /// The plan as last written (empty before the first `todo_write`).
    pub fn items(&self) -> Vec<TodoItem> {
        self.items
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn replace(&self, items: Vec<TodoItem>) {
        self.events.emit(AgentEvent::PlanUpdated(
            items.iter().map(PlanStep::from).collect(),
        ));
        *self.items.lock().unwrap_or_else(PoisonError::into_inner) = items;
    }
}

fn item_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "content": {"type": "string", "minLength": 1},
            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}
        },
        "required": ["content", "status"]
    })
}

fn list_schema() -> Value {
    json!({"type": "array", "maxItems": MAX_TODOS, "items": item_schema()})
}

/// `todo_write` as the model sees it: the whole list, replacing the previous one.
pub fn spec() -> ToolSpec {
    let mut todos = list_schema();
    todos["type"] = json!(["array", "string"]);
    todos["description"] = json!("The whole plan; it replaces the previous list.");
    ToolSpec::new(
        TodoWrite::NAME,
        "Replace your plan with this complete list of steps. Keep exactly one step in_progress while working; mark steps completed as soon as they are done.",
        ToolEffect::State,
        json!({"type": "object", "properties": {"todos": todos}, "required": ["todos"]}),
    )
}

/// `todo_write`.
#[derive(Debug, Clone)]
pub struct TodoWrite(pub Arc<TodoList>);

impl TodoWrite {
    /// The tool's name, as the model calls it.
    pub const NAME: &'static str = "todo_write";
}

#[async_trait]
impl ToolHandler for TodoWrite {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let invalid = |message: String| ToolFailure::new(FailureCode::InvalidArguments, message);
        let mut todos = call.arguments["todos"].clone();
        // Models often send the list as a JSON string; accept it and check it the same way.
        if let Value::String(text) = &todos {
            todos = serde_json::from_str(text).map_err(|err| {
                invalid(format!("$.todos: the string is not a JSON list ({err})"))
            })?;
        }
        schema::validate(&list_schema(), &todos)
            .map_err(|e| invalid(e.to_string().replacen('$', "$.todos", 1)))?;
        let mut items: Vec<TodoItem> =
            serde_json::from_value(todos).map_err(|err| invalid(err.to_string()))?;
        for (i, item) in items.iter_mut().enumerate() {
            item.content = item.content.trim().to_string();
            if item.content.is_empty() {
                return Err(invalid(format!("$.todos[{i}].content: must not be blank")));
            }
        }
        self.0.replace(items.clone());
        serde_json::to_string(&items).map_err(ToolFailure::execution)
    }

    /// The plan as sent (compact): it is the whole of what the call does, and it touches no
    /// file.
    fn describe(&self, arguments: &Value) -> CallSummary {
        CallSummary::arguments(arguments)
    }
}

/// Adds the reminder to a request after [`REMINDER_AFTER_ROUNDS`] tool rounds without
/// `todo_write`. The reminder is in the request only, never in the stored history; after it is
/// sent the count starts again.
#[derive(Debug, Default)]
pub struct TodoReminder {
    /// The round count at which the last reminder was sent.
    reminded_at: Mutex<usize>,
    /// The rounds of the stored history as far as the last request read it: the next request
    /// of the same lineage reads only what was added (a round costs the same all session).
    counted: Mutex<Counted>,
    events: Events,
}

/// [`Rounds`] of the first `len` stored messages of a lineage.
#[derive(Debug, Default, Clone, Copy)]
struct Counted {
    lineage: Option<Lineage>,
    len: usize,
    rounds: Rounds,
}

/// The tool rounds read so far, and the round of the latest `todo_write`.
#[derive(Debug, Default, Clone, Copy)]
struct Rounds {
    rounds: usize,
    last_update: usize,
}

impl Rounds {
    /// These counts after `messages` too.
    fn read<'m>(mut self, messages: impl IntoIterator<Item = &'m Arc<Message>>) -> Self {
        for message in messages {
            if let Message::Assistant { tool_calls, .. } = message.as_ref() {
                if tool_calls.is_empty() {
                    continue;
                }
                self.rounds += 1;
                if tool_calls.iter().any(|c| c.name == TodoWrite::NAME) {
                    self.last_update = self.rounds;
                }
            }
        }
        self
    }
}

impl TodoReminder {
    /// A reminder that has sent nothing yet, telling `events` when it reminds.
    pub fn new(events: Events) -> Self {
        Self {
            reminded_at: Mutex::default(),
            counted: Mutex::default(),
            events,
        }
    }
}

#[async_trait]
impl HistoryProcessor for TodoReminder {
    fn name(&self) -> &'static str {
        "todo_reminder"
    }

    async fn process(
        &self,
        messages: Vec<Arc<Message>>,
    ) -> Result<Vec<Arc<Message>>, ProcessError> {
        Ok(self.shape(Draft::owned(messages)).await?.into_vec())
    }

    async fn shape<'a>(&self, mut draft: Draft<'a>) -> Result<Draft<'a>, ProcessError> {
        let stored = draft.stored();
        let Rounds {
            rounds,
            last_update,
        } = {
            let mut counted = self.counted.lock().unwrap_or_else(PoisonError::into_inner);
            let lineage = draft.lineage();
            let resumed =
                lineage.is_some() && counted.lineage == lineage && counted.len <= stored.len();
            let (from, before) = if resumed {
                (counted.len, counted.rounds)
            } else {
                (0, Rounds::default())
            };
            let rounds = before.read(&stored[from..]);
            *counted = Counted {
                lineage,
                len: stored.len(),
                rounds,
            };
            rounds.read(draft.added())
        };
        let mut reminded_at = self
            .reminded_at
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if rounds.saturating_sub(last_update.max(*reminded_at)) >= REMINDER_AFTER_ROUNDS {
            *reminded_at = rounds;
            draft.push(Arc::new(REMINDER.fill().render().into_message()));
            self.events.emit(AgentEvent::ReminderInjected {
                reminder: "plan".into(),
            });
        }
        Ok(draft)
    }
}

#[cfg(test)]
mod tests {
    use agent_core::{HistoryTracker, ToolCall};

    use super::*;

    fn call(i: usize, tool: &str) -> Arc<Message> {
        Arc::new(Message::Assistant {
            content: None,
            tool_calls: vec![ToolCall {
                id: format!("c{i}"),
                name: tool.into(),
                arguments: "{}".into(),
            }],
        })
    }

    /// Counting on from the previous request of the lineage reminds exactly when counting the
    /// whole history every time does: through plan updates, a rewrite (a new lineage) and
    /// messages an earlier processor added.
    #[tokio::test]
    async fn resumed_counts_remind_when_whole_counts_do() {
        let (resumed, whole) = (TodoReminder::default(), TodoReminder::default());
        let reminder = REMINDER.fill().render().into_message();
        let mut tracker = HistoryTracker::default();
        let mut history = vec![Arc::new(Message::user("task"))];
        let mut reminded = Vec::new();
        for i in 0..24 {
            let tool = if i % 7 == 6 {
                TodoWrite::NAME
            } else {
                "read_file"
            };
            history.push(call(i, tool));
            history.push(Arc::new(Message::tool_result(format!("c{i}"), "ok")));
            if i == 15 {
                history.drain(1..5);
            }
            let mut draft = tracker.draft(&history);
            let mut plain = history.clone();
            if i % 5 == 0 {
                draft.push(Arc::new(Message::user("added")));
                plain.push(Arc::new(Message::user("added")));
            }
            let sent = resumed.shape(draft).await.unwrap().into_vec();
            assert_eq!(sent, whole.process(plain).await.unwrap(), "request {i}");
            if sent.last().map(|m| &**m) == Some(&reminder) {
                reminded.push(i);
            }
        }
        assert_eq!(reminded, [2, 5, 9, 12, 17, 23]);
    }
}
