//! The text views of the task graph: one line per task for `task_list` and the CLI, the
//! detail of one task for `task_get` and `tasks show`, and the prompt's `## tasks` block.

use std::borrow::Cow;

use agent_core::fragment::{FragmentKind, Template};

use crate::graph::{self, Tasks};
use crate::model::{MAX_OWNER_CHARS, MAX_SUBJECT_CHARS, Status, Task};

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
    line_with(tasks, task, &task.subject, task.owner.as_deref())
}

/// [`line`] with the subject and owner given: the prompt passes them cut to their bounds.
fn line_with(tasks: &Tasks, task: &Task, subject: &str, owner: Option<&str>) -> String {
    let mut text = format!("#{} [{}] {}", task.id, task.status, subject);
    if let Some(owner) = owner {
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

/// One task in full: its line, owner, edges both ways, times, then the description.
pub fn detail(tasks: &Tasks, task: &Task) -> String {
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
        task.created,
        task.updated,
    );
    if !task.description.is_empty() {
        text.push_str("\n\n");
        text.push_str(&task.description);
    }
    text
}

/// One line of the prompt's `## tasks` body, laid out in its own file.
const PROMPT_LINE: Template = Template::new(FragmentKind::Tasks, include_str!("prompt_line.md"));

/// `text` as one line of the prompt: a task file may have been planted or edited by hand, so
/// its subject and owner are data there — they cannot break the line, open a section of the
/// system prompt (`## identity`) or forge another fragment.
fn prompt_line(text: &str) -> String {
    PROMPT_LINE.fill().inline("task", text).render().into_text()
}

/// The first `max` characters of `text`, with `…` when something was cut.
fn bounded(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        Some((end, _)) => Cow::Owned(format!("{}…", &text[..end])),
        None => Cow::Borrowed(text),
    }
}

/// The open tasks as the system prompt's `## tasks` body (the prompt writes the heading),
/// `None` when nothing is open (the section is then left out, and the prompt is byte for byte
/// chapter 10's). At most [`PROMPT_MAX_TASKS`] lines, each subject and owner cut to the
/// bounds a write enforces, whatever the files hold.
pub fn prompt_block(tasks: &Tasks) -> Option<String> {
    let open: Vec<&Task> = tasks.values().filter(|t| t.status.is_open()).collect();
    if open.is_empty() {
        return None;
    }
    let mut lines: Vec<String> = open
        .iter()
        .take(PROMPT_MAX_TASKS)
        .map(|t| {
            let subject = bounded(&t.subject, MAX_SUBJECT_CHARS);
            let owner = t.owner.as_deref().map(|o| bounded(o, MAX_OWNER_CHARS));
            prompt_line(&line_with(tasks, t, &subject, owner.as_deref()))
        })
        .collect();
    if open.len() > PROMPT_MAX_TASKS {
        lines.push(prompt_line(&format!(
            "… and {} more (task_list shows them)",
            open.len() - PROMPT_MAX_TASKS
        )));
    }
    Some(lines.join("\n"))
}
