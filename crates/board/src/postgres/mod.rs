//! The board on a PostgreSQL server, for a team on several machines: the same trait and the
//! same conformance suite as SQLite, with the differences the crate documentation lists
//! (the server's clock; READ COMMITTED with row locks instead of one database-wide writer).
//!
//! Every board lives in one PostgreSQL schema (`public` unless told otherwise), so several
//! boards — or several test runs — share a server without seeing each other.

mod ops;
mod pool;
mod read;
mod schema;

use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;

use agent_protocol::AgentId;
use async_trait::async_trait;
use tokio_postgres::Transaction;
use tokio_postgres::error::SqlState;

use crate::board::{self, TaskBoard};
use crate::error::BoardError;
use crate::model::{
    BoardConfig, Claim, ClaimEnd, ClaimRecord, ClaimTarget, ClaimToken, ImportedTask, NewTask,
    Task, TaskId,
};
use pool::Pool;

/// The environment variable naming the server: `AGENT_BOARD_PG_URL=postgres://…`.
pub const PG_URL_VAR: &str = "AGENT_BOARD_PG_URL";
/// Connections one board handle opens at most.
pub const MAX_CONNECTIONS: usize = 16;

/// The board on a PostgreSQL server. Cheap to clone (clones share the connections).
#[derive(Debug, Clone)]
pub struct PgBoard {
    pool: std::sync::Arc<Pool>,
    config: BoardConfig,
    schema: String,
}

/// A schema name we can put in SQL without quoting surprises.
fn check_schema(name: &str) -> Result<(), BoardError> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !name.as_bytes()[0].is_ascii_digit();
    if ok {
        Ok(())
    } else {
        Err(BoardError::SchemaName(name.escape_debug().to_string()))
    }
}

type TxFuture<'t, T> = Pin<Box<dyn Future<Output = Result<T, BoardError>> + Send + 't>>;

impl PgBoard {
    /// Connects to `url` (a `postgres://` URL) and creates the board's tables in `schema`
    /// if they are missing.
    pub async fn connect(url: &str, schema: &str, config: BoardConfig) -> Result<Self, BoardError> {
        check_schema(schema)?;
        let pg_config = tokio_postgres::Config::from_str(url)?;
        let lock_ms = config.busy_timeout.as_millis().max(1);
        let setup = format!("SET search_path TO \"{schema}\"; SET lock_timeout = '{lock_ms}ms';");
        let board = Self {
            pool: std::sync::Arc::new(Pool::new(pg_config, setup, MAX_CONNECTIONS)),
            config,
            schema: schema.to_string(),
        };
        let create = format!("CREATE SCHEMA IF NOT EXISTS \"{schema}\"");
        board
            .transaction(move |tx| {
                Box::pin(async move {
                    // Several teammates may connect at once: one creates, the rest wait.
                    tx.execute("SELECT pg_advisory_xact_lock(hashtext($1))", &[&create])
                        .await?;
                    tx.batch_execute(&create).await?;
                    tx.batch_execute(schema::CREATE).await?;
                    let version: Option<String> = tx
                        .query_opt("SELECT value FROM meta WHERE key = 'schema_version'", &[])
                        .await?
                        .map(|r| r.get(0));
                    match version {
                        None => {
                            tx.execute(
                                "INSERT INTO meta (key, value) VALUES ('schema_version', $1)",
                                &[&schema::SCHEMA_VERSION.to_string()],
                            )
                            .await?;
                            Ok(())
                        }
                        Some(v) if v == schema::SCHEMA_VERSION.to_string() => Ok(()),
                        Some(v) => Err(BoardError::BadRow(format!(
                            "the board's schema is version {v}; this build reads {}",
                            schema::SCHEMA_VERSION
                        ))),
                    }
                })
            })
            .await?;
        Ok(board)
    }

    /// The schema this board lives in.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// Runs `f` in one transaction, committed when `f` returns `Ok` or a
    /// `LeaseExpired` (the expiry it wrote down must stay), rolled back otherwise.
    async fn transaction<T: Send>(
        &self,
        f: impl for<'t> FnOnce(&'t Transaction<'_>) -> TxFuture<'t, T> + Send,
    ) -> Result<T, BoardError> {
        let mut lent = self.pool.get().await?;
        let tx = lent.client()?.transaction().await?;
        let result = f(&tx).await;
        let result = match result {
            Ok(value) => tx.commit().await.map(|()| value).map_err(BoardError::from),
            Err(BoardError::LeaseExpired(task)) => tx
                .commit()
                .await
                .map_err(BoardError::from)
                .and(Err(BoardError::LeaseExpired(task))),
            Err(err) => {
                // Dropping would roll back too; an explicit rollback returns the connection
                // clean right away.
                let _ = tx.rollback().await;
                Err(err)
            }
        };
        result.map_err(|err| self.busy(err))
    }

    /// A lock wait past `lock_timeout` is "busy", as on SQLite.
    fn busy(&self, err: BoardError) -> BoardError {
        match err {
            BoardError::Postgres(e) if e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE) => {
                BoardError::Busy {
                    waited: self.config.busy_timeout,
                }
            }
            other => other,
        }
    }

    async fn fenced<T: Send + 'static>(
        &self,
        owner: &AgentId,
        task: TaskId,
        token: &ClaimToken,
        then: impl for<'t> FnOnce(&'t Transaction<'_>, i64) -> TxFuture<'t, T> + Send + 'static,
    ) -> Result<T, BoardError> {
        board::check_token(task, token)?;
        let (owner, token) = (owner.clone(), token.clone());
        self.transaction(move |tx| {
            Box::pin(async move {
                match ops::held(tx, &owner, task, &token).await? {
                    ops::Held::Live(seq) => then(tx, seq).await,
                    ops::Held::Expired => Err(BoardError::LeaseExpired(task)),
                }
            })
        })
        .await
    }
}

#[async_trait]
impl TaskBoard for PgBoard {
    async fn create(&self, new: NewTask) -> Result<Task, BoardError> {
        let new = board::check_new(new)?;
        self.transaction(move |tx| {
            Box::pin(async move {
                let id = ops::create(tx, &new).await?;
                read::get(tx, id).await
            })
        })
        .await
    }

    async fn get(&self, id: TaskId) -> Result<Task, BoardError> {
        self.transaction(move |tx| Box::pin(read::get(tx, id)))
            .await
    }

    async fn list(&self) -> Result<Vec<Task>, BoardError> {
        self.transaction(move |tx| Box::pin(read::list(tx))).await
    }

    async fn claim(&self, owner: &AgentId, target: ClaimTarget) -> Result<Claim, BoardError> {
        let owner = owner.clone();
        let lease = self.config.lease;
        self.transaction(move |tx| {
            Box::pin(async move { ops::claim(tx, &owner, target, lease).await })
        })
        .await
    }

    async fn renew(
        &self,
        owner: &AgentId,
        task: TaskId,
        token: &ClaimToken,
    ) -> Result<Claim, BoardError> {
        let lease = self.config.lease;
        self.fenced(owner, task, token, move |tx, seq| {
            Box::pin(ops::renew(tx, seq, task, lease))
        })
        .await
    }

    async fn check_held(
        &self,
        owner: &AgentId,
        task: TaskId,
        token: &ClaimToken,
    ) -> Result<Claim, BoardError> {
        self.fenced(owner, task, token, move |tx, seq| {
            Box::pin(ops::claim_of(tx, seq, task))
        })
        .await
    }

    async fn complete(
        &self,
        owner: &AgentId,
        task: TaskId,
        token: &ClaimToken,
        result: &str,
    ) -> Result<Task, BoardError> {
        let result = board::check_result(result)?;
        self.fenced(owner, task, token, move |tx, seq| {
            Box::pin(async move { ops::finish(tx, seq, task, ClaimEnd::Completed, &result).await })
        })
        .await
    }

    async fn release(
        &self,
        owner: &AgentId,
        task: TaskId,
        token: &ClaimToken,
        reason: &str,
    ) -> Result<Task, BoardError> {
        let reason = board::check_reason(reason)?;
        self.fenced(owner, task, token, move |tx, seq| {
            Box::pin(async move { ops::finish(tx, seq, task, ClaimEnd::Released, &reason).await })
        })
        .await
    }

    async fn history(&self, task: TaskId) -> Result<Vec<ClaimRecord>, BoardError> {
        self.transaction(move |tx| Box::pin(read::history(tx, task)))
            .await
    }

    async fn import_once(&self, tasks: Vec<ImportedTask>) -> Result<bool, BoardError> {
        self.transaction(move |tx| Box::pin(async move { ops::import_once(tx, &tasks).await }))
            .await
    }
}
