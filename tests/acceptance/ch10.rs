//! Chapter 10: the system prompt is assembled at run time.

use std::sync::{Arc, OnceLock};

use agent_core::{
    AgentEvent, CacheUse, Message, ModelReply, ModelRequest, ToolEffect, ToolRegistry, ToolSpec,
};
use agent_hooks::{FnHook, HookError, HookEventKind, HookOutput};
use agent_memory::{MemoryRecord, MemoryStore, MemoryType};
use agent_tools::Workspace;
use serde_json::json;

use crate::ch07::install_example_skills;
use crate::support::{
    call, command, scripted_agent_with, scripted_agent_with_events, stderr_of, stdout_of,
    tool_round, transcript, workspace,
};

const BLOCK: &str = "<relevant_memories>\n## prefers-tabs (feedback)\nThe user wants Rust indented with tabs\nUse tabs, never spaces, in .rs files.\n</relevant_memories>";

/// The prompt assemblies among `events`.
fn prompt_events(events: &[AgentEvent]) -> Vec<AgentEvent> {
    events
        .iter()
        .filter(|e| matches!(e, AgentEvent::PromptAssembled { .. }))
        .cloned()
        .collect()
}

fn seed_memory(dir: &std::path::Path) {
    MemoryStore::open(&Workspace::new(dir).unwrap())
        .upsert(vec![MemoryRecord::new(
            "prefers-tabs",
            MemoryType::Feedback,
            "The user wants Rust indented with tabs",
            "Use tabs, never spaces, in .rs files.",
        )])
        .unwrap();
}

/// Selector, two tool rounds, the answer, extraction.
fn session() -> Vec<ModelReply> {
    vec![
        ModelReply::text(r#"["prefers-tabs"]"#),
        tool_round(vec![call(
            "c1",
            "read_file",
            json!({"path": "src/main.rs"}),
        )]),
        tool_round(vec![call("c2", "glob", json!({"pattern": "**/*.rs"}))]),
        ModelReply::text("It uses spaces; I would switch to tabs."),
        ModelReply::text("[]"),
    ]
}

fn count(request: &ModelRequest, needle: &str) -> usize {
    request
        .messages
        .iter()
        .map(|m| m.text().matches(needle).count())
        .sum()
}

fn section_names(prompt: &str) -> Vec<&str> {
    prompt
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .filter(|l| !l.contains('('))
        .collect()
}

#[tokio::test]
async fn p10_renders_memory_into_the_prompt_once_per_request() {
    let dir = workspace();
    seed_memory(dir.path());
    install_example_skills(dir.path());
    let (mut agent, model, events) = scripted_agent_with_events(10, dir.path(), session());
    agent.run_turn("Does main.rs use tabs?").await.unwrap();
    model.finish().unwrap();
    let requests = model.requests();
    let main: Vec<&ModelRequest> = requests[1..4].iter().collect();
    for (i, request) in main.iter().enumerate() {
        assert_eq!(count(request, "<relevant_memories>"), 1, "request {i}");
        assert_eq!(
            request.messages[1],
            Message::user("Does main.rs use tabs?"),
            "request {i}"
        );
    }
    let prompt = main[0].messages[0].text();
    assert_eq!(main[1].messages[0].text(), prompt);
    assert_eq!(main[2].messages[0].text(), prompt);
    assert_eq!(
        section_names(prompt),
        vec!["identity", "tools", "workspace", "skills", "memory"]
    );
    let root = dir.path().canonicalize().unwrap();
    let expected = format!(
        "## identity\nYou are a coding agent. Use the tools to inspect and change files and to run commands; act rather than explain.\nWhen the task is done, reply with a short summary of what you did and found.\ncontext: {{\"chapter\":10,\"profile\":\"P10\"}}\n\n## tools\n- bash\n- read_file\n- write_file\n- edit_file\n- glob\n- todo_write\n- load_skill\n- task\n\n## workspace\n{}\n\n## skills\n- **commit-message**: Write a git commit message that says what changed and why\n- **rust-test**: Add a focused Rust test that fails before the fix and passes after\n\n## memory\n{BLOCK}",
        root.display()
    );
    assert_eq!(prompt, expected);
    // Tools in the request: registration order, the same as the prompt lists them.
    let names: Vec<&str> = main[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "glob",
            "todo_write",
            "load_skill",
            "task"
        ]
    );
    // Three requests, one assembly: the other two were cache hits.
    let assembled = |cache| AgentEvent::PromptAssembled {
        bytes: prompt.len(),
        cache,
    };
    assert_eq!(
        prompt_events(&events.events()),
        vec![
            assembled(CacheUse::Miss),
            assembled(CacheUse::Hit),
            assembled(CacheUse::Hit)
        ]
    );
    insta::assert_snapshot!(transcript(&requests, dir.path()));
}

#[tokio::test]
async fn the_same_session_on_p09_sends_the_block_as_its_own_message() {
    let dir = workspace();
    seed_memory(dir.path());
    let (mut agent, model, events) = scripted_agent_with_events(9, dir.path(), session());
    agent.run_turn("Does main.rs use tabs?").await.unwrap();
    let requests = model.requests();
    for request in &requests[1..4] {
        assert_eq!(count(request, "<relevant_memories>"), 1);
        assert_eq!(request.messages[1], Message::system(BLOCK));
        assert!(!request.messages[0].text().contains("<relevant_memories>"));
    }
    assert_eq!(prompt_events(&events.events()), vec![]);
    insta::assert_snapshot!(transcript(&requests, dir.path()));
}

#[tokio::test]
async fn a_tool_registered_mid_turn_appears_in_the_next_requests_prompt() {
    let dir = workspace();
    let registry: Arc<OnceLock<Arc<ToolRegistry>>> = Arc::new(OnceLock::new());
    let late = registry.clone();
    let replies = vec![
        tool_round(vec![call("c1", "glob", json!({"pattern": "*"}))]),
        ModelReply::text("done"),
        ModelReply::text("[]"),
    ];
    let (mut agent, model) = scripted_agent_with(10, dir.path(), replies, |deps| {
        deps.hooks.register(
            HookEventKind::PostToolUse,
            None,
            Arc::new(FnHook::new("installer", move |_| {
                let spec = ToolSpec::new(
                    "late_tool",
                    "Registered by a hook.",
                    ToolEffect::Read,
                    json!({"type": "object"}),
                );
                let handler = Arc::new(agent_tools::subagent::TaskTool::new(|| {
                    Err(agent_core::RegistryError::MissingHandler("unused".into()).into())
                }));
                if let Some(tools) = late.get() {
                    tools.register(spec, handler).map_err(HookError::failed)?;
                }
                Ok(HookOutput::Nothing)
            })),
        );
    });
    registry.set(agent.tools().clone()).unwrap();
    agent.run_turn("go").await.unwrap();
    let requests = model.requests();
    assert!(!requests[0].messages[0].text().contains("- late_tool"));
    assert!(
        requests[1].messages[0]
            .text()
            .contains("- glob\n- todo_write\n- load_skill\n- task\n- late_tool\n\n## workspace")
    );
    assert_eq!(requests[1].tools.last().unwrap().name, "late_tool");
}

#[test]
fn prompt_diff_shows_the_memory_moving_into_the_system_prompt() {
    let dir = workspace();
    seed_memory(dir.path());
    let text = stdout_of(
        command("agent-tutorial", dir.path())
            .args([
                "prompt",
                "--chapter",
                "10",
                "--diff",
                "9",
                "--prompt",
                "indent this Rust file",
            ])
            .assert()
            .success(),
    );
    let changed: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("-──") || l.starts_with("+──") || l.starts_with("+## "))
        .collect();
    assert_eq!(
        changed,
        vec![
            "+## identity",
            "+## tools",
            "+## workspace",
            "-── [1] system ──",
            "+## memory",
            "-── [2] user ──",
            "+── [1] user ──"
        ]
    );
    // The block itself is unchanged context in the diff: it moved, it did not change.
    assert!(text.contains("\n <relevant_memories>\n ## prefers-tabs (feedback)\n"));
}

#[test]
fn chapter_10_runs_offline_from_a_script_with_tracing_of_the_renderer() {
    let dir = workspace();
    let script = crate::support::write_script(
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "glob", "arguments": {"pattern": "*.txt"}}]},
            {"content": "Found notes.txt."},
            {"content": "[]"}
        ]),
    );
    let stderr = stderr_of(
        command("ch10", dir.path())
            .args(["-v", "--prompt", "find text files", "--script"])
            .arg(&script)
            .assert()
            .success()
            .stdout("Found notes.txt.\n"),
    );
    let renders: Vec<&str> = stderr
        .lines()
        .filter_map(|l| {
            l.split_once("[cache hit]")
                .map(|_| "[cache hit]")
                .or_else(|| l.split_once("[assembled]").map(|(_, r)| r))
        })
        .collect();
    assert_eq!(
        renders,
        vec![" sections: identity, tools, workspace", "[cache hit]"]
    );
}
