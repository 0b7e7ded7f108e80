mod attacks;
mod fragments;
mod keeps;
mod session;
mod store;

use agent_memory::{MemoryRecord, MemoryStore, MemoryType};
use agent_workspace::Workspace;

/// A project record whose description and body name it.
pub fn rec(name: &str) -> MemoryRecord {
    MemoryRecord::new(
        name,
        MemoryType::Project,
        &format!("About {name}"),
        &format!("Body of {name}."),
    )
}

/// A store in a fresh workspace.
pub fn setup() -> (tempfile::TempDir, MemoryStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = MemoryStore::open(&Workspace::new(dir.path()).unwrap());
    (dir, store)
}
