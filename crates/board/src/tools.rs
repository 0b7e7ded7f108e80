//! The six board tools, ready to register (chapter 17 wires them into a profile):
//! `create_task` (the lead only), `get_task`, `list_tasks`, `claim_task`, `complete_task`,
//! `release_task`. No schema has an owner field: every handler is built for one caller and
//! acts as that caller, whatever the model sends.
//!
//! The effect is `read` for `get_task` and `list_tasks`, `state` for the four that change the
//! board, as for chapter 12's task tools: they change the harness's own board, never a file
//! of the user's, so the permission pipeline does not ask before them.

use std::sync::Arc;

use agent_core::{
    CallSummary, FailureCode, PreparedCall, ToolEffect, ToolFailure, ToolHandler,
    ToolRegistryBuilder, ToolSpec,
};
use agent_protocol::fragment::{Fragment, FragmentKind, Template};
use agent_protocol::{AgentId, parse_arguments};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::board::TaskBoard;
use crate::error::{BoardError, ErrorKind, ids};
use crate::model::{
    Claim, ClaimEnd, ClaimTarget, ClaimToken, MAX_BLOCKED_BY, MAX_SUBJECT_CHARS, NewTask, Status,
    Task, TaskId,
};

/// Adds a task (the lead only).
pub const CREATE_TASK: &str = "create_task";
/// Shows one task.
pub const GET_TASK: &str = "get_task";
/// Lists every task.
pub const LIST_TASKS: &str = "list_tasks";
/// Claims a ready task.
pub const CLAIM_TASK: &str = "claim_task";
/// Completes a held task.
pub const COMPLETE_TASK: &str = "complete_task";
/// Gives a held task back.
pub const RELEASE_TASK: &str = "release_task";

fn id_schema(description: &str) -> Value {
    json!({"type": "integer", "minimum": 1, "description": description})
}

fn token_schema() -> Value {
    json!({"type": "string", "minLength": 1, "description": "The claim_token claim_task gave you; leave out for the claim you hold on this task."})
}

/// The six specs, in registration order.
pub fn specs() -> [ToolSpec; 6] {
    [
        ToolSpec::new(
            CREATE_TASK,
            "Add a task to the team's task board. Teammates claim ready tasks (pending, every task in blocked_by completed), oldest first.",
            ToolEffect::State,
            json!({
                "type": "object",
                "properties": {
                    "subject": {"type": "string", "minLength": 1, "description": format!("One line, at most {MAX_SUBJECT_CHARS} characters.")},
                    "description": {"type": "string", "description": "What done means."},
                    "blocked_by": {
                        "type": "array",
                        "maxItems": MAX_BLOCKED_BY,
                        "items": {"type": "integer", "minimum": 1},
                        "description": "Ids of tasks that must be completed first."
                    }
                },
                "required": ["subject"]
            }),
        ),
        ToolSpec::new(
            GET_TASK,
            "Show one task of the board: status, holder, what it waits for, its result.",
            ToolEffect::Read,
            json!({
                "type": "object",
                "properties": {"task_id": id_schema("The task's id.")},
                "required": ["task_id"]
            }),
        ),
        ToolSpec::new(
            LIST_TASKS,
            "List the board's tasks, oldest first: id, status, subject, holder, what each waits for.",
            ToolEffect::Read,
            json!({"type": "object", "properties": {}}),
        ),
        ToolSpec::new(
            CLAIM_TASK,
            "Claim a ready task for yourself (without task_id: the oldest ready one). You get a claim_token and a lease; the lease is renewed while you work on the task. Completing or releasing needs the token.",
            ToolEffect::State,
            json!({
                "type": "object",
                "properties": {"task_id": id_schema("The task to claim; leave out for the oldest ready task.")}
            }),
        ),
        ToolSpec::new(
            COMPLETE_TASK,
            "Complete a task you hold, with its result. Refused if your lease ran out (someone else may be doing it now).",
            ToolEffect::State,
            json!({
                "type": "object",
                "properties": {
                    "task_id": id_schema("The task's id."),
                    "claim_token": token_schema(),
                    "result": {"type": "string", "minLength": 1, "description": "What you did and found."}
                },
                "required": ["task_id", "result"]
            }),
        ),
        ToolSpec::new(
            RELEASE_TASK,
            "Give back a task you hold without completing it; it is pending again for anyone.",
            ToolEffect::State,
            json!({
                "type": "object",
                "properties": {
                    "task_id": id_schema("The task's id."),
                    "claim_token": token_schema(),
                    "reason": {"type": "string", "minLength": 1, "description": "One line: why."}
                },
                "required": ["task_id", "reason"]
            }),
        ),
    ]
}

/// Told what a caller's board tools did, after each change succeeded: how the harness renews
/// and fences the claims an agent holds, wakes idle teammates when a task becomes ready, and
/// tells the person.
pub trait ClaimObserver: Send + Sync + std::fmt::Debug {
    /// A task was created.
    fn created(&self, _task: &Task) {}
    /// `claim` was made on `task` by the caller.
    fn claimed(&self, _task: &Task, _claim: &Claim) {}
    /// The caller's claim `token` on `task` ended (`task` as it is now).
    fn ended(&self, _task: &Task, _token: &ClaimToken, _end: ClaimEnd) {}
    /// The token the caller was last given for `task` and has not ended: what
    /// `complete_task` and `release_task` use when the model leaves the token out.
    fn token(&self, _task: TaskId) -> Option<ClaimToken> {
        None
    }
}

/// Registers the tools for `caller`: all six for the lead, all but `create_task` for a
/// teammate.
pub fn register(
    tools: ToolRegistryBuilder,
    board: Arc<dyn TaskBoard>,
    caller: &AgentId,
) -> ToolRegistryBuilder {
    register_observed(tools, board, caller, None)
}

/// [`register`], telling `observer` of every change the tools make.
pub fn register_observed(
    mut tools: ToolRegistryBuilder,
    board: Arc<dyn TaskBoard>,
    caller: &AgentId,
    observer: Option<Arc<dyn ClaimObserver>>,
) -> ToolRegistryBuilder {
    let [create, get, list, claim, complete, release] = specs();
    let tool = |kind| {
        Arc::new(BoardTool {
            board: board.clone(),
            caller: caller.clone(),
            kind,
            observer: observer.clone(),
        })
    };
    if caller.is_lead() {
        tools = tools.tool(create, tool(Kind::Create));
    }
    tools
        .tool(get, tool(Kind::Get))
        .tool(list, tool(Kind::List))
        .tool(claim, tool(Kind::Claim))
        .tool(complete, tool(Kind::Complete))
        .tool(release, tool(Kind::Release))
}

/// A board failure as the model reads it: a lost lease is `task_lease_expired`, another
/// claim's token `task_claim_mismatch`, a refusal `invalid_arguments`, a storage failure
/// `tool_execution_error`.
pub fn failure(err: BoardError) -> ToolFailure {
    match err.kind() {
        ErrorKind::Refused => ToolFailure::new(FailureCode::InvalidArguments, err.to_string()),
        ErrorKind::LeaseExpired => ToolFailure::new(FailureCode::TaskLeaseExpired, err.to_string()),
        ErrorKind::ClaimMismatch => {
            ToolFailure::new(FailureCode::TaskClaimMismatch, err.to_string())
        }
        ErrorKind::Storage => ToolFailure::execution(err),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Create,
    Get,
    List,
    Claim,
    Complete,
    Release,
}

/// One board tool, acting as `caller`.
#[derive(Debug)]
struct BoardTool {
    board: Arc<dyn TaskBoard>,
    caller: AgentId,
    kind: Kind,
    observer: Option<Arc<dyn ClaimObserver>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateArgs {
    subject: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    blocked_by: Vec<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskArgs {
    task_id: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FinishArgs {
    task_id: i64,
    claim_token: Option<String>,
    #[serde(alias = "reason")]
    result: String,
}

fn required(id: Option<i64>) -> Result<TaskId, ToolFailure> {
    id.map(TaskId).ok_or_else(|| {
        ToolFailure::new(
            FailureCode::InvalidArguments,
            "missing required field `task_id`",
        )
    })
}

#[async_trait]
impl ToolHandler for BoardTool {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let board = &self.board;
        match self.kind {
            Kind::Create => {
                let args: CreateArgs = parse_arguments(call)?;
                let task = board
                    .create(NewTask {
                        subject: args.subject,
                        description: args.description,
                        blocked_by: args.blocked_by.into_iter().map(TaskId).collect(),
                    })
                    .await
                    .map_err(failure)?;
                if let Some(observer) = &self.observer {
                    observer.created(&task);
                }
                Ok(format!("created {}", line(&task, None)))
            }
            Kind::Get => {
                let args: TaskArgs = parse_arguments(call)?;
                let task = board.get(required(args.task_id)?).await.map_err(failure)?;
                Ok(detail(&task))
            }
            Kind::List => {
                let tasks = board.list().await.map_err(failure)?;
                if tasks.is_empty() {
                    return Ok("(no tasks)".to_string());
                }
                Ok(tasks
                    .iter()
                    .map(|t| line(t, Some(&tasks)))
                    .collect::<Vec<_>>()
                    .join("\n"))
            }
            Kind::Claim => {
                let args: TaskArgs = parse_arguments(call)?;
                let target = args
                    .task_id
                    .map_or(ClaimTarget::OldestReady, |id| ClaimTarget::Task(TaskId(id)));
                let claim = board.claim(&self.caller, target).await.map_err(failure)?;
                let task = board.get(claim.task).await.map_err(failure)?;
                if let Some(observer) = &self.observer {
                    observer.claimed(&task, &claim);
                }
                Ok(claimed(&task, &claim))
            }
            Kind::Complete | Kind::Release => {
                let args: FinishArgs = parse_arguments(call)?;
                let id = TaskId(args.task_id);
                // Without a token: the one the runtime knows this caller was given for the
                // task. Still fenced: a lost claim's token is refused as any stale one is.
                let token = match args.claim_token {
                    Some(token) => ClaimToken(token),
                    None => self
                        .observer
                        .as_ref()
                        .and_then(|o| o.token(id))
                        .ok_or_else(|| {
                            ToolFailure::new(
                                FailureCode::TaskClaimMismatch,
                                format!("you hold no claim on task {id}; claim it first"),
                            )
                        })?,
                };
                if self.kind == Kind::Complete {
                    let task = board
                        .complete(&self.caller, id, &token, &args.result)
                        .await
                        .map_err(failure)?;
                    if let Some(observer) = &self.observer {
                        observer.ended(&task, &token, ClaimEnd::Completed);
                    }
                    Ok(format!("completed {}", line(&task, None)))
                } else {
                    let task = board
                        .release(&self.caller, id, &token, &args.result)
                        .await
                        .map_err(failure)?;
                    if let Some(observer) = &self.observer {
                        observer.ended(&task, &token, ClaimEnd::Released);
                    }
                    Ok(format!("released {}", line(&task, None)))
                }
            }
        }
    }

    fn describe(&self, arguments: &Value) -> CallSummary {
        let id = arguments.get("task_id").map(Value::to_string);
        let text = match (self.kind, id) {
            (Kind::Create, _) => format!(
                "create task: {}",
                arguments
                    .get("subject")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            ),
            (Kind::List, _) => "list tasks".to_string(),
            (Kind::Claim, None) => "claim the oldest ready task".to_string(),
            (Kind::Get, Some(id)) => format!("show task #{id}"),
            (Kind::Claim, Some(id)) => format!("claim task #{id}"),
            (Kind::Complete, Some(id)) => format!("complete task #{id}"),
            (Kind::Release, Some(id)) => format!("release task #{id}"),
            (_, None) => "task".to_string(),
        };
        CallSummary::text(text)
    }
}

/// `#3 [in_progress] build (held by bob)`, `#4 [pending] test (after #3)`. With the whole
/// list at hand, a pending task says whether it is ready or what it still waits for.
pub fn line(task: &Task, all: Option<&[Task]>) -> String {
    let mut notes = Vec::new();
    if let Some(holder) = &task.holder {
        notes.push(format!("held by {}", holder.owner));
    }
    if task.status == Status::Pending {
        match all {
            Some(all) => {
                let open: Vec<TaskId> = task
                    .blocked_by
                    .iter()
                    .copied()
                    .filter(|b| {
                        all.iter()
                            .find(|t| t.id == *b)
                            .is_none_or(|t| t.status != Status::Completed)
                    })
                    .collect();
                if open.is_empty() {
                    notes.push("ready".to_string());
                } else {
                    notes.push(format!("waits for {}", ids(&open)));
                }
            }
            None if !task.blocked_by.is_empty() => {
                notes.push(format!("after {}", ids(&task.blocked_by)));
            }
            None => {}
        }
    }
    let notes = if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join("; "))
    };
    format!("{} [{}] {}{notes}", task.id, task.status, task.subject)
}

/// Everything about one task, one field a line.
pub fn detail(task: &Task) -> String {
    let mut lines = vec![line(task, None)];
    if !task.description.is_empty() {
        lines.push(format!("description: {}", task.description));
    }
    if !task.blocked_by.is_empty() {
        lines.push(format!("blocked by: {}", ids(&task.blocked_by)));
    }
    if let Some(result) = &task.result {
        lines.push(format!("result: {result}"));
    }
    lines.join("\n")
}

/// What the claimer is told: the task, its token, and the lease.
fn claimed(task: &Task, claim: &Claim) -> String {
    let lease = (claim.expires_at.0 - claim.claimed_at.0) / 1000;
    let mut text = format!(
        "claimed {}\nclaim_token: {}\nlease: {lease} s, renewed while you work on this task; complete_task or release_task with the token when done",
        line(task, None),
        claim.token
    );
    if !task.description.is_empty() {
        text.push_str(&format!("\ndescription: {}", task.description));
    }
    text
}

/// How a claimed task reaches the teammate whose runtime claimed it (chapter 17's autonomy):
/// one `<board-task>` fragment, its next turn's input. Subject and description were written by
/// a model or a repository, so they are escaped: they cannot close the tag or forge another.
const BOARD_TASK: Template = Template::new(FragmentKind::BoardTask, include_str!("board_task.md"));

/// The turn input for `claim` on `task`.
pub fn task_fragment(task: &Task, claim: &Claim) -> Fragment {
    let lease = (claim.expires_at.0 - claim.claimed_at.0) / 1000;
    BOARD_TASK
        .fill()
        .attr("id", task.id.0)
        .attr("claim_token", &claim.token)
        .attr("lease", lease)
        .inline("subject", &task.subject)
        .text("description", task.description.as_str())
        .render()
}
