//! The conformance suite on SQLite, with a manual clock shared by every handle.

use std::sync::Arc;
use std::time::Duration;

use agent_board::{BoardConfig, FirstOpen, ManualClock, Millis, SqliteBoard};
use agent_workspace::Workspace;
use async_trait::async_trait;

use super::harness::Harness;

/// Where the manual clock starts: a fixed instant, so runs are repeatable.
pub const START: Millis = Millis(1_700_000_000_000);

/// One workspace with one board file, and the clock every handle reads.
pub struct SqliteHarness {
    pub dir: tempfile::TempDir,
    pub clock: Arc<ManualClock>,
    pub config: BoardConfig,
}

impl SqliteHarness {
    pub fn new() -> Self {
        Self::with_config(BoardConfig::default())
    }

    pub fn with_config(config: BoardConfig) -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            clock: Arc::new(ManualClock::new(START)),
            config,
        }
    }

    pub fn workspace(&self) -> Workspace {
        Workspace::new(self.dir.path()).unwrap()
    }

    /// A handle opened on the blocking pool, as the async runtime requires, the way the
    /// harness opens it (chapter 12's tasks imported on the first open).
    pub async fn open_board(&self) -> Result<SqliteBoard, agent_board::BoardError> {
        self.open_with(FirstOpen::ImportChapter12).await
    }

    pub async fn open_with(
        &self,
        first_open: FirstOpen,
    ) -> Result<SqliteBoard, agent_board::BoardError> {
        let workspace = self.workspace();
        let (config, clock) = (self.config, self.clock.clone());
        tokio::task::spawn_blocking(move || {
            SqliteBoard::open_with_clock(&workspace, config, clock, first_open)
        })
        .await
        .unwrap()
    }
}

#[async_trait]
impl Harness for SqliteHarness {
    type Board = SqliteBoard;

    /// The board alone: the conformance suite imports explicitly.
    async fn open(&self) -> SqliteBoard {
        self.open_with(FirstOpen::LeaveTasks).await.unwrap()
    }

    async fn advance(&self, by: Duration) {
        self.clock.advance(by);
    }

    fn tick(&self) -> Duration {
        Duration::from_millis(1)
    }

    fn child_env(&self) -> Vec<(String, String)> {
        vec![
            (
                "AGENT_BOARD_CHILD_SQLITE".into(),
                self.dir.path().display().to_string(),
            ),
            (
                "AGENT_BOARD_CHILD_CLOCK".into(),
                agent_board::clock::now(&*self.clock).0.to_string(),
            ),
        ]
    }
}

macro_rules! on_sqlite {
    ($($module:ident :: $case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                super::$module::$case(&SqliteHarness::new()).await;
            }
        )*
    };
}

on_sqlite!(
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_holding_the_lock_makes_calls_busy() {
    let harness = SqliteHarness::with_config(BoardConfig {
        busy_timeout: Duration::from_millis(200),
        ..BoardConfig::default()
    });
    super::processes::a_writer_holding_the_lock_makes_calls_busy(&harness).await;
}
