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
        let (store, registry) = Self::open(&dir);
        Self {
            dir,
            store,
            registry,
        }
    }

    /// A new store over the same folder: what the next process sees (nothing cached).
    pub fn restart(&mut self) {
        (self.store, self.registry) = Self::open(&self.dir);
    }

    fn open(dir: &TempDir) -> (Arc<TaskStore>, ToolRegistry) {
        let ws = Workspace::new(dir.path()).unwrap();
        let store = Arc::new(TaskStore::open(&ws).with_clock(Arc::new(
            agent_workspace::ManualClock::new(
                std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000),
            ),
        )));
        let registry = agent_tasks::register(ToolRegistry::builder(), &store)
            .build()
            .unwrap();
        (store, registry)
    }

    /// Runs one call the way the loop does and returns the text the model would see.
    pub async fn call(&self, name: &str, arguments: serde_json::Value) -> String {
        agent_test_support::call_tool(&self.registry, name, arguments).await
    }

    pub fn path(&self, relative: &str) -> std::path::PathBuf {
        self.dir.path().join(relative)
    }
}
