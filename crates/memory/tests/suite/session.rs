use std::sync::Arc;

use agent_core::{AgentEvent, CollectingSink, Events, Message, ModelError, ModelReply};
use agent_memory::{MemoryPlacement, MemoryRecord, MemorySession, MemoryStore, MemoryType};
use agent_test_support::ScriptStep;
use agent_test_support::{Recording, ScriptedModel};
use agent_workspace::Workspace;

fn setup(
    steps: Vec<ScriptStep>,
    delivery: MemoryPlacement,
) -> (
    tempfile::TempDir,
    Arc<ScriptedModel>,
    MemorySession,
    Arc<CollectingSink>,
) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let model = Arc::new(ScriptedModel::new(steps).recording(Recording::Requests));
    let events = Arc::new(CollectingSink::new());
    let session = MemorySession::new(MemoryStore::open(&ws), model.clone(), delivery)
        .events(Events::new(events.clone()));
    (dir, model, session, events)
}

/// The last memory failure told, if any (what the CLI prints as `[memory] error: …`).
fn last_error(events: &CollectingSink) -> Option<String> {
    events.events().into_iter().rev().find_map(|e| match e {
        AgentEvent::MemoryFailed { message } => Some(message),
        _ => None,
    })
}

/// The names of the last selection told.
fn selected(events: &CollectingSink) -> Vec<String> {
    events
        .events()
        .into_iter()
        .rev()
        .find_map(|e| match e {
            AgentEvent::MemorySelected { names } => Some(names),
            _ => None,
        })
        .unwrap_or_default()
}

/// The names of the last extraction told.
fn extracted(events: &CollectingSink) -> Vec<String> {
    events
        .events()
        .into_iter()
        .rev()
        .find_map(|e| match e {
            AgentEvent::MemoryExtracted { names } => Some(names),
            _ => None,
        })
        .unwrap_or_default()
}

fn reply(text: &str) -> ScriptStep {
    ScriptStep::Reply(ModelReply::text(text))
}

fn seed(session: &MemorySession) {
    session
        .store()
        .upsert(vec![
            MemoryRecord::new(
                "indent-style",
                MemoryType::User,
                "The user indents Rust with tabs",
                "Use tabs, width 4.",
            ),
            MemoryRecord::new(
                "deploy",
                MemoryType::Project,
                "Deploys go through staging",
                "Run `make stage` first.",
            ),
        ])
        .unwrap();
}

#[tokio::test]
async fn the_selector_picks_and_the_block_renders_once() {
    let (_d, model, session, events) = setup(
        vec![reply("```json\n[\"indent-style\"]\n```")],
        MemoryPlacement::OwnMessage,
    );
    seed(&session);
    session.begin_turn("format main.rs").await;
    assert_eq!(last_error(&events), None);
    assert_eq!(
        session.render_selected().unwrap(),
        "<relevant_memories>\n## indent-style (user)\nThe user indents Rust with tabs\nUse tabs, width 4.\n</relevant_memories>"
    );
    assert_eq!(
        session.before_model(),
        Some(Message::system(session.render_selected().unwrap()))
    );
    // The selector is a model call without tools.
    assert!(model.requests()[0].tools.is_empty());
    model.finish().unwrap();
}

#[tokio::test]
async fn a_failing_selector_falls_back_to_keywords_and_records_the_error() {
    let cases = [
        (
            ScriptStep::Fail(ModelError::Server {
                status: 500,
                message: "down".into(),
                retry_after: None,
            }),
            "selector failed, used keyword fallback: the model server failed (HTTP 500): down",
        ),
        (
            reply("indent-style please"),
            "selector failed, used keyword fallback: the reply is not a JSON array of names (expected value at line 1 column 1)",
        ),
        (
            reply("[\"nope\"]"),
            "selector failed, used keyword fallback: `nope` is not a saved memory",
        ),
        // A list cut at the length limit may be missing names even when it parses.
        (
            ScriptStep::Reply(ModelReply {
                finish_reason: Some("length".into()),
                ..ModelReply::text("[\"deploy\"]")
            }),
            "selector failed, used keyword fallback: the reply was cut off at the length limit",
        ),
    ];
    for (step, error) in cases {
        let (_d, _m, session, events) = setup(vec![step], MemoryPlacement::OwnMessage);
        seed(&session);
        session.begin_turn("how do I indent Rust?").await;
        assert_eq!(last_error(&events).as_deref(), Some(error));
        let names: Vec<String> = session.selected().into_iter().map(|r| r.name).collect();
        assert_eq!(names, vec!["indent-style"]);
    }
}

#[tokio::test]
async fn chapter_10_mode_selects_but_emits_nothing() {
    let (_d, _m, session, _events) = setup(vec![reply("[\"deploy\"]")], MemoryPlacement::Prompt);
    seed(&session);
    session.begin_turn("ship it").await;
    assert_eq!(session.selected().len(), 1);
    assert_eq!(session.before_model(), None);
}

#[tokio::test]
async fn extraction_writes_valid_records_and_garbage_writes_nothing() {
    let turn = vec![
        Message::user("I always want tabs"),
        Message::assistant_text("Noted."),
    ];
    let good = r#"[{"name": "tabs", "type": "feedback", "description": "Use tabs", "body": "The user wants tabs."}]"#;
    let (_d, model, session, events) = setup(vec![reply(good)], MemoryPlacement::OwnMessage);
    session.complete(&turn).await;
    assert_eq!(last_error(&events), None);
    assert_eq!(extracted(&events), vec!["tabs"]);
    assert_eq!(
        session.store().load().unwrap(),
        vec![MemoryRecord::new(
            "tabs",
            MemoryType::Feedback,
            "Use tabs",
            "The user wants tabs."
        )]
    );
    assert!(model.requests()[0].tools.is_empty());

    let garbage = [
        (
            "not json at all",
            "extraction failed, nothing saved: the reply is not valid: expected ident at line 1 column 2",
        ),
        (
            r#"[{"name": "x", "type": "feeling", "description": "d", "body": "b"}]"#,
            "extraction failed, nothing saved: the reply is not valid: unknown variant `feeling`, expected one of `user`, `feedback`, `project`, `reference` at line 1 column 32",
        ),
        (
            r#"[{"name": "x", "type": "user", "description": "d"}]"#,
            "extraction failed, nothing saved: the reply is not valid: missing field `body` at line 1 column 50",
        ),
        (
            r#"[{"name": "x", "type": "user", "description": "d", "body": "b", "extra": 1}]"#,
            "extraction failed, nothing saved: the reply is not valid: unknown field `extra`, expected one of `name`, `type`, `description`, `body` at line 1 column 71",
        ),
    ];
    for (text, error) in garbage {
        let (dir, _m, session, events) = setup(vec![reply(text)], MemoryPlacement::OwnMessage);
        session.complete(&turn).await;
        assert_eq!(last_error(&events).as_deref(), Some(error));
        assert!(!dir.path().join(".memory/MEMORY.md").exists());
    }
}

#[tokio::test]
async fn ten_records_are_consolidated_sources_archived_after_the_replacement() {
    let records: Vec<String> = (0..10).map(|i| format!(r#"{{"name": "fact-{i}", "type": "project", "description": "Fact {i}", "body": "b"}}"#)).collect();
    let extraction = format!("[{}]", records.join(","));
    let consolidation = r#"{"source_names": ["fact-0", "fact-1", "fact-2"], "records": [{"name": "facts-0-2", "type": "project", "description": "Facts 0 to 2", "body": "merged"}]}"#;
    let (dir, model, session, events) = setup(
        vec![reply(&extraction), reply(consolidation)],
        MemoryPlacement::OwnMessage,
    );
    session.complete(&[Message::user("x")]).await;
    assert_eq!(last_error(&events), None);
    let names: Vec<String> = session
        .store()
        .load()
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(
        names,
        vec![
            "fact-3",
            "fact-4",
            "fact-5",
            "fact-6",
            "fact-7",
            "fact-8",
            "fact-9",
            "facts-0-2"
        ]
    );
    let mut archived: Vec<String> = std::fs::read_dir(dir.path().join(".memory/archive"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .map(|f| f.rsplit_once('-').unwrap().0.to_string())
        .collect();
    archived.sort();
    assert_eq!(archived, vec!["fact-0", "fact-1", "fact-2"]);
    model.finish().unwrap();
}

#[tokio::test]
async fn a_record_the_selector_names_twice_is_selected_once() {
    let (_d, _m, session, events) = setup(
        vec![reply(r#"["deploy", "indent-style", "deploy"]"#)],
        MemoryPlacement::OwnMessage,
    );
    seed(&session);
    session.begin_turn("ship it with tabs").await;
    assert_eq!(last_error(&events), None);
    assert_eq!(selected(&events), vec!["deploy", "indent-style"]);
}

#[tokio::test]
async fn a_record_extracted_twice_in_one_reply_is_saved_once_and_the_last_wins() {
    let twice = r#"[{"name": "tabs", "type": "feedback", "description": "Use tabs", "body": "First."},
                    {"name": "tabs", "type": "feedback", "description": "Use tabs", "body": "Second."}]"#;
    let (_d, _m, session, events) = setup(vec![reply(twice)], MemoryPlacement::OwnMessage);
    session.complete(&[Message::user("tabs please")]).await;
    assert_eq!(last_error(&events), None);
    assert_eq!(extracted(&events), vec!["tabs"]);
    assert_eq!(
        session.store().load().unwrap(),
        vec![MemoryRecord::new(
            "tabs",
            MemoryType::Feedback,
            "Use tabs",
            "Second."
        )]
    );
}

fn ten_facts() -> String {
    let records: Vec<String> = (0..10).map(|i| format!(r#"{{"name": "fact-{i}", "type": "project", "description": "Fact {i}", "body": "b"}}"#)).collect();
    format!("[{}]", records.join(","))
}

#[tokio::test]
async fn a_consolidation_that_would_only_delete_or_remove_most_records_is_refused() {
    let cases = [
        (
            r#"{"source_names": ["fact-0", "fact-1"], "records": []}"#,
            "consolidation failed, memories unchanged: the consolidation has no replacement records; nothing was changed",
        ),
        (
            r#"{"source_names": ["fact-0", "fact-1", "fact-2", "fact-3", "fact-4", "fact-5"], "records": [{"name": "facts", "type": "project", "description": "Facts", "body": "merged"}]}"#,
            "consolidation failed, memories unchanged: the consolidation would remove 6 of 10 memories (at most half may go in one pass); nothing was changed",
        ),
    ];
    for (consolidation, error) in cases {
        let (dir, model, session, events) = setup(
            vec![reply(&ten_facts()), reply(consolidation)],
            MemoryPlacement::OwnMessage,
        );
        session.complete(&[Message::user("x")]).await;
        model.finish().unwrap();
        assert_eq!(last_error(&events).as_deref(), Some(error));
        let names: Vec<String> = session
            .store()
            .load()
            .unwrap()
            .into_iter()
            .map(|r| r.name)
            .collect();
        let all: Vec<String> = (0..10).map(|i| format!("fact-{i}")).collect();
        assert_eq!(names, all);
        assert!(!dir.path().join(".memory/archive").exists());
    }
}

#[tokio::test]
async fn a_corrupt_record_is_reported_and_the_others_are_selected_and_extracted() {
    let good = r#"[{"name": "tabs", "type": "feedback", "description": "Use tabs", "body": "b"}]"#;
    let (dir, _m, session, events) = setup(
        vec![reply(r#"["deploy"]"#), reply(good)],
        MemoryPlacement::OwnMessage,
    );
    seed(&session);
    let index = std::fs::read_to_string(dir.path().join(".memory/MEMORY.md")).unwrap();
    let file = index
        .lines()
        .next()
        .unwrap()
        .split(['(', ')'])
        .nth(1)
        .unwrap();
    assert!(file.starts_with("indent-style-"), "{index}");
    std::fs::write(dir.path().join(".memory").join(file), "---\nname: [\n---\n").unwrap();

    session.begin_turn("ship it").await;
    assert_eq!(last_error(&events), None);
    assert_eq!(selected(&events), vec!["deploy"]);
    // The store leaves it out, says which, and keeps the file.
    let skipped = session.store().load_all().unwrap().skipped;
    assert_eq!(skipped.len(), 1);
    assert_eq!(
        (skipped[0].name.as_str(), skipped[0].file.as_str()),
        ("indent-style", file)
    );
    session.complete(&[Message::user("tabs")]).await;
    assert_eq!(last_error(&events), None);
    assert_eq!(extracted(&events), vec!["tabs"]);
    let names: Vec<String> = session
        .store()
        .load()
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(names, vec!["deploy", "tabs"]);
}

/// The turn the side-call pins below render: an answer without text, tool calls, a tool result
/// over the 500-character cut, and multi-byte text.
fn rich_turn() -> Vec<Message> {
    vec![
        Message::user("Réglez les tabs ✓"),
        Message::Assistant {
            content: None,
            tool_calls: vec![
                agent_core::ToolCall {
                    id: "c1".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"src/main.rs"}"#.into(),
                },
                agent_core::ToolCall {
                    id: "c2".into(),
                    name: "glob".into(),
                    arguments: r#"{"pattern":"**/*.rs"}"#.into(),
                },
            ],
        },
        Message::tool_result("c1", format!("é{}", "x".repeat(600))),
        Message::tool_result("c2", "src/main.rs"),
        Message::assistant_text("Tabs it is."),
    ]
}

/// Pins every byte of the extraction request, so moving the side call into `agent_core`
/// provably changed nothing the model receives.
#[tokio::test]
async fn the_extraction_request_is_pinned_byte_for_byte() {
    let (_d, model, session, events) = setup(vec![reply("[]")], MemoryPlacement::OwnMessage);
    seed(&session);
    session.complete(&rich_turn()).await;
    assert_eq!(last_error(&events), None);
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].tools.is_empty());
    assert_eq!(
        requests[0].messages,
        vec![
            Message::system(include_str!("../../src/extract_prompt.md").trim()),
            Message::user(format!(
                "Existing memories:\n- indent-style: The user indents Rust with tabs\n- deploy: Deploys go through staging\n\nConversation:\nuser: Réglez les tabs ✓\nassistant: \n  called read_file {{\"path\":\"src/main.rs\"}}\n  called glob {{\"pattern\":\"**/*.rs\"}}\ntool result: é{}\ntool result: src/main.rs\nassistant: Tabs it is.",
                "x".repeat(499)
            )),
        ]
    );
}

/// Pins the selector request the same way.
#[tokio::test]
async fn the_selector_request_is_pinned_byte_for_byte() {
    let (_d, model, session, _events) =
        setup(vec![reply("[\"deploy\"]")], MemoryPlacement::OwnMessage);
    seed(&session);
    session.begin_turn("ship it").await;
    assert_eq!(
        model.requests()[0].messages,
        vec![
            Message::system(include_str!("../../src/select_prompt.md").trim()),
            Message::user(
                "Message:\nship it\n\nMemories:\nindent-style: The user indents Rust with tabs\ndeploy: Deploys go through staging"
            ),
        ]
    );
}

/// A preview asks what a turn would select; the session itself keeps its own selection.
#[tokio::test]
async fn selecting_by_keywords_for_a_preview_stores_nothing() {
    let (_d, _model, session, _events) = setup(vec![], MemoryPlacement::OwnMessage);
    seed(&session);
    let chosen: Vec<String> = session
        .select_by_keywords("how do I deploy")
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(chosen, vec!["deploy"]);
    assert_eq!(session.selected(), Vec::<MemoryRecord>::new());
    assert_eq!(session.before_model(), None);
}
