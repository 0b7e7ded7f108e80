//! The four tools over a [`TaskStore`]: `task_create`, `task_update`, `task_list`,
//! `task_get`. Names and descriptions say "persistent task list" so the model does not mix
//! them up with chapter 6's `task` (which runs a subagent now and returns its answer).
//!
//! The effect is `read` for all four, as for `todo_write`: they change only the harness's
//! own `.tasks/` store, never a file of the user's, so the "writes ask" rule of chapter 3
//! does not put a question in front of every status change.

use std::sync::Arc;

use agent_core::{
    CallSummary, FailureCode, PreparedCall, ToolEffect, ToolFailure, ToolHandler,
    ToolRegistryBuilder, ToolSpec,
};
use async_trait::async_trait;
use serde_json::{Value, json};

use crate::model::{MAX_BLOCKED_BY, MAX_SUBJECT_CHARS, Status, TaskId, parse_id};
use crate::render;
use crate::store::{NewTask, TaskChange, TaskError, TaskStore};

/// The tool that adds a task.
pub const TASK_CREATE: &str = "task_create";
/// The tool that changes a task's status, owner or blockers.
pub const TASK_UPDATE: &str = "task_update";
/// The tool that lists every task.
pub const TASK_LIST: &str = "task_list";
/// The tool that shows one task whole.
pub const TASK_GET: &str = "task_get";

fn id_schema(description: &str) -> Value {
    json!({"type": ["integer", "string"], "description": description})
}

fn ids_schema(description: &str) -> Value {
    json!({
        "type": "array",
        "maxItems": MAX_BLOCKED_BY,
        "items": {"type": ["integer", "string"]},
        "description": description
    })
}

fn status_schema(description: &str) -> Value {
    json!({
        "type": "string",
        "enum": Status::ALL.map(Status::as_str),
        "description": description
    })
}

/// The four specs, in registration order.
pub fn specs() -> [ToolSpec; 4] {
    [
        ToolSpec::new(
            TASK_CREATE,
            "Add a task to the persistent task list (.tasks/, kept across sessions). Use it to record work to do later, possibly after other tasks (blocked_by: their ids). Not the `task` tool, which runs a subagent now.",
            ToolEffect::State,
            json!({
                "type": "object",
                "properties": {
                    "subject": {"type": "string", "minLength": 1, "description": format!("One line, at most {MAX_SUBJECT_CHARS} characters.")},
                    "description": {"type": "string", "description": "What done means."},
                    "blocked_by": ids_schema("Ids of tasks that must be completed first.")
                },
                "required": ["subject", "description"]
            }),
        ),
        ToolSpec::new(
            TASK_UPDATE,
            "Change a task of the persistent task list: its status (pending, in_progress, completed, cancelled), owner, or dependencies. Completing a task makes the tasks it blocked ready; a dependency that would make a cycle is refused.",
            ToolEffect::State,
            json!({
                "type": "object",
                "properties": {
                    "id": id_schema("The task's id, e.g. 3."),
                    "status": status_schema("The new status."),
                    "owner": {"type": "string", "description": "Who works on it; \"\" clears it."},
                    "add_blocked_by": ids_schema("Ids of tasks this one must now wait for."),
                    "remove_blocked_by": ids_schema("Ids of tasks this one no longer waits for.")
                },
                "required": ["id"]
            }),
        ),
        ToolSpec::new(
            TASK_LIST,
            "List the persistent task list, one line per task: id, status, subject, and whether it is ready or which tasks block it.",
            ToolEffect::Read,
            json!({
                "type": "object",
                "properties": {"status": status_schema("Only tasks with this status.")}
            }),
        ),
        ToolSpec::new(
            TASK_GET,
            "Show one task of the persistent task list in full: description, owner, what blocks it and what it blocks.",
            ToolEffect::Read,
            json!({
                "type": "object",
                "properties": {"id": id_schema("The task's id, e.g. 3.")},
                "required": ["id"]
            }),
        ),
    ]
}

/// Registers the four tools over one store.
pub fn register(mut tools: ToolRegistryBuilder, store: &Arc<TaskStore>) -> ToolRegistryBuilder {
    let [create, update, list, get] = specs();
    tools = tools.tool(create, Arc::new(TaskCreate(store.clone())));
    tools = tools.tool(update, Arc::new(TaskUpdate(store.clone())));
    tools = tools.tool(list, Arc::new(TaskList(store.clone())));
    tools.tool(get, Arc::new(TaskGet(store.clone())))
}

fn invalid(message: impl Into<String>) -> ToolFailure {
    ToolFailure::new(FailureCode::InvalidArguments, message)
}

impl From<TaskError> for ToolFailure {
    /// A refusal of the graph (unknown id, cycle, still blocked) is the model's to fix:
    /// `invalid_arguments`; a store that cannot be read or written is an execution error.
    fn from(err: TaskError) -> Self {
        if err.is_refusal() {
            invalid(err.to_string())
        } else {
            ToolFailure::execution(err)
        }
    }
}

fn id_argument(arguments: &Value, key: &str) -> Result<TaskId, ToolFailure> {
    parse_id(&arguments[key]).map_err(|err| invalid(format!("$.{key}: {err}")))
}

fn ids_argument(arguments: &Value, key: &str) -> Result<Vec<TaskId>, ToolFailure> {
    let Some(items) = arguments.get(key).and_then(Value::as_array) else {
        return Ok(Vec::new());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, v)| parse_id(v).map_err(|err| invalid(format!("$.{key}[{i}]: {err}"))))
        .collect()
}

fn status_argument(arguments: &Value) -> Result<Option<Status>, ToolFailure> {
    arguments
        .get("status")
        .and_then(Value::as_str)
        .map(|s| {
            s.parse()
                .map_err(|e: crate::model::UnknownStatus| invalid(e.to_string()))
        })
        .transpose()
}

fn text_argument(arguments: &Value, key: &str) -> String {
    arguments
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Runs a store operation off the async workers: it waits for the file lock and does
/// blocking I/O.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, TaskError> + Send + 'static,
) -> Result<T, ToolFailure> {
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result.map_err(ToolFailure::from),
        Err(join) => Err(ToolFailure::execution(join)),
    }
}

/// `task_create`.
#[derive(Debug, Clone)]
pub struct TaskCreate(pub Arc<TaskStore>);

#[async_trait]
impl ToolHandler for TaskCreate {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let new = NewTask {
            subject: text_argument(&call.arguments, "subject"),
            description: text_argument(&call.arguments, "description"),
            blocked_by: ids_argument(&call.arguments, "blocked_by")?,
        };
        let store = self.0.clone();
        let (snapshot, task) = blocking(move || {
            let task = store.create(new)?;
            Ok((store.snapshot()?, task))
        })
        .await?;
        Ok(format!("created {}", render::line(&snapshot.tasks, &task)))
    }

    fn describe(&self, arguments: &Value) -> CallSummary {
        CallSummary::text(format!(
            "create task: {}",
            text_argument(arguments, "subject")
        ))
    }
}

/// `task_update`.
#[derive(Debug, Clone)]
pub struct TaskUpdate(pub Arc<TaskStore>);

#[async_trait]
impl ToolHandler for TaskUpdate {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args = &call.arguments;
        let id = id_argument(args, "id")?;
        let change = TaskChange {
            status: status_argument(args)?,
            owner: args
                .get("owner")
                .and_then(Value::as_str)
                .map(str::to_string),
            add_blocked_by: ids_argument(args, "add_blocked_by")?,
            remove_blocked_by: ids_argument(args, "remove_blocked_by")?,
        };
        let store = self.0.clone();
        let (snapshot, updated) = blocking(move || {
            let updated = store.update(id, change)?;
            Ok((store.snapshot()?, updated))
        })
        .await?;
        let tasks = &snapshot.tasks;
        let mut text = format!("updated {}", render::line(tasks, &updated.task));
        let ready: Vec<String> = updated
            .now_ready
            .iter()
            .filter_map(|id| tasks.get(id))
            .map(|t| render::line(tasks, t))
            .collect();
        if !ready.is_empty() {
            text.push_str("\nnow ready:\n");
            text.push_str(&ready.join("\n"));
        }
        Ok(text)
    }

    fn describe(&self, arguments: &Value) -> CallSummary {
        let mut rest = arguments.clone();
        if let Some(map) = rest.as_object_mut() {
            map.remove("id");
        }
        CallSummary::text(format!("update task {}: {rest}", arguments["id"]))
    }
}

/// `task_list`.
#[derive(Debug, Clone)]
pub struct TaskList(pub Arc<TaskStore>);

#[async_trait]
impl ToolHandler for TaskList {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let status = status_argument(&call.arguments)?;
        let store = self.0.clone();
        let snapshot = blocking(move || store.snapshot()).await?;
        Ok(render::list(&snapshot.tasks, status))
    }

    fn describe(&self, arguments: &Value) -> CallSummary {
        match arguments.get("status").and_then(Value::as_str) {
            Some(status) => CallSummary::text(format!("list {status} tasks")),
            None => CallSummary::text("list tasks"),
        }
    }
}

/// `task_get`.
#[derive(Debug, Clone)]
pub struct TaskGet(pub Arc<TaskStore>);

#[async_trait]
impl ToolHandler for TaskGet {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let id = id_argument(&call.arguments, "id")?;
        let store = self.0.clone();
        let (snapshot, task) = blocking(move || {
            let task = store.get(id)?;
            Ok((store.snapshot()?, task))
        })
        .await?;
        Ok(render::detail(&snapshot.tasks, &task))
    }

    fn describe(&self, arguments: &Value) -> CallSummary {
        CallSummary::text(format!("show task {}", arguments["id"]))
    }
}
