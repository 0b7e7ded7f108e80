//! What the conformance suite needs of a backend: handles on one board, a way to move its
//! clock, and how a child process opens the same board.

use std::time::Duration;

use agent_board::TaskBoard;
use agent_protocol::AgentId;
use async_trait::async_trait;

/// One board under test.
#[async_trait]
pub trait Harness: Send + Sync {
    type Board: TaskBoard + 'static;

    /// A new handle on the harness's board, as another teammate or process would open it
    /// (its own connection).
    async fn open(&self) -> Self::Board;

    /// Moves the board's clock forward by `by`. Exact on SQLite (a manual clock); on
    /// PostgreSQL every stored time is moved back instead, since the server's clock cannot be
    /// moved.
    async fn advance(&self, by: Duration);

    /// How far before an instant the suite may look and still be before it: 1 ms on the
    /// manual clock, a few seconds on the server's real one (a test never stalls that long
    /// between two calls).
    fn tick(&self) -> Duration;

    /// The environment a child process of this test binary needs to open the same board
    /// (`AGENT_BOARD_CHILD_*`), with the clock's current time for a manual clock.
    fn child_env(&self) -> Vec<(String, String)>;
}

/// Names used throughout the suite.
pub fn agent(name: &str) -> AgentId {
    AgentId::new(name).unwrap()
}
