//! Claims per second at 1, 4 and 16 claimers, on SQLite and on PostgreSQL.
//!
//! One iteration: every claimer (its own handle, so its own connection, as separate
//! teammates would have) claims the oldest ready task `PER_CLAIMER` times, all at once on a
//! two-worker runtime; the tasks are created before the timer starts. divan's throughput
//! column is claims per second. PostgreSQL runs when `AGENT_BOARD_PG_URL` is set (see
//! `just postgres`); without it that half is a no-op that says so.
//!
//!     cargo bench -p agent-board --bench claims
//!
//! Medians, claims per second (`-- --sample-count 20`, a throwaway PostgreSQL 15 server from
//! `just postgres` on the same 2-core machine, load about 4 from a build beside it):
//!
//! | claimers | SQLite | PostgreSQL |
//! |---:|---:|---:|
//! | 1 | 6,759 | 621 |
//! | 4 | 3,204 | 1,260 |
//! | 16 | 937 | 1,482 |
//!
//! SQLite serializes writers on one file (`BEGIN IMMEDIATE`), so more claimers only wait
//! longer; PostgreSQL's `FOR UPDATE SKIP LOCKED` lets claimers take different rows at once,
//! paying a network round trip per statement.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use agent_board::{BoardConfig, ClaimTarget, NewTask, PG_URL_VAR, PgBoard, SqliteBoard, TaskBoard};
use agent_protocol::AgentId;
use agent_workspace::Workspace;
use divan::Bencher;
use divan::counter::ItemsCount;

const PER_CLAIMER: usize = 8;

fn main() {
    divan::main();
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Creates `n` ready tasks, then times `boards.len()` claimers taking them all.
fn run(bencher: Bencher, rt: &tokio::runtime::Runtime, boards: Vec<Arc<dyn TaskBoard>>) {
    let claimers = boards.len();
    let total = claimers * PER_CLAIMER;
    let first = boards[0].clone();
    bencher
        .counter(ItemsCount::new(total))
        .with_inputs(|| {
            rt.block_on(async {
                for n in 0..total {
                    first
                        .create(NewTask {
                            subject: format!("bench {n}"),
                            ..NewTask::default()
                        })
                        .await
                        .unwrap();
                }
            });
        })
        .bench_local_values(|()| {
            rt.block_on(async {
                let mut handles = Vec::with_capacity(claimers);
                for (i, board) in boards.iter().enumerate() {
                    let board = board.clone();
                    handles.push(tokio::spawn(async move {
                        let me = AgentId::new(&format!("mate-{i}")).unwrap();
                        for _ in 0..PER_CLAIMER {
                            board.claim(&me, ClaimTarget::OldestReady).await.unwrap();
                        }
                    }));
                }
                for handle in handles {
                    handle.await.unwrap();
                }
            });
        });
}

#[divan::bench(args = [1, 4, 16], sample_count = 10, sample_size = 1)]
fn sqlite(bencher: Bencher, claimers: usize) {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let boards: Vec<Arc<dyn TaskBoard>> = (0..claimers)
        .map(|_| {
            let workspace = Workspace::new(dir.path()).unwrap();
            Arc::new(SqliteBoard::open(&workspace, BoardConfig::default()).unwrap())
                as Arc<dyn TaskBoard>
        })
        .collect();
    run(bencher, &rt, boards);
}

#[divan::bench(args = [1, 4, 16], sample_count = 10, sample_size = 1)]
fn postgres(bencher: Bencher, claimers: usize) {
    let Ok(url) = std::env::var(PG_URL_VAR) else {
        eprintln!("postgres: skipped ({PG_URL_VAR} is not set; see `just postgres`)");
        bencher.bench_local(|| ());
        return;
    };
    let rt = runtime();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let schema = format!("bench_{claimers}_{}", nanos % 1_000_000_000_000);
    let boards: Vec<Arc<dyn TaskBoard>> = rt.block_on(async {
        let mut boards: Vec<Arc<dyn TaskBoard>> = Vec::new();
        for _ in 0..claimers {
            boards.push(Arc::new(
                PgBoard::connect(&url, &schema, BoardConfig::default())
                    .await
                    .unwrap(),
            ));
        }
        boards
    });
    run(bencher, &rt, boards);
}
