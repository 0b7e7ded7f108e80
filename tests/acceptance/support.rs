//! Helpers shared by the acceptance tests.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_core::{AgentEvent, CollectingSink, ModelReply, ModelRequest, ToolCall};
use agent_test_support::{Recording, ScriptedModel};
use agent_tools::Workspace;
use agent_tutorial::Profile;
use agent_tutorial::{Agent, AgentDeps, build_agent, render};
use tempfile::TempDir;

/// A command for one of this package's binaries with every `OPENAI_*` variable removed, so a
/// developer's real key can never reach a test, and run from an empty directory (no `.env`).
pub fn command(bin: &str, cwd: &Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin(bin).unwrap();
    for (key, _) in std::env::vars() {
        if key.starts_with("OPENAI_") {
            cmd.env_remove(key);
        }
    }
    // The trust store (chapter 4 on) lives in the user's config directory, and a run records
    // there what it writes itself: every test gets a temporary one unless it sets its own.
    cmd.env("XDG_CONFIG_HOME", test_config_dir())
        .env_remove("RUST_LOG")
        // Chapter 17's board is the workspace's SQLite file unless a test says otherwise.
        .env_remove("AGENT_TUTORIAL_BOARD")
        .current_dir(cwd);
    cmd
}

/// One temporary config directory for this test process (each test's workspace is its own
/// temporary folder, so their entries never meet). A `static` is never dropped, so a
/// `TempDir` kept in one would outlive every run: the folder is removed when the process
/// exits instead (libtest's `main` returns, and `exit` runs what `atexit` registered).
fn test_config_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    extern "C" fn remove_config_dir() {
        if let Some(dir) = DIR.get() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        // SAFETY: `remove_config_dir` is an `extern "C" fn()` that touches only the
        // `OnceLock` above, which is set before the handler can run.
        assert_eq!(unsafe { libc::atexit(remove_config_dir) }, 0);
        dir
    })
}

/// A fresh workspace with a small project in it.
pub fn workspace() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/main.rs"),
        "fn main() {\n    println!(\"hi\");\n}\n",
    )
    .unwrap();
    dir
}

/// A call as the model sends it (the shared builder, under the name these tests use).
pub use agent_test_support::tool_call as call;

pub fn tool_round(calls: Vec<ToolCall>) -> ModelReply {
    ModelReply::tool_calls(calls)
}

/// Builds chapter `chapter`'s agent on a scripted model.
pub fn scripted_agent(
    chapter: u8,
    dir: &Path,
    replies: Vec<ModelReply>,
) -> (Agent, Arc<ScriptedModel>) {
    scripted_agent_with(chapter, dir, replies, |_| {})
}

/// Like [`scripted_agent`], letting the test adjust the dependencies first.
pub fn scripted_agent_with(
    chapter: u8,
    dir: &Path,
    replies: Vec<ModelReply>,
    adjust: impl FnOnce(&mut AgentDeps),
) -> (Agent, Arc<ScriptedModel>) {
    let model = Arc::new(ScriptedModel::replies(replies).recording(Recording::Requests));
    let workspace = Workspace::new(dir).unwrap();
    let mut deps = AgentDeps::new(model.clone(), workspace);
    adjust(&mut deps);
    let agent = build_agent(Profile::for_chapter(chapter).unwrap(), deps).unwrap();
    (agent, model)
}

/// Like [`scripted_agent`], with every event of the run collected.
pub fn scripted_agent_with_events(
    chapter: u8,
    dir: &Path,
    replies: Vec<ModelReply>,
) -> (Agent, Arc<ScriptedModel>, Arc<CollectingSink>) {
    let sink = Arc::new(CollectingSink::new());
    let (agent, model) = scripted_agent_with(chapter, dir, replies, |deps| {
        deps.events = sink.clone();
    });
    (agent, model, sink)
}

/// The memory events among `events`, in order.
pub fn memory_events(events: &[AgentEvent]) -> Vec<AgentEvent> {
    events
        .iter()
        .filter(|e| {
            matches!(
                e,
                AgentEvent::MemorySelected { .. }
                    | AgentEvent::MemoryExtracted { .. }
                    | AgentEvent::MemoryFailed { .. }
            )
        })
        .cloned()
        .collect()
}

/// The `tool` results of a history (stored or requested), as `id: text`.
pub fn tool_results<M: AsRef<agent_core::Message>>(history: &[M]) -> Vec<String> {
    history
        .iter()
        .filter_map(|m| match m.as_ref() {
            agent_core::Message::Tool {
                tool_call_id,
                content,
            } => Some(format!("{tool_call_id}: {content}")),
            _ => None,
        })
        .collect()
}

/// Every recorded request must satisfy the pairing invariant.
pub fn assert_all_paired(requests: &[ModelRequest]) {
    assert_eq!(agent_test_support::paired(requests), Ok(()));
}

/// All requests as labelled lines, with the workspace path replaced so snapshots are stable.
pub fn transcript(requests: &[ModelRequest], dir: &Path) -> String {
    let root = dir.canonicalize().unwrap().display().to_string();
    requests
        .iter()
        .enumerate()
        .map(|(i, request)| {
            let tools: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
            format!(
                "== request {i} (tools: {})\n{}\n",
                tools.join(", "),
                render::labels(request).join("\n")
            )
        })
        .collect::<String>()
        .replace(&root, "<workspace>")
}

/// Writes a `--script` file into `dir`.
pub fn write_script(dir: &std::path::Path, steps: serde_json::Value) -> std::path::PathBuf {
    let path = dir.join("script.json");
    std::fs::write(&path, steps.to_string()).unwrap();
    path
}

/// The standard output of a finished command, as text.
pub fn stdout_of(assert: assert_cmd::assert::Assert) -> String {
    String::from_utf8(assert.get_output().stdout.clone()).unwrap()
}

/// The standard error of a finished command, as text.
pub fn stderr_of(assert: assert_cmd::assert::Assert) -> String {
    String::from_utf8(assert.get_output().stderr.clone()).unwrap()
}

/// The lines of `dir`'s audit log as JSON, each line's `time` checked (a UTC time to the
/// second, not after now) and taken out so the rest can be compared whole.
pub fn audit_lines(dir: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join(".agent_tutorial/audit.jsonl")).unwrap();
    text.lines().map(untimed).collect()
}

/// One audit line as JSON without its `time`, which must be a UTC time to the second, not
/// after now.
pub fn untimed(line: &str) -> serde_json::Value {
    let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
    let time = value
        .as_object_mut()
        .and_then(|fields| fields.remove("time"))
        .and_then(|time| time.as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no time in {line}"));
    let at: jiff::Timestamp = time.parse().unwrap();
    assert_eq!(
        (time.len(), at <= jiff::Timestamp::now()),
        ("2026-12-01T22:40:05Z".len(), true),
        "{time}"
    );
    value
}
