//! Chapter 12's `.tasks/*.json`, brought onto the board once.
//!
//! The files are read with chapter 12's own store (through the workspace boundary, each file
//! bounded, a FIFO or symlink never opened), then checked again as the board checks its own
//! writes — a repository is untrusted input, and its task files may have been written by
//! hand: a subject that is not one line, an id past the board's range, a dependency on a
//! task that is missing or skipped, a cycle. Each bad record is skipped with a warning; the
//! rest go in, ids kept, in one transaction. The imported files are then renamed to
//! `<id>.json.imported` (kept, never deleted), so chapter 12's tools no longer see them.
//! Skipped files stay where they are, for a person to look at.

use std::collections::{BTreeMap, BTreeSet};

use agent_tasks::{Status as Ch12Status, TASKS_DIR, TaskStore};
use agent_workspace::Workspace;

use crate::board::{self, TaskBoard};
use crate::error::BoardError;
use crate::model::{ImportedTask, MAX_TASKS, Millis, NewTask, Status, TaskId};

/// The suffix an imported file is renamed with.
pub const IMPORTED_SUFFIX: &str = ".imported";

/// Why a chapter 12 record was not imported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Skip {
    /// Chapter 12's store could not read it (not JSON, not a regular file, …).
    #[error("it cannot be read: {0}")]
    Unreadable(String),
    /// A field the board refuses (a subject that is not one line, too long, …).
    #[error("{0}")]
    Invalid(String),
    /// An id past `i64::MAX`.
    #[error("its id is beyond the board's range")]
    IdOutOfRange,
    /// It waits for a task that is not imported.
    #[error("it waits for task #{0}, which is missing or skipped")]
    MissingBlocker(u64),
    /// It is on a cycle of `blocked_by` edges.
    #[error("it is part of a dependency cycle")]
    Cycle,
    /// Past the board's bound.
    #[error("over the board's {MAX_TASKS} tasks")]
    TooMany,
}

/// What one import found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Found {
    /// Checked records, in id order.
    pub tasks: Vec<ImportedTask>,
    /// Skipped records by their chapter 12 id, in id order.
    pub skipped: Vec<(u64, Skip)>,
}

/// What `import_into` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Imported {
    /// The board had imported before; nothing was written or renamed.
    AlreadyDone,
    /// These ids were imported and their files renamed; these were skipped.
    Done {
        /// The imported ids, in id order.
        ids: Vec<TaskId>,
        /// What was skipped and why.
        skipped: Vec<(u64, Skip)>,
    },
}

fn status(status: Ch12Status) -> Status {
    match status {
        // A claim is the board's, never a file's: what was in progress starts over.
        Ch12Status::Pending | Ch12Status::InProgress => Status::Pending,
        Ch12Status::Completed => Status::Completed,
        Ch12Status::Cancelled => Status::Cancelled,
    }
}

/// Reads and checks `.tasks/` (blocking I/O).
pub fn read(workspace: &Workspace) -> Result<Found, BoardError> {
    let snapshot = match TaskStore::open(workspace).snapshot() {
        Ok(snapshot) => snapshot,
        Err(agent_tasks::TaskError::Storage(err)) => return Err(BoardError::Path(err)),
        Err(other) => return Err(BoardError::BadRow(other.to_string())),
    };
    let mut skipped: BTreeMap<u64, Skip> = snapshot
        .skipped
        .iter()
        .map(|(id, err)| (*id, Skip::Unreadable(err.to_string())))
        .collect();
    let mut checked: BTreeMap<u64, ImportedTask> = BTreeMap::new();
    for (&id, task) in &snapshot.tasks {
        if checked.len() >= MAX_TASKS {
            skipped.insert(id, Skip::TooMany);
            continue;
        }
        let Ok(board_id) = i64::try_from(id) else {
            skipped.insert(id, Skip::IdOutOfRange);
            continue;
        };
        let mut blocked_by = Vec::with_capacity(task.blocked_by.len());
        let mut out_of_range = false;
        for &b in &task.blocked_by {
            match i64::try_from(b) {
                Ok(b) => blocked_by.push(TaskId(b)),
                Err(_) => out_of_range = true,
            }
        }
        if out_of_range {
            skipped.insert(id, Skip::IdOutOfRange);
            continue;
        }
        let new = board::check_new(NewTask {
            subject: task.subject.clone(),
            description: task.description.clone(),
            blocked_by,
        });
        match new {
            Ok(new) => {
                let created = i64::try_from(task.created).unwrap_or(i64::MAX / 1000);
                checked.insert(
                    id,
                    ImportedTask {
                        id: TaskId(board_id),
                        subject: new.subject,
                        description: new.description,
                        status: status(task.status),
                        blocked_by: new.blocked_by,
                        created_at: Millis(created.saturating_mul(1000)),
                    },
                );
            }
            Err(err) => {
                skipped.insert(id, Skip::Invalid(err.to_string()));
            }
        }
    }
    drop_unplaceable(&mut checked, &mut skipped);
    Ok(Found {
        tasks: checked.into_values().collect(),
        skipped: skipped.into_iter().collect(),
    })
}

/// Removes records that wait for a missing or skipped task (repeatedly: skipping one may
/// strand another), then those on a cycle (what is left after peeling every task whose
/// blockers are all placed, Kahn's way).
fn drop_unplaceable(checked: &mut BTreeMap<u64, ImportedTask>, skipped: &mut BTreeMap<u64, Skip>) {
    loop {
        let stranded: Vec<(u64, u64)> = checked
            .iter()
            .filter_map(|(id, t)| {
                t.blocked_by
                    .iter()
                    .find(|b| {
                        u64::try_from(b.0).map_or(true, |b| !checked.contains_key(&b) || b == *id)
                    })
                    .map(|b| (*id, u64::try_from(b.0).unwrap_or(0)))
            })
            .collect();
        if stranded.is_empty() {
            break;
        }
        for (id, blocker) in stranded {
            checked.remove(&id);
            skipped.insert(
                id,
                if blocker == id {
                    Skip::Cycle
                } else {
                    Skip::MissingBlocker(blocker)
                },
            );
        }
    }
    let mut placed: BTreeSet<i64> = BTreeSet::new();
    loop {
        let next: Vec<i64> = checked
            .values()
            .filter(|t| !placed.contains(&t.id.0))
            .filter(|t| t.blocked_by.iter().all(|b| placed.contains(&b.0)))
            .map(|t| t.id.0)
            .collect();
        if next.is_empty() {
            break;
        }
        placed.extend(next);
    }
    let cyclic: Vec<u64> = checked
        .keys()
        .copied()
        .filter(|id| i64::try_from(*id).is_ok_and(|id| !placed.contains(&id)))
        .collect();
    for id in cyclic {
        checked.remove(&id);
        skipped.insert(id, Skip::Cycle);
    }
}

/// Renames the imported files to `<id>.json.imported` (blocking I/O). A rename that fails is
/// a warning: the board already holds the task, and the import is never repeated.
pub fn archive(workspace: &Workspace, ids: &[TaskId]) {
    for id in ids {
        let from = format!("{TASKS_DIR}/{}.json", id.0);
        let to = format!("{from}{IMPORTED_SUFFIX}");
        let renamed = workspace
            .inside(&from)
            .and_then(|from| Ok((from, workspace.inside(&to)?)))
            .and_then(|(from, to)| workspace.rename(&from, &to));
        if let Err(err) = renamed {
            tracing::warn!("board: imported {from} but could not rename it: {err}");
        }
    }
}

/// Logs what was skipped (each line escaped: the reasons quote file content).
pub fn warn_skipped(skipped: &[(u64, Skip)]) {
    for (id, why) in skipped {
        tracing::warn!(
            "board: not importing {TASKS_DIR}/{id}.json: {}",
            why.to_string().escape_debug()
        );
    }
}

/// Imports `.tasks/` into any board (the PostgreSQL one included) once: the first call
/// records the import even when there is nothing to bring over, so tasks chapter 12 writes
/// later are never pulled in behind the team's back.
pub async fn import_into(
    workspace: &Workspace,
    board: &dyn TaskBoard,
) -> Result<Imported, BoardError> {
    let reader = workspace.clone();
    let found = tokio::task::spawn_blocking(move || read(&reader))
        .await
        .map_err(|err| BoardError::Interrupted(err.to_string()))??;
    let ids: Vec<TaskId> = found.tasks.iter().map(|t| t.id).collect();
    if !board.import_once(found.tasks).await? {
        return Ok(Imported::AlreadyDone);
    }
    warn_skipped(&found.skipped);
    let archiver = workspace.clone();
    let archived = ids.clone();
    tokio::task::spawn_blocking(move || archive(&archiver, &archived))
        .await
        .map_err(|err| BoardError::Interrupted(err.to_string()))?;
    Ok(Imported::Done {
        ids,
        skipped: found.skipped,
    })
}
