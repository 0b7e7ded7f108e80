//! The dependency graph over a loaded set of tasks: cycles, readiness, dependents.
//!
//! An edge `a -> b` means "a is blocked by b". Only completed blockers stop blocking: a
//! cancelled blocker keeps its dependents waiting, so cancelling work never silently starts
//! what depended on it (remove the edge or cancel the dependent too).

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{Status, Task, TaskId};

/// The tasks of a store, by id.
pub type Tasks = BTreeMap<TaskId, Task>;

/// The path `to -> … -> from` if `from` is reachable from `to` along `blocked_by` edges:
/// adding `from -> to` would then close the cycle `from -> to -> … -> from`.
pub fn cycle_through(tasks: &Tasks, from: TaskId, to: TaskId) -> Option<Vec<TaskId>> {
    if from == to {
        return Some(vec![from, from]);
    }
    // Depth-first with an explicit stack and a visited set: the graph is a DAG already, but
    // files edited by hand may not be, and a loop here must still end.
    let mut visited = BTreeSet::new();
    let mut stack = vec![vec![to]];
    while let Some(path) = stack.pop() {
        let Some(&last) = path.last() else { continue };
        if last == from {
            let mut cycle = vec![from];
            cycle.extend(path);
            return Some(cycle);
        }
        if !visited.insert(last) {
            continue;
        }
        if let Some(task) = tasks.get(&last) {
            for &next in task.blocked_by.iter().rev() {
                let mut longer = path.clone();
                longer.push(next);
                stack.push(longer);
            }
        }
    }
    None
}

/// The blockers of `task` that still block it (every one not completed, unknown ids
/// included: a missing task cannot be finished).
pub fn open_blockers(tasks: &Tasks, task: &Task) -> Vec<TaskId> {
    task.blocked_by
        .iter()
        .copied()
        .filter(|id| tasks.get(id).is_none_or(|t| t.status != Status::Completed))
        .collect()
}

/// Pending with nothing blocking it: what can be started now.
pub fn is_ready(tasks: &Tasks, task: &Task) -> bool {
    task.status == Status::Pending && open_blockers(tasks, task).is_empty()
}

/// The tasks that list `id` in their `blocked_by`.
pub fn dependents(tasks: &Tasks, id: TaskId) -> Vec<TaskId> {
    tasks
        .values()
        .filter(|t| t.blocked_by.contains(&id))
        .map(|t| t.id)
        .collect()
}

/// `3 -> 5 -> 3`.
pub fn render_path(path: &[TaskId]) -> String {
    path.iter()
        .map(TaskId::to_string)
        .collect::<Vec<_>>()
        .join(" -> ")
}
