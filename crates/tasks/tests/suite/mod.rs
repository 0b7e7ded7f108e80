mod attacks;
mod crash;
mod graph;
mod ids;
mod prompt;
mod race;

use std::sync::Arc;

use agent_core::ToolRegistry;
use agent_tasks::TaskStore;
use agent_workspace::Workspace;
use tempfile::TempDir;

/// A fresh workspace, a store with a fixed clock, and the four tools over it.
pub struct Fixture {
    pub dir: TempDir,
    pub store: Arc<TaskStore>,
    pub registry: ToolRegistry,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        Self::in_dir(dir)
    }

    pub fn in_dir(dir: TempDir) -> Self {
        let ws = Workspace::new(dir.path()).unwrap();
        let store = Arc::new(TaskStore::open(&ws).with_clock(Arc::new(|| 1_700_000_000)));
        let registry = agent_tasks::register(ToolRegistry::builder(), &store)
            .build()
            .unwrap();
        Self {
            dir,
            store,
            registry,
        }
    }

    /// Runs one call the way the loop does and returns the text the model would see.
    pub async fn call(&self, name: &str, arguments: serde_json::Value) -> String {
        agent_test_support::call_tool(&self.registry, name, arguments).await
    }

    pub fn path(&self, relative: &str) -> std::path::PathBuf {
        self.dir.path().join(relative)
    }
}
