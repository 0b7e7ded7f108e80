mod attacks;
mod create;
mod reconcile;
mod remove;
mod route;
mod tools;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use agent_board::TaskId;
use agent_sandbox::{Mode, Network, Sandbox};
use agent_workspace::{ManualClock, Workspace};
use agent_worktree::{Git, WorktreeName, Worktrees};

/// 2026-12-01T00:00:00Z: every transition of a test is stamped with it.
pub const WALL_MS: u64 = 1_795_996_800_000;

/// A repository with one commit on `main` (`README.md`, and a `.gitignore` naming `.env`),
/// and the worktrees over it.
pub struct Repo {
    pub dir: tempfile::TempDir,
    pub trees: Worktrees,
}

impl Repo {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        git_in(dir.path(), &["init", "-q", "-b", "main"]);
        std::fs::write(dir.path().join("README.md"), "hello\n").unwrap();
        std::fs::write(dir.path().join(".gitignore"), ".env\n").unwrap();
        git_in(dir.path(), &["add", "."]);
        git_in(dir.path(), &["commit", "-q", "-m", "first"]);
        let trees = worktrees(dir.path());
        Self { dir, trees }
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    /// Runs git in the repository (the test's own commands, not the crate's).
    pub fn git(&self, args: &[&str]) -> String {
        git_in(self.dir.path(), args)
    }

    /// The worktree folder of `name`.
    pub fn tree(&self, name: &str) -> PathBuf {
        self.root().join(".agent_tutorial/worktrees").join(name)
    }

    /// The branches, one a line.
    pub fn branches(&self) -> String {
        self.git(&["branch", "--format=%(refname:short)"])
    }
}

/// The crate's worktrees over `root`, with no sandbox helper (the test binary has none) and a
/// clock stopped at [`WALL_MS`].
pub fn worktrees(root: &Path) -> Worktrees {
    let ws = Workspace::new(root).unwrap();
    let git = Git::with_sandbox(&ws, Sandbox::new(Mode::Off, Network::Off));
    let clock = ManualClock::new(UNIX_EPOCH + Duration::from_millis(WALL_MS));
    Worktrees::new(git, Arc::new(clock))
}

pub fn name(text: &str) -> WorktreeName {
    WorktreeName::new(text).unwrap()
}

pub fn task(id: i64) -> TaskId {
    TaskId(id)
}

/// The tests' own git, as every crate's tests run it.
pub use agent_test_support::git as git_in;
