//! Each tool describes its own call (the summary a person approves, the paths policy checks),
//! so chapter 3 never guesses argument names.

use std::sync::Arc;

use agent_core::{CallSummary, RegistryError, ToolCall, ToolRegistry};
use agent_tools::files::{EditFile, ReadFile, WriteFile};
use agent_tools::glob::Glob;
use agent_tools::subagent::{self, TaskTool};
use agent_tools::todo::{self, TodoList, TodoWrite};
use agent_tools::{BashConfig, BashTool, Workspace, add_bash, add_file_tools};
use serde_json::{Value, json};

fn unbuildable_task() -> TaskTool {
    TaskTool::new(|| Err(RegistryError::MissingHandler("child_tool".into()).into()))
}

fn registry(ws: &Workspace) -> ToolRegistry {
    let tools = add_file_tools(
        add_bash(ToolRegistry::builder(), ws, BashConfig::default()),
        ws,
    );
    tools
        .tool(
            todo::spec(),
            Arc::new(TodoWrite(Arc::new(TodoList::default()))),
        )
        .tool(subagent::spec(), Arc::new(unbuildable_task()))
        .build()
        .unwrap()
}

fn call(name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: name.into(),
        arguments: arguments.to_string(),
    }
}

#[test]
fn every_built_in_tool_describes_its_own_call() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(&Workspace::new(dir.path()).unwrap());
    let todos = json!({"todos": [{"content": "read", "status": "pending"}]});
    let calls = [
        (BashTool::NAME, json!({"command": "ls -la"})),
        (ReadFile::NAME, json!({"path": "notes.txt", "limit": 3})),
        (WriteFile::NAME, json!({"path": "out.txt", "content": "x"})),
        (
            EditFile::NAME,
            json!({"path": "src/a.rs", "old_text": "a", "new_text": "b"}),
        ),
        (Glob::NAME, json!({"pattern": "src/**/*.rs"})),
        (TodoWrite::NAME, todos.clone()),
        (TaskTool::NAME, json!({"description": "count the lines"})),
    ];
    let described: Vec<(String, CallSummary)> = calls
        .iter()
        .map(|(name, arguments)| {
            let prepared = registry.prepare(&call(name, arguments.clone())).unwrap();
            (prepared.name, prepared.summary)
        })
        .collect();
    let text = CallSummary::text;
    let path = CallSummary::path;
    assert_eq!(
        described,
        vec![
            ("bash".to_string(), text("ls -la")),
            ("read_file".to_string(), path("notes.txt")),
            (
                "write_file".to_string(),
                path("out.txt")
                    .with_detail("new file, 1 line, 1 byte:\n+x\n\\ No newline at end of file")
            ),
            (
                "edit_file".to_string(),
                path("src/a.rs").with_detail(
                    "(the file does not hold old_text exactly once, so the edit will fail; old_text → new_text:)\n\
                     --- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file"
                )
            ),
            ("glob".to_string(), text("src/**/*.rs")),
            (
                "todo_write".to_string(),
                CallSummary::text(todos.to_string())
            ),
            ("task".to_string(), text("count the lines")),
        ]
    );
}

#[test]
fn each_tool_is_registered_under_its_own_name_constant() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(&Workspace::new(dir.path()).unwrap());
    assert_eq!(
        registry.names(),
        vec![
            BashTool::NAME,
            ReadFile::NAME,
            WriteFile::NAME,
            EditFile::NAME,
            Glob::NAME,
            TodoWrite::NAME,
            TaskTool::NAME,
        ]
    );
}

#[tokio::test]
async fn a_subagent_that_cannot_be_built_is_a_tool_error_naming_why() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(&Workspace::new(dir.path()).unwrap());
    let prepared = registry
        .prepare(&call(TaskTool::NAME, json!({"description": "go"})))
        .unwrap();
    assert_eq!(
        registry.execute(&prepared).await.unwrap_err().to_string(),
        "Error [subagent_execution_error]: cannot build the subagent: tool `child_tool` has a spec but no handler"
    );
}
