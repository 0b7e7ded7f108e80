//! The board's operations on PostgreSQL, each one transaction at READ COMMITTED (the
//! server's default). A claim locks the row it takes with `FOR UPDATE SKIP LOCKED`, so
//! claimers never wait on each other and never take the same row; the conditional UPDATE
//! that follows must change exactly one row. Every time is the server's `now()`.

use std::time::Duration;

use agent_protocol::AgentId;
use tokio_postgres::Transaction;
use tokio_postgres::types::ToSql;

use super::read::{self, exists};
use super::schema::ms;
use crate::board::{self, HeldRow, TokenRow, Verdict};
use crate::error::BoardError;
use crate::model::{
    Claim, ClaimEnd, ClaimTarget, ClaimToken, ImportedTask, MAX_TASKS, Millis, NewTask, Status,
    Task, TaskId,
};

const IMPORTED: &str = "imported_chapter12";

fn millis(lease: Duration) -> i64 {
    i64::try_from(lease.as_millis()).unwrap_or(i64::MAX)
}

async fn count(tx: &Transaction<'_>) -> Result<usize, BoardError> {
    let n: i64 = tx
        .query_one("SELECT count(*) FROM tasks", &[])
        .await?
        .get(0);
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

async fn add_edges(
    tx: &Transaction<'_>,
    task: TaskId,
    blocked_by: &[TaskId],
) -> Result<(), BoardError> {
    for &blocker in blocked_by {
        if blocker == task {
            return Err(BoardError::SelfDependency(task));
        }
        if !exists(tx, blocker).await? {
            return Err(BoardError::UnknownDependency { blocker });
        }
        let cycle = tx
            .query_opt(
                "WITH RECURSIVE reach(id) AS (
                     SELECT $1::bigint
                     UNION SELECT d.blocked_by FROM dependencies d JOIN reach r ON d.task_id = r.id
                 )
                 SELECT 1 FROM reach WHERE id = $2 LIMIT 1",
                &[&blocker.0, &task.0],
            )
            .await?
            .is_some();
        if cycle {
            return Err(BoardError::Cycle(vec![task, blocker, task]));
        }
        tx.execute(
            "INSERT INTO dependencies (task_id, blocked_by) VALUES ($1, $2)",
            &[&task.0, &blocker.0],
        )
        .await?;
    }
    Ok(())
}

pub(crate) async fn create(tx: &Transaction<'_>, new: &NewTask) -> Result<TaskId, BoardError> {
    // One creator at a time, so the bound holds under concurrency too.
    tx.execute("LOCK TABLE tasks IN SHARE ROW EXCLUSIVE MODE", &[])
        .await?;
    if count(tx).await? >= MAX_TASKS {
        return Err(BoardError::Full);
    }
    for &blocker in &new.blocked_by {
        if !exists(tx, blocker).await? {
            return Err(BoardError::UnknownDependency { blocker });
        }
    }
    let id: i64 = tx
        .query_one(
            "INSERT INTO tasks (subject, description, status, created_at, updated_at)
             VALUES ($1, $2, 'pending', now(), now()) RETURNING id",
            &[&new.subject, &new.description],
        )
        .await?
        .get(0);
    add_edges(tx, TaskId(id), &new.blocked_by).await?;
    Ok(TaskId(id))
}

/// Returns the expired leases nobody is working on right now to pending (rows another
/// transaction holds are skipped: it is deciding about them itself).
async fn expire_due(tx: &Transaction<'_>) -> Result<(), BoardError> {
    tx.execute(
        "WITH due AS (
             SELECT id, claim_token FROM tasks
             WHERE status = 'in_progress' AND lease_expires <= now()
             ORDER BY id FOR UPDATE SKIP LOCKED
         ), ended AS (
             UPDATE claims c SET ended = 'expired', ended_at = c.expires_at
             FROM due WHERE c.token = due.claim_token AND c.ended IS NULL
         )
         UPDATE tasks t SET status = 'pending', owner = NULL, claim_token = NULL,
                            lease_expires = NULL, updated_at = now()
         FROM due WHERE t.id = due.id",
        &[],
    )
    .await?;
    Ok(())
}

async fn open_blockers(tx: &Transaction<'_>, task: TaskId) -> Result<Vec<TaskId>, BoardError> {
    let rows = tx
        .query(
            "SELECT d.blocked_by FROM dependencies d JOIN tasks b ON b.id = d.blocked_by
             WHERE d.task_id = $1 AND b.status <> 'completed' ORDER BY d.blocked_by",
            &[&task.0],
        )
        .await?;
    Ok(rows.iter().map(|r| TaskId(r.get(0))).collect())
}

async fn pick(tx: &Transaction<'_>, target: ClaimTarget) -> Result<TaskId, BoardError> {
    match target {
        ClaimTarget::OldestReady => tx
            .query_opt(
                "SELECT id FROM tasks t WHERE status = 'pending' AND NOT EXISTS (
                     SELECT 1 FROM dependencies d JOIN tasks b ON b.id = d.blocked_by
                     WHERE d.task_id = t.id AND b.status <> 'completed')
                 ORDER BY created_at, id LIMIT 1
                 FOR UPDATE OF t SKIP LOCKED",
                &[],
            )
            .await?
            .map(|r| TaskId(r.get(0)))
            .ok_or(BoardError::NothingReady),
        ClaimTarget::Task(id) => {
            let row = tx
                .query_opt(
                    "SELECT status, owner FROM tasks WHERE id = $1 FOR UPDATE SKIP LOCKED",
                    &[&id.0],
                )
                .await?;
            let Some(row) = row else {
                return Err(if exists(tx, id).await? {
                    BoardError::Contended(id)
                } else {
                    BoardError::NotFound(id)
                });
            };
            let owner: Option<String> = row.try_get(1)?;
            match (read::status(row.try_get(0)?)?, owner) {
                (Status::Pending, _) => {}
                (Status::InProgress, Some(owner)) => {
                    return Err(BoardError::AlreadyClaimed {
                        task: id,
                        owner: board::stored_owner(&owner)?,
                    });
                }
                (status, _) => return Err(BoardError::NotPending { task: id, status }),
            }
            let open = open_blockers(tx, id).await?;
            if !open.is_empty() {
                return Err(BoardError::Blocked { task: id, by: open });
            }
            Ok(id)
        }
    }
}

pub(crate) async fn claim(
    tx: &Transaction<'_>,
    owner: &AgentId,
    target: ClaimTarget,
    lease: Duration,
) -> Result<Claim, BoardError> {
    expire_due(tx).await?;
    let task = pick(tx, target).await?;
    let token = board::mint_token()?;
    let row = tx
        .query_one(
            concat!(
                "INSERT INTO claims (task_id, token, owner, claimed_at, expires_at)
                 VALUES ($1, $2, $3, now(), now() + $4::bigint * interval '1 millisecond')
                 RETURNING ",
                ms!("claimed_at"),
                ", ",
                ms!("expires_at")
            ),
            &[&task.0, &token.as_str(), &owner.as_str(), &millis(lease)],
        )
        .await?;
    let changed = tx
        .execute(
            "UPDATE tasks SET status = 'in_progress', owner = $2, claim_token = $3,
                              lease_expires = now() + $4::bigint * interval '1 millisecond',
                              updated_at = now()
             WHERE id = $1 AND status = 'pending'",
            &[&task.0, &owner.as_str(), &token.as_str(), &millis(lease)],
        )
        .await?;
    if changed != 1 {
        return Err(BoardError::Contended(task));
    }
    Ok(Claim {
        task,
        owner: owner.clone(),
        token,
        claimed_at: Millis(row.try_get(0)?),
        expires_at: Millis(row.try_get(1)?),
    })
}

/// What a fenced call found: the live claim's sequence number, or "expired, written down
/// now" (the caller commits and fails).
pub(crate) enum Held {
    Live(i64),
    Expired,
}

/// Applies the fencing rule, holding the task's row lock (waiting up to `lock_timeout`).
pub(crate) async fn held(
    tx: &Transaction<'_>,
    owner: &AgentId,
    task: TaskId,
    token: &ClaimToken,
) -> Result<Held, BoardError> {
    let row = tx
        .query_opt(
            "SELECT status, claim_token, coalesce(lease_expires <= now(), false)
             FROM tasks WHERE id = $1 FOR UPDATE",
            &[&task.0],
        )
        .await?
        .map(|r| -> Result<HeldRow, BoardError> {
            Ok(HeldRow {
                status: read::status(r.try_get(0)?)?,
                token: r.try_get(1)?,
                expired: r.try_get(2)?,
            })
        })
        .transpose()?;
    let claim = tx
        .query_opt(
            "SELECT seq, task_id, owner, ended FROM claims WHERE token = $1",
            &[&token.as_str()],
        )
        .await?
        .map(|r| -> Result<TokenRow, BoardError> {
            let ended: Option<String> = r.try_get(3)?;
            Ok(TokenRow {
                seq: r.try_get(0)?,
                task: TaskId(r.try_get(1)?),
                owner: r.try_get(2)?,
                ended: ended
                    .map(|e| e.parse::<ClaimEnd>())
                    .transpose()
                    .map_err(|err| BoardError::BadRow(err.to_string()))?,
            })
        })
        .transpose()?;
    match board::judge(task, owner, token, row, claim)? {
        Verdict::Held(seq) => Ok(Held::Live(seq)),
        Verdict::ExpireNow(seq) => {
            tx.execute(
                "UPDATE claims SET ended = 'expired', ended_at = expires_at WHERE seq = $1",
                &[&seq],
            )
            .await?;
            tx.execute(
                "UPDATE tasks SET status = 'pending', owner = NULL, claim_token = NULL,
                                  lease_expires = NULL, updated_at = now()
                 WHERE id = $1",
                &[&task.0],
            )
            .await?;
            Ok(Held::Expired)
        }
    }
}

pub(crate) async fn claim_of(
    tx: &Transaction<'_>,
    seq: i64,
    task: TaskId,
) -> Result<Claim, BoardError> {
    let row = tx
        .query_one(
            concat!(
                "SELECT owner, token, ",
                ms!("claimed_at"),
                ", ",
                ms!("expires_at"),
                " FROM claims WHERE seq = $1"
            ),
            &[&seq],
        )
        .await?;
    Ok(Claim {
        task,
        owner: board::stored_owner(row.try_get(0)?)?,
        token: ClaimToken(row.try_get(1)?),
        claimed_at: Millis(row.try_get(2)?),
        expires_at: Millis(row.try_get(3)?),
    })
}

pub(crate) async fn renew(
    tx: &Transaction<'_>,
    seq: i64,
    task: TaskId,
    lease: Duration,
) -> Result<Claim, BoardError> {
    tx.execute(
        "UPDATE tasks SET lease_expires = now() + $2::bigint * interval '1 millisecond'
         WHERE id = $1",
        &[&task.0, &millis(lease)],
    )
    .await?;
    tx.execute(
        "UPDATE claims SET expires_at = now() + $2::bigint * interval '1 millisecond'
         WHERE seq = $1",
        &[&seq, &millis(lease)],
    )
    .await?;
    claim_of(tx, seq, task).await
}

pub(crate) async fn finish(
    tx: &Transaction<'_>,
    seq: i64,
    task: TaskId,
    end: ClaimEnd,
    text: &str,
) -> Result<Task, BoardError> {
    let (status, result, reason) = match end {
        ClaimEnd::Completed => ("completed", Some(text), None),
        _ => ("pending", None, Some(text)),
    };
    let params: [&(dyn ToSql + Sync); 3] = [&task.0, &status, &result];
    tx.execute(
        "UPDATE tasks SET status = $2, result = $3, owner = NULL, claim_token = NULL,
                          lease_expires = NULL, updated_at = now()
         WHERE id = $1",
        &params,
    )
    .await?;
    tx.execute(
        "UPDATE claims SET ended = $2, ended_at = now(), reason = $3 WHERE seq = $1",
        &[&seq, &end.as_str(), &reason],
    )
    .await?;
    read::get(tx, task).await
}

pub(crate) async fn import_once(
    tx: &Transaction<'_>,
    tasks: &[ImportedTask],
) -> Result<bool, BoardError> {
    // Serializes importers (and creators) for the check-then-insert below.
    tx.execute("LOCK TABLE tasks IN SHARE ROW EXCLUSIVE MODE", &[])
        .await?;
    if tx
        .query_opt("SELECT 1 FROM meta WHERE key = $1", &[&IMPORTED])
        .await?
        .is_some()
    {
        return Ok(false);
    }
    if count(tx).await? + tasks.len() > MAX_TASKS {
        return Err(BoardError::Full);
    }
    for task in tasks {
        tx.execute(
            "INSERT INTO tasks (id, subject, description, status, created_at, updated_at)
             VALUES ($1, $2, $3, $4, to_timestamp($5::bigint / 1000.0), now())",
            &[
                &task.id.0,
                &task.subject,
                &task.description,
                &task.status.as_str(),
                &task.created_at.0,
            ],
        )
        .await?;
    }
    for task in tasks {
        add_edges(tx, task.id, &task.blocked_by).await?;
    }
    // The identity continues after the imported ids.
    tx.execute(
        "SELECT setval(pg_get_serial_sequence('tasks', 'id'),
                       coalesce((SELECT max(id) FROM tasks), 0) + 1, false)",
        &[],
    )
    .await?;
    tx.execute(
        "INSERT INTO meta (key, value) VALUES ($1, $2)",
        &[&IMPORTED, &tasks.len().to_string()],
    )
    .await?;
    Ok(true)
}
