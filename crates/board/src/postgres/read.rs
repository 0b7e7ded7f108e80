//! Reading the board on PostgreSQL: tasks as the board shows them (a lease that ran out on
//! the server's clock shows as pending before anyone writes that down) and the claim history.

use tokio_postgres::Transaction;

use super::schema::ms;
use crate::board;
use crate::error::BoardError;
use crate::model::{
    ClaimEnd, ClaimRecord, ClaimToken, Holder, MAX_HISTORY, MAX_TASKS, Millis, Status, Task, TaskId,
};

pub(crate) fn status(text: &str) -> Result<Status, BoardError> {
    text.parse()
        .map_err(|err: crate::model::UnknownStatus| BoardError::BadRow(err.to_string()))
}

pub(crate) const TASK_COLUMNS: &str = concat!(
    "id, subject, description, status, owner, ",
    ms!("lease_expires"),
    ", result, ",
    ms!("created_at"),
    ", ",
    ms!("updated_at"),
    ", lease_expires <= now(), (SELECT ",
    ms!("c.claimed_at"),
    " FROM claims c WHERE c.token = tasks.claim_token)"
);

pub(crate) async fn blockers(tx: &Transaction<'_>, id: TaskId) -> Result<Vec<TaskId>, BoardError> {
    let rows = tx
        .query(
            "SELECT blocked_by FROM dependencies WHERE task_id = $1 ORDER BY blocked_by",
            &[&id.0],
        )
        .await?;
    Ok(rows.iter().map(|r| TaskId(r.get(0))).collect())
}

pub(crate) async fn read_task(
    tx: &Transaction<'_>,
    row: &tokio_postgres::Row,
) -> Result<Task, BoardError> {
    let id = TaskId(row.try_get(0)?);
    let mut status = status(row.try_get(3)?)?;
    let owner: Option<String> = row.try_get(4)?;
    let expires: Option<i64> = row.try_get(5)?;
    let expired: Option<bool> = row.try_get(9)?;
    let claimed: Option<i64> = row.try_get(10)?;
    let holder = match (status, owner, expires, expired) {
        // A lease that ran out shows as pending before anyone writes that down.
        (Status::InProgress, Some(_), Some(_), Some(true)) => {
            status = Status::Pending;
            None
        }
        (Status::InProgress, Some(owner), Some(expires), _) => Some(Holder {
            owner: board::stored_owner(&owner)?,
            claimed_at: Millis(claimed.unwrap_or(expires)),
            expires_at: Millis(expires),
        }),
        _ => None,
    };
    Ok(Task {
        id,
        subject: row.try_get(1)?,
        description: row.try_get(2)?,
        status,
        blocked_by: blockers(tx, id).await?,
        holder,
        result: row.try_get(6)?,
        created_at: Millis(row.try_get(7)?),
        updated_at: Millis(row.try_get(8)?),
    })
}

pub(crate) async fn get(tx: &Transaction<'_>, id: TaskId) -> Result<Task, BoardError> {
    let row = tx
        .query_opt(
            &format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = $1"),
            &[&id.0],
        )
        .await?
        .ok_or(BoardError::NotFound(id))?;
    read_task(tx, &row).await
}

pub(crate) async fn list(tx: &Transaction<'_>) -> Result<Vec<Task>, BoardError> {
    let rows = tx
        .query(
            &format!("SELECT {TASK_COLUMNS} FROM tasks ORDER BY created_at, id LIMIT {MAX_TASKS}"),
            &[],
        )
        .await?;
    let mut tasks = Vec::with_capacity(rows.len());
    for row in &rows {
        tasks.push(read_task(tx, row).await?);
    }
    Ok(tasks)
}

pub(crate) async fn exists(tx: &Transaction<'_>, id: TaskId) -> Result<bool, BoardError> {
    Ok(tx
        .query_opt("SELECT 1 FROM tasks WHERE id = $1", &[&id.0])
        .await?
        .is_some())
}

pub(crate) async fn history(
    tx: &Transaction<'_>,
    task: TaskId,
) -> Result<Vec<ClaimRecord>, BoardError> {
    if !exists(tx, task).await? {
        return Err(BoardError::NotFound(task));
    }
    let rows = tx
        .query(
            concat!(
                "SELECT seq, owner, token, ",
                ms!("claimed_at"),
                ", ",
                ms!("expires_at"),
                ", ended, ",
                ms!("ended_at"),
                ", reason FROM (SELECT * FROM claims WHERE task_id = $1 ORDER BY seq DESC LIMIT $2) newest ORDER BY seq"
            ),
            &[&task.0, &(MAX_HISTORY as i64)],
        )
        .await?;
    let mut records = Vec::with_capacity(rows.len());
    for r in &rows {
        let ended: Option<String> = r.try_get(5)?;
        let ended_at: Option<i64> = r.try_get(6)?;
        let ended = match (ended, ended_at) {
            (Some(end), Some(at)) => Some((
                end.parse::<ClaimEnd>()
                    .map_err(|err| BoardError::BadRow(err.to_string()))?,
                Millis(at),
            )),
            _ => None,
        };
        records.push(ClaimRecord {
            seq: r.try_get(0)?,
            task,
            owner: board::stored_owner(r.try_get(1)?)?,
            token: ClaimToken(r.try_get(2)?),
            claimed_at: Millis(r.try_get(3)?),
            expires_at: Millis(r.try_get(4)?),
            ended,
            reason: r.try_get(7)?,
        });
    }
    Ok(records)
}
