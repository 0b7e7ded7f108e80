mod attacks;
mod background;
mod describe;
mod files;

use agent_core::ToolRegistry;
use agent_tools::{BashConfig, Workspace, add_bash, add_file_tools};
use tempfile::TempDir;

/// A workspace with a few files, a registry of every built-in tool, and a folder outside.
pub struct Fixture {
    pub dir: TempDir,
    pub outside: TempDir,
    pub registry: ToolRegistry,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
        std::fs::create_dir_all(dir.path().join("src/nested")).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "one\ntwo\nthree\n").unwrap();
        std::fs::write(dir.path().join("src/b.rs"), "fn b() {}\n").unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "fn a() {}\nfn a() {}\n").unwrap();
        std::fs::write(dir.path().join("src/nested/c.rs"), "").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link_out")).unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let builder = add_bash(ToolRegistry::builder(), &ws, BashConfig::default());
        let registry = add_file_tools(builder, &ws).build().unwrap();
        Self {
            dir,
            outside,
            registry,
        }
    }

    /// Runs one call the way the loop does and returns the text the model would see.
    pub async fn call(&self, name: &str, arguments: serde_json::Value) -> String {
        agent_test_support::call_tool(&self.registry, name, arguments).await
    }

    pub fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(path)).unwrap()
    }
}
