//! The three worktree tools, for the lead only: `create_worktree`, `keep_worktree`,
//! `remove_worktree`. The model names a task and a slug; it never supplies a path, a branch
//! or a git argument. Each call's summary says what will happen, for the approval prompt.

use std::sync::Arc;

use agent_board::{Status, TaskBoard, TaskId};
use agent_core::{
    CallSummary, FailureCode, PreparedCall, ToolEffect, ToolFailure, ToolHandler,
    ToolRegistryBuilder, ToolSpec,
};
use agent_protocol::parse_arguments;
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::binding::{Binding, BindingState};
use crate::error::WorktreeError;
use crate::manager::{Removal, WORKTREES_DIR, Worktrees};
use crate::name::{MAX_NAME_CHARS, WorktreeName};

/// Adds a worktree for a task.
pub const CREATE_WORKTREE: &str = "create_worktree";
/// Keeps a done task's worktree for the user.
pub const KEEP_WORKTREE: &str = "keep_worktree";
/// Removes a done task's worktree when nothing would be lost.
pub const REMOVE_WORKTREE: &str = "remove_worktree";

fn task_schema() -> Value {
    json!({"type": "integer", "minimum": 1, "description": "The board task's id."})
}

/// The three specs, in registration order.
pub fn specs() -> [ToolSpec; 3] {
    [
        ToolSpec::new(
            CREATE_WORKTREE,
            "Give a board task its own git worktree: a folder on a new branch wt/<name>, where the teammate who claims the task works, apart from everyone else's files.",
            ToolEffect::Write,
            json!({
                "type": "object",
                "properties": {
                    "task_id": task_schema(),
                    "name": {
                        "type": "string",
                        "minLength": 1,
                        "description": format!("A short slug of at most {MAX_NAME_CHARS} lower-case letters, digits and single hyphens.")
                    },
                    "base_ref": {"type": "string", "description": "The branch, tag or commit to start from; default: the current branch."}
                },
                "required": ["task_id", "name"]
            }),
        ),
        ToolSpec::new(
            KEEP_WORKTREE,
            "Keep a task's worktree and branch for the user to look at; nothing more runs there.",
            ToolEffect::State,
            json!({
                "type": "object",
                "properties": {"task_id": task_schema()},
                "required": ["task_id"]
            }),
        ),
        ToolSpec::new(
            REMOVE_WORKTREE,
            "Remove a done task's worktree and its branch. Nothing is ever lost: if a file would be (changed, untracked or ignored) or the branch has commits its base does not contain, both stay and you are told why.",
            ToolEffect::Write,
            json!({
                "type": "object",
                "properties": {"task_id": task_schema()},
                "required": ["task_id"]
            }),
        ),
    ]
}

/// Registers the three tools (the lead's; a teammate never gets them).
pub fn register(
    tools: ToolRegistryBuilder,
    trees: Worktrees,
    board: Arc<dyn TaskBoard>,
) -> ToolRegistryBuilder {
    let [create, keep, remove] = specs();
    let shared = Arc::new(Shared { trees, board });
    let tool = |kind| {
        Arc::new(WorktreeTool {
            shared: shared.clone(),
            kind,
        })
    };
    tools
        .tool(create, tool(Kind::Create))
        .tool(keep, tool(Kind::Keep))
        .tool(remove, tool(Kind::Remove))
}

#[derive(Debug)]
struct Shared {
    trees: Worktrees,
    board: Arc<dyn TaskBoard>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Create,
    Keep,
    Remove,
}

#[derive(Debug)]
struct WorktreeTool {
    shared: Arc<Shared>,
    kind: Kind,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateArgs {
    task_id: i64,
    name: String,
    base_ref: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskArgs {
    task_id: i64,
}

/// A worktree failure as the model reads it: its own mistakes (a name, a base, a state) are
/// invalid arguments; the rest failed to execute.
fn failure(err: WorktreeError) -> ToolFailure {
    match err {
        WorktreeError::BadBase { .. }
        | WorktreeError::AlreadyBound { .. }
        | WorktreeError::NameTaken { .. }
        | WorktreeError::NotBound { .. }
        | WorktreeError::WrongState { .. }
        | WorktreeError::TaskNotFinished { .. } => {
            ToolFailure::new(FailureCode::InvalidArguments, err.to_string())
        }
        other => ToolFailure::execution(other),
    }
}

impl Shared {
    async fn status(&self, task: TaskId) -> Result<Status, ToolFailure> {
        self.board
            .get(task)
            .await
            .map(|t| t.status)
            .map_err(agent_board::tools::failure)
    }
}

#[async_trait]
impl ToolHandler for WorktreeTool {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let shared = &self.shared;
        match self.kind {
            Kind::Create => {
                let args: CreateArgs = parse_arguments(call)?;
                let task = TaskId(args.task_id);
                let name = WorktreeName::new(&args.name).map_err(|err| {
                    ToolFailure::new(FailureCode::InvalidArguments, err.to_string())
                })?;
                let status = shared.status(task).await?;
                if matches!(status, Status::Completed | Status::Cancelled) {
                    return Err(ToolFailure::new(
                        FailureCode::InvalidArguments,
                        format!("task {task} is {status}: a worktree is for work still to do"),
                    ));
                }
                let binding = shared
                    .trees
                    .create(task, &name, args.base_ref.as_deref())
                    .await
                    .map_err(failure)?;
                Ok(format!(
                    "created worktree `{name}` for task {task}: {WORKTREES_DIR}/{name} on branch {} from {}",
                    name.branch(),
                    binding.base
                ))
            }
            Kind::Keep => {
                let args: TaskArgs = parse_arguments(call)?;
                let binding = shared
                    .trees
                    .keep(TaskId(args.task_id))
                    .await
                    .map_err(failure)?;
                Ok(format!(
                    "kept worktree `{}` of task {} and its branch {} for the user",
                    binding.name,
                    binding.task,
                    binding.name.branch()
                ))
            }
            Kind::Remove => {
                let args: TaskArgs = parse_arguments(call)?;
                let task = TaskId(args.task_id);
                let status = shared.status(task).await?;
                match shared.trees.remove(task, status).await.map_err(failure)? {
                    Removal::Removed(binding) => Ok(format!(
                        "removed worktree `{}` of task {} and its branch {}",
                        binding.name,
                        binding.task,
                        binding.name.branch()
                    )),
                    Removal::NeedsReview(binding) => Ok(review_text(&binding)),
                }
            }
        }
    }

    fn describe(&self, arguments: &Value) -> CallSummary {
        let task = arguments
            .get("task_id")
            .and_then(Value::as_i64)
            .map_or_else(|| "?".to_string(), |id| TaskId(id).to_string());
        let text = match self.kind {
            Kind::Create => {
                let name = arguments.get("name").and_then(Value::as_str).unwrap_or("?");
                let base = arguments
                    .get("base_ref")
                    .and_then(Value::as_str)
                    .unwrap_or("the current branch");
                format!(
                    "create worktree {WORKTREES_DIR}/{name} on a new branch wt/{name} from {base}, for task {task}"
                )
            }
            Kind::Keep => format!("keep task {task}'s worktree and branch"),
            Kind::Remove => format!(
                "remove task {task}'s worktree and branch (kept for review if anything would be lost)"
            ),
        };
        CallSummary::text(text)
    }
}

/// What the model is told of a removal that kept the worktree.
fn review_text(binding: &Binding) -> String {
    let why = match &binding.state {
        BindingState::NeedsReview { review } => review.to_string(),
        other => other.to_string(),
    };
    format!(
        "kept worktree `{}` of task {} for review ({WORKTREES_DIR}/{} and branch {} stay): {why}",
        binding.name,
        binding.task,
        binding.name,
        binding.name.branch()
    )
}
