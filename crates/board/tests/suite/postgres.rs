//! The conformance suite on a real PostgreSQL server (`just postgres` starts one and prints
//! `AGENT_BOARD_PG_URL=…`). Without that variable the cases are skipped with a note — except
//! under CI, where they fail: CI must never pass without having run them.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agent_board::{BoardConfig, PG_URL_VAR, PgBoard, TaskBoard};
use async_trait::async_trait;
use tokio_postgres::{Client, NoTls};

use super::harness::Harness;

/// The server's URL; `None` (skip) only outside CI.
pub fn url() -> Option<String> {
    match std::env::var(PG_URL_VAR) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some() => panic!(
            "CI is set but {PG_URL_VAR} is not: the PostgreSQL half of the board's suite must run in CI \
             (start a server with `just postgres` and export the line it prints)"
        ),
        _ => {
            eprintln!("skipped: {PG_URL_VAR} is not set (run `just postgres` to start a server)");
            None
        }
    }
}

static SCHEMAS: AtomicU32 = AtomicU32::new(0);

/// A schema no other test (of this run or an earlier one on the same server) has used.
pub fn fresh_schema() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "t_{}_{}_{}",
        std::process::id(),
        nanos % 1_000_000_000_000,
        SCHEMAS.fetch_add(1, Ordering::Relaxed)
    )
}

/// A plain connection into `schema`, for moving stored times.
pub async fn raw(url: &str, schema: &str) -> Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await.unwrap();
    tokio::spawn(connection);
    client
        .batch_execute(&format!("SET search_path TO \"{schema}\""))
        .await
        .unwrap();
    client
}

/// One schema on the server.
pub struct PgHarness {
    pub url: String,
    pub schema: String,
    pub config: BoardConfig,
}

impl PgHarness {
    pub fn new() -> Option<Self> {
        Self::with_config(BoardConfig::default())
    }

    pub fn with_config(config: BoardConfig) -> Option<Self> {
        Some(Self {
            url: url()?,
            schema: fresh_schema(),
            config,
        })
    }
}

#[async_trait]
impl Harness for PgHarness {
    type Board = PgBoard;

    async fn open(&self) -> PgBoard {
        PgBoard::connect(&self.url, &self.schema, self.config)
            .await
            .unwrap()
    }

    /// The server's clock cannot move, so every stored time moves back by `by` instead:
    /// to the board that is the same as the clock moving forward.
    async fn advance(&self, by: Duration) {
        let client = raw(&self.url, &self.schema).await;
        let ms = i64::try_from(by.as_millis()).unwrap();
        client
            .execute(
                "UPDATE tasks SET lease_expires = lease_expires - $1::bigint * interval '1 millisecond',
                                  created_at = created_at - $1::bigint * interval '1 millisecond',
                                  updated_at = updated_at - $1::bigint * interval '1 millisecond'",
                &[&ms],
            )
            .await
            .unwrap();
        client
            .execute(
                "UPDATE claims SET claimed_at = claimed_at - $1::bigint * interval '1 millisecond',
                                   expires_at = expires_at - $1::bigint * interval '1 millisecond',
                                   ended_at = ended_at - $1::bigint * interval '1 millisecond'",
                &[&ms],
            )
            .await
            .unwrap();
    }

    fn tick(&self) -> Duration {
        Duration::from_secs(5)
    }

    fn child_env(&self) -> Vec<(String, String)> {
        vec![
            ("AGENT_BOARD_CHILD_PG".into(), self.url.clone()),
            ("AGENT_BOARD_CHILD_SCHEMA".into(), self.schema.clone()),
        ]
    }
}

macro_rules! on_postgres {
    ($($module:ident :: $case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                let Some(harness) = PgHarness::new() else { return };
                super::$module::$case(&harness).await;
            }
        )*
    };
}

on_postgres!(
    conformance::dependencies_and_creation_order,
    conformance::self_dependency_and_cycle_store_nothing,
    conformance::expiry_is_half_open,
    conformance::renewal_keeps_a_long_claim,
    conformance::tokens_are_never_reused,
    conformance::fencing_checks_owner_task_and_token,
    conformance::concurrent_claimers_in_one_process,
    processes::two_processes_race_100_times,
    processes::a_killed_holder_loses_its_claim,
);

/// A row another transaction holds past `lock_timeout`: a typed `Busy`, nothing changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_locked_past_the_lock_timeout_makes_calls_busy() {
    let Some(harness) = PgHarness::with_config(BoardConfig {
        busy_timeout: Duration::from_millis(200),
        ..BoardConfig::default()
    }) else {
        return;
    };
    let board = harness.open().await;
    let alice = super::harness::agent("alice");
    let id = super::conformance::create(&board, "locked", &[]).await;
    let claim = board
        .claim(&alice, agent_board::ClaimTarget::Task(id))
        .await
        .unwrap();
    let mut locker = raw(&harness.url, &harness.schema).await;
    let tx = locker.transaction().await.unwrap();
    tx.execute("SELECT 1 FROM tasks WHERE id = $1 FOR UPDATE", &[&id.0])
        .await
        .unwrap();
    let busy = board
        .complete(&alice, id, &claim.token, "done")
        .await
        .unwrap_err();
    assert_eq!(
        busy.to_string(),
        "the board is busy: another writer held it for over 200ms; nothing was changed, try again"
    );
    tx.rollback().await.unwrap();
    let done = board
        .complete(&alice, id, &claim.token, "done")
        .await
        .unwrap();
    assert_eq!(done.result.as_deref(), Some("done"));
}
