//! The board's operations on one SQLite connection, each one transaction. Writers start with
//! `BEGIN IMMEDIATE`, so they take the database's write lock before reading what they decide
//! on: two claimers (threads or processes) are serialized by SQLite itself, and the second
//! sees the first's claim.

use std::time::Duration;

use agent_protocol::AgentId;
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use super::read::{self, exists};
use crate::board::{self, HeldRow, TokenRow, Verdict};
use crate::error::BoardError;
use crate::model::{
    Claim, ClaimEnd, ClaimTarget, ClaimToken, ImportedTask, MAX_TASKS, Millis, NewTask, Status,
    Task, TaskId,
};

/// The import marker in `meta`.
const IMPORTED: &str = "imported_chapter12";

/// Whether a failure is another writer holding the lock past the busy timeout.
pub(crate) fn is_busy(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// A database error, with "busy" told apart (nothing was changed then, and trying again
/// may work).
pub(crate) fn db_error(err: rusqlite::Error, waited: Duration) -> BoardError {
    if is_busy(&err) {
        BoardError::Busy { waited }
    } else {
        BoardError::Sqlite(err)
    }
}

pub(crate) fn write_tx(conn: &mut Connection) -> rusqlite::Result<Transaction<'_>> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
}

/// Whether `task` is reachable from `blocker` through `blocked_by` edges (adding the edge
/// `task -> blocker` would close a cycle).
fn reaches(conn: &Connection, blocker: TaskId, task: TaskId) -> Result<bool, BoardError> {
    Ok(conn
        .query_row(
            "WITH RECURSIVE reach(id) AS (
                 SELECT ?1
                 UNION SELECT d.blocked_by FROM dependencies d JOIN reach r ON d.task_id = r.id
             )
             SELECT 1 FROM reach WHERE id = ?2 LIMIT 1",
            [blocker.0, task.0],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}

/// Adds `task`'s edges, refusing a missing task, itself, or a cycle.
fn add_edges(conn: &Connection, task: TaskId, blocked_by: &[TaskId]) -> Result<(), BoardError> {
    for &blocker in blocked_by {
        if blocker == task {
            return Err(BoardError::SelfDependency(task));
        }
        if !exists(conn, blocker)? {
            return Err(BoardError::UnknownDependency { blocker });
        }
        if reaches(conn, blocker, task)? {
            return Err(BoardError::Cycle(vec![task, blocker, task]));
        }
        conn.execute(
            "INSERT INTO dependencies (task_id, blocked_by) VALUES (?1, ?2)",
            [task.0, blocker.0],
        )?;
    }
    Ok(())
}

fn count(conn: &Connection) -> Result<usize, BoardError> {
    let n: i64 = conn.query_row("SELECT count(*) FROM tasks", [], |r| r.get(0))?;
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

/// Inserts a checked task (`board::check_new` ran) in the caller's transaction.
pub(crate) fn create(
    tx: &Transaction<'_>,
    new: &NewTask,
    now: Millis,
) -> Result<TaskId, BoardError> {
    if count(tx)? >= MAX_TASKS {
        return Err(BoardError::Full);
    }
    // Blockers first: a refusal must come before the task row exists (the transaction would
    // roll it back anyway; this keeps the error the caller's, not a constraint's).
    for &blocker in &new.blocked_by {
        if !exists(tx, blocker)? {
            return Err(BoardError::UnknownDependency { blocker });
        }
    }
    let id: i64 = tx.query_row(
        "INSERT INTO tasks (subject, description, status, created_at, updated_at)
         VALUES (?1, ?2, 'pending', ?3, ?3) RETURNING id",
        params![new.subject, new.description, now.0],
        |r| r.get(0),
    )?;
    add_edges(tx, TaskId(id), &new.blocked_by)?;
    Ok(TaskId(id))
}

/// Returns every lease that has run out to pending, and closes its history entry at the
/// lease's end.
fn expire_due(tx: &Transaction<'_>, now: Millis) -> Result<(), BoardError> {
    tx.execute(
        "UPDATE claims SET ended = 'expired', ended_at = expires_at
         WHERE ended IS NULL AND expires_at <= ?1",
        [now.0],
    )?;
    tx.execute(
        "UPDATE tasks SET status = 'pending', owner = NULL, claim_token = NULL,
                          lease_expires = NULL, updated_at = ?1
         WHERE status = 'in_progress' AND lease_expires <= ?1",
        [now.0],
    )?;
    Ok(())
}

/// The open blockers of `task` (not completed), in id order.
fn open_blockers(conn: &Connection, task: TaskId) -> Result<Vec<TaskId>, BoardError> {
    let mut stmt = conn.prepare_cached(
        "SELECT d.blocked_by FROM dependencies d JOIN tasks b ON b.id = d.blocked_by
         WHERE d.task_id = ?1 AND b.status <> 'completed' ORDER BY d.blocked_by",
    )?;
    let ids = stmt
        .query_map([task.0], |r| r.get(0).map(TaskId))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(ids)
}

/// Which task a claim takes, or why none.
fn pick(tx: &Transaction<'_>, target: ClaimTarget) -> Result<TaskId, BoardError> {
    match target {
        ClaimTarget::OldestReady => tx
            .query_row(
                "SELECT id FROM tasks t WHERE status = 'pending' AND NOT EXISTS (
                     SELECT 1 FROM dependencies d JOIN tasks b ON b.id = d.blocked_by
                     WHERE d.task_id = t.id AND b.status <> 'completed')
                 ORDER BY created_at, id LIMIT 1",
                [],
                |r| r.get(0).map(TaskId),
            )
            .optional()?
            .ok_or(BoardError::NothingReady),
        ClaimTarget::Task(id) => {
            let row: Option<(String, Option<String>)> = tx
                .query_row(
                    "SELECT status, owner FROM tasks WHERE id = ?1",
                    [id.0],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            let (status, owner) = row.ok_or(BoardError::NotFound(id))?;
            let status: Status = status
                .parse()
                .map_err(|err: crate::model::UnknownStatus| BoardError::BadRow(err.to_string()))?;
            match (status, owner) {
                (Status::Pending, _) => {}
                (Status::InProgress, Some(owner)) => {
                    return Err(BoardError::AlreadyClaimed {
                        task: id,
                        owner: board::stored_owner(&owner)?,
                    });
                }
                (status, _) => return Err(BoardError::NotPending { task: id, status }),
            }
            let open = open_blockers(tx, id)?;
            if !open.is_empty() {
                return Err(BoardError::Blocked { task: id, by: open });
            }
            Ok(id)
        }
    }
}

pub(crate) fn claim(
    conn: &mut Connection,
    owner: &AgentId,
    target: ClaimTarget,
    now: Millis,
    lease: Duration,
) -> Result<Claim, BoardError> {
    let tx = write_tx(conn)?;
    expire_due(&tx, now)?;
    let task = pick(&tx, target)?;
    let token = board::mint_token()?;
    let expires = now.plus(lease);
    tx.execute(
        "INSERT INTO claims (task_id, token, owner, claimed_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![task.0, token.as_str(), owner.as_str(), now.0, expires.0],
    )?;
    // The one conditional UPDATE: it must change exactly one row, or nobody won.
    let changed = tx.execute(
        "UPDATE tasks SET status = 'in_progress', owner = ?2, claim_token = ?3,
                          lease_expires = ?4, updated_at = ?5
         WHERE id = ?1 AND status = 'pending'",
        params![task.0, owner.as_str(), token.as_str(), expires.0, now.0],
    )?;
    if changed != 1 {
        return Err(BoardError::Contended(task));
    }
    tx.commit()?;
    Ok(Claim {
        task,
        owner: owner.clone(),
        token,
        claimed_at: now,
        expires_at: expires,
    })
}

/// Applies the fencing rule to `token` in the caller's write transaction. An expired claim
/// is written down (and committed) before `LeaseExpired` is returned.
fn held<'c>(
    tx: Transaction<'c>,
    owner: &AgentId,
    task: TaskId,
    token: &ClaimToken,
    now: Millis,
) -> Result<(Transaction<'c>, i64), BoardError> {
    let row = tx
        .query_row(
            "SELECT status, claim_token, lease_expires FROM tasks WHERE id = ?1",
            [task.0],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<i64>>(2)?,
                ))
            },
        )
        .optional()?
        .map(|(status, token, expires)| -> Result<HeldRow, BoardError> {
            Ok(HeldRow {
                status: status.parse().map_err(|err: crate::model::UnknownStatus| {
                    BoardError::BadRow(err.to_string())
                })?,
                token,
                expired: expires.is_some_and(|e| now.0 >= e),
            })
        })
        .transpose()?;
    let claim = tx
        .query_row(
            "SELECT seq, task_id, owner, ended FROM claims WHERE token = ?1",
            [token.as_str()],
            |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<String>>(3)?,
                ))
            },
        )
        .optional()?
        .map(
            |(seq, task, owner, ended)| -> Result<TokenRow, BoardError> {
                Ok(TokenRow {
                    seq,
                    task: TaskId(task),
                    owner,
                    ended: ended
                        .map(|e| e.parse::<ClaimEnd>())
                        .transpose()
                        .map_err(|err| BoardError::BadRow(err.to_string()))?,
                })
            },
        )
        .transpose()?;
    match board::judge(task, owner, token, row, claim)? {
        Verdict::Held(seq) => Ok((tx, seq)),
        Verdict::ExpireNow(_) => {
            expire_due(&tx, now)?;
            tx.commit()?;
            Err(BoardError::LeaseExpired(task))
        }
    }
}

fn claim_of(tx: &Transaction<'_>, seq: i64, task: TaskId) -> Result<Claim, BoardError> {
    let (owner, token, claimed, expires) = tx.query_row(
        "SELECT owner, token, claimed_at, expires_at FROM claims WHERE seq = ?1",
        [seq],
        |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
            ))
        },
    )?;
    Ok(Claim {
        task,
        owner: board::stored_owner(&owner)?,
        token: ClaimToken(token),
        claimed_at: Millis(claimed),
        expires_at: Millis(expires),
    })
}

pub(crate) fn check_held(
    conn: &mut Connection,
    owner: &AgentId,
    task: TaskId,
    token: &ClaimToken,
    now: Millis,
) -> Result<Claim, BoardError> {
    let (tx, seq) = held(write_tx(conn)?, owner, task, token, now)?;
    let claim = claim_of(&tx, seq, task)?;
    tx.commit()?;
    Ok(claim)
}

pub(crate) fn renew(
    conn: &mut Connection,
    owner: &AgentId,
    task: TaskId,
    token: &ClaimToken,
    now: Millis,
    lease: Duration,
) -> Result<Claim, BoardError> {
    let (tx, seq) = held(write_tx(conn)?, owner, task, token, now)?;
    let expires = now.plus(lease);
    tx.execute(
        "UPDATE tasks SET lease_expires = ?2 WHERE id = ?1 AND claim_token = ?3",
        params![task.0, expires.0, token.as_str()],
    )?;
    tx.execute(
        "UPDATE claims SET expires_at = ?2 WHERE seq = ?1",
        params![seq, expires.0],
    )?;
    let claim = claim_of(&tx, seq, task)?;
    tx.commit()?;
    Ok(claim)
}

/// Ends a held claim: `completed` with a result, or `released` (pending again) with a reason.
pub(crate) fn finish(
    conn: &mut Connection,
    owner: &AgentId,
    task: TaskId,
    token: &ClaimToken,
    end: ClaimEnd,
    text: &str,
    now: Millis,
) -> Result<Task, BoardError> {
    let (tx, seq) = held(write_tx(conn)?, owner, task, token, now)?;
    let (status, result, reason) = match end {
        ClaimEnd::Completed => ("completed", Some(text), None),
        _ => ("pending", None, Some(text)),
    };
    let changed = tx.execute(
        "UPDATE tasks SET status = ?2, result = ?3, owner = NULL, claim_token = NULL,
                          lease_expires = NULL, updated_at = ?4
         WHERE id = ?1 AND claim_token = ?5",
        params![task.0, status, result, now.0, token.as_str()],
    )?;
    if changed != 1 {
        return Err(BoardError::ClaimMismatch(task));
    }
    tx.execute(
        "UPDATE claims SET ended = ?2, ended_at = ?3, reason = ?4 WHERE seq = ?1",
        params![seq, end.as_str(), now.0, reason],
    )?;
    let task = read::get(&tx, task, now)?;
    tx.commit()?;
    Ok(task)
}

/// Imports once: every task row first (ids kept), then every edge (each checked), all in one
/// transaction, so a refused edge leaves no task behind either.
pub(crate) fn import_once(
    conn: &mut Connection,
    tasks: &[ImportedTask],
    now: Millis,
) -> Result<bool, BoardError> {
    let tx = write_tx(conn)?;
    let done = tx
        .query_row("SELECT 1 FROM meta WHERE key = ?1", [IMPORTED], |_| Ok(()))
        .optional()?
        .is_some();
    if done {
        return Ok(false);
    }
    if count(&tx)? + tasks.len() > MAX_TASKS {
        return Err(BoardError::Full);
    }
    for task in tasks {
        tx.execute(
            "INSERT INTO tasks (id, subject, description, status, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                task.id.0,
                task.subject,
                task.description,
                task.status.as_str(),
                task.created_at.0,
                now.0
            ],
        )?;
    }
    for task in tasks {
        add_edges(&tx, task.id, &task.blocked_by)?;
    }
    tx.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2)",
        params![IMPORTED, tasks.len().to_string()],
    )?;
    tx.commit()?;
    Ok(true)
}
