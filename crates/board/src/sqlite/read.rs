//! Reading the board on SQLite: tasks as the board shows them (a lease that ran out shows
//! as pending before anyone writes that down) and the claim history.

use rusqlite::{Connection, OptionalExtension};

use crate::board;
use crate::error::BoardError;
use crate::model::{
    ClaimEnd, ClaimRecord, ClaimToken, Holder, MAX_HISTORY, MAX_TASKS, Millis, Status, Task, TaskId,
};

pub(crate) const TASK_COLUMNS: &str = "id, subject, description, status, owner, lease_expires, result, created_at, updated_at, \
     (SELECT claimed_at FROM claims c WHERE c.token = tasks.claim_token)";

pub(crate) fn read_task(
    conn: &Connection,
    row: &rusqlite::Row<'_>,
    now: Millis,
) -> Result<Task, BoardError> {
    let id = TaskId(row.get(0)?);
    let status: String = row.get(3)?;
    let mut status: Status = status
        .parse()
        .map_err(|err: crate::model::UnknownStatus| BoardError::BadRow(err.to_string()))?;
    let owner: Option<String> = row.get(4)?;
    let expires: Option<i64> = row.get(5)?;
    let claimed: Option<i64> = row.get(9)?;
    let holder = match (status, owner, expires) {
        // A lease that ran out shows as pending before anyone writes that down.
        (Status::InProgress, Some(_), Some(expires)) if now.0 >= expires => {
            status = Status::Pending;
            None
        }
        (Status::InProgress, Some(owner), Some(expires)) => Some(Holder {
            owner: board::stored_owner(&owner)?,
            claimed_at: Millis(claimed.unwrap_or(expires)),
            expires_at: Millis(expires),
        }),
        _ => None,
    };
    Ok(Task {
        id,
        subject: row.get(1)?,
        description: row.get(2)?,
        status,
        blocked_by: blockers(conn, id)?,
        holder,
        result: row.get(6)?,
        created_at: Millis(row.get(7)?),
        updated_at: Millis(row.get(8)?),
    })
}

pub(crate) fn blockers(conn: &Connection, id: TaskId) -> Result<Vec<TaskId>, BoardError> {
    let mut stmt = conn.prepare_cached(
        "SELECT blocked_by FROM dependencies WHERE task_id = ?1 ORDER BY blocked_by",
    )?;
    let ids = stmt
        .query_map([id.0], |r| r.get(0).map(TaskId))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(ids)
}

pub(crate) fn get(conn: &Connection, id: TaskId, now: Millis) -> Result<Task, BoardError> {
    let mut stmt = conn.prepare(&format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1"))?;
    let mut rows = stmt.query([id.0])?;
    match rows.next()? {
        Some(row) => read_task(conn, row, now),
        None => Err(BoardError::NotFound(id)),
    }
}

pub(crate) fn list(conn: &Connection, now: Millis) -> Result<Vec<Task>, BoardError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {TASK_COLUMNS} FROM tasks ORDER BY created_at, id LIMIT {MAX_TASKS}"
    ))?;
    let mut rows = stmt.query([])?;
    let mut tasks = Vec::new();
    while let Some(row) = rows.next()? {
        tasks.push(read_task(conn, row, now)?);
    }
    Ok(tasks)
}

pub(crate) fn exists(conn: &Connection, id: TaskId) -> Result<bool, BoardError> {
    Ok(conn
        .query_row("SELECT 1 FROM tasks WHERE id = ?1", [id.0], |_| Ok(()))
        .optional()?
        .is_some())
}

pub(crate) fn history(conn: &Connection, task: TaskId) -> Result<Vec<ClaimRecord>, BoardError> {
    if !exists(conn, task)? {
        return Err(BoardError::NotFound(task));
    }
    let mut stmt = conn.prepare(
        "SELECT seq, owner, token, claimed_at, expires_at, ended, ended_at, reason
         FROM (SELECT * FROM claims WHERE task_id = ?1 ORDER BY seq DESC LIMIT ?2) ORDER BY seq",
    )?;
    let mut rows = stmt.query([task.0, MAX_HISTORY as i64])?;
    let mut records = Vec::new();
    while let Some(r) = rows.next()? {
        let ended: Option<String> = r.get(5)?;
        let ended_at: Option<i64> = r.get(6)?;
        let ended = match (ended, ended_at) {
            (Some(end), Some(at)) => Some((
                end.parse::<ClaimEnd>()
                    .map_err(|err| BoardError::BadRow(err.to_string()))?,
                Millis(at),
            )),
            _ => None,
        };
        records.push(ClaimRecord {
            seq: r.get(0)?,
            task,
            owner: board::stored_owner(&r.get::<_, String>(1)?)?,
            token: ClaimToken(r.get(2)?),
            claimed_at: Millis(r.get(3)?),
            expires_at: Millis(r.get(4)?),
            ended,
            reason: r.get(7)?,
        });
    }
    Ok(records)
}
