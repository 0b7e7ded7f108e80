//! The text views of the task graph: one line per task for `task_list` and the CLI, the
//! detail of one task for `task_get` and `tasks show`, and the prompt's `## tasks` block.

use crate::graph::{self, Tasks};
use crate::model::{Status, Task};

/// Open tasks the prompt lists; the rest are one "more" line, so the prompt stays small.
pub const PROMPT_MAX_TASKS: usize = 20;

fn hashes(ids: &[u64]) -> String {
    ids.iter()
        .map(|id| format!("#{id}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `#2 [pending] Test the parser (ready)`, `#3 [pending] Ship (blocked by #2)`,
/// `#4 [in_progress] Docs (owner: ana)`.
pub fn line(tasks: &Tasks, task: &Task) -> String {
    let mut text = format!("#{} [{}] {}", task.id, task.status, task.subject);
    if let Some(owner) = &task.owner {
        text.push_str(&format!(" (owner: {owner})"));
    }
    if task.status.is_open() {
        let open = graph::open_blockers(tasks, task);
        if !open.is_empty() {
            text.push_str(&format!(" (blocked by {})", hashes(&open)));
        } else if task.status == Status::Pending {
            text.push_str(" (ready)");
        }
    }
    text
}

/// Every task (or those with `status`), one line each, by id.
pub fn list(tasks: &Tasks, status: Option<Status>) -> String {
    let lines: Vec<String> = tasks
        .values()
        .filter(|t| status.is_none_or(|s| t.status == s))
        .map(|t| line(tasks, t))
        .collect();
    if lines.is_empty() {
        return match status {
            Some(status) => format!("(no {status} tasks)"),
            None => "(no tasks)".to_string(),
        };
    }
    lines.join("\n")
}

/// One task in full: its line, owner, edges both ways, times (epoch seconds), then the
/// description. What `task_get` answers the model, unchanged since chapter 12.
pub fn detail(tasks: &Tasks, task: &Task) -> String {
    detail_with(tasks, task, &|seconds| seconds.to_string())
}

/// [`detail`] with the times written by `time` (epoch seconds in): `tasks show` prints dates
/// for people, while the tool's result keeps the bytes its requests always carried.
pub fn detail_with(tasks: &Tasks, task: &Task, time: &dyn Fn(u64) -> String) -> String {
    let blocked_by: Vec<String> = task
        .blocked_by
        .iter()
        .map(|id| match tasks.get(id) {
            Some(t) => format!("#{id} [{}]", t.status),
            None => format!("#{id} [missing]"),
        })
        .collect();
    let blocks = graph::dependents(tasks, task.id);
    let none = |list: String| {
        if list.is_empty() {
            "(none)".to_string()
        } else {
            list
        }
    };
    let mut text = format!(
        "{}\nowner: {}\nblocked by: {}\nblocks: {}\ncreated: {}, updated: {}",
        line(tasks, task),
        task.owner.as_deref().unwrap_or("(none)"),
        none(blocked_by.join(", ")),
        none(hashes(&blocks)),
        time(task.created),
        time(task.updated),
    );
    if !task.description.is_empty() {
        text.push_str("\n\n");
        text.push_str(&task.description);
    }
    text
}

/// The open tasks as the system prompt's `## tasks` body, `None` when nothing is open (the
/// section is then left out, and the prompt is byte for byte chapter 10's).
pub fn prompt_block(tasks: &Tasks) -> Option<String> {
    let open: Vec<&Task> = tasks.values().filter(|t| t.status.is_open()).collect();
    if open.is_empty() {
        return None;
    }
    let mut lines: Vec<String> = open
        .iter()
        .take(PROMPT_MAX_TASKS)
        .map(|t| format!("- {}", line(tasks, t)))
        .collect();
    if open.len() > PROMPT_MAX_TASKS {
        lines.push(format!(
            "- … and {} more (task_list shows them)",
            open.len() - PROMPT_MAX_TASKS
        ));
    }
    Some(lines.join("\n"))
}
