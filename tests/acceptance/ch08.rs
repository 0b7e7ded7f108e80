//! Chapter 8: large-result artifacts and compaction.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_compaction::CompactionConfig;
use agent_core::{
    AgentEvent, CollectingSink, CompactionKind, Message, ModelClient, ModelError, ModelReply,
    ModelRequest, validate_pairing,
};
use agent_test_support::ScriptStep;
use agent_test_support::{Recording, ScriptedModel};
use agent_tools::Workspace;
use agent_tutorial::Profile;
use agent_tutorial::{AgentDeps, build_agent};
use async_trait::async_trait;
use serde_json::json;

use agent_policy::StaticApproval;

use crate::support::{
    call, command, scripted_agent_with, tool_results, tool_round, workspace, write_script,
};

#[tokio::test]
async fn a_large_result_goes_to_an_artifact_and_the_history_keeps_a_preview() {
    let dir = workspace();
    let replies = vec![
        tool_round(vec![call("c1", "bash", json!({"command": "seq 1 10000"}))]),
        ModelReply::text("ok"),
    ];
    let (mut agent, _m) = scripted_agent_with(8, dir.path(), replies, |deps| {
        deps.approval = Some(Arc::new(StaticApproval::ApproveAll));
    });
    agent.run_turn("count").await.unwrap();
    let full: String = (1..=10_000).map(|i| format!("{i}\n")).collect();
    assert_eq!(full.len(), 48_894);
    let saved =
        std::fs::read_to_string(dir.path().join(".agent_tutorial/artifacts/c1.txt")).unwrap();
    assert_eq!(saved, full);
    let result = &tool_results(agent.history())[0];
    assert!(result.starts_with("c1: <persisted-tool-result path=\".agent_tutorial/artifacts/c1.txt\" bytes=\"48894\">\n1\n2\n3\n"), "{result}");
    assert!(
        result.ends_with("9999\n10000\n\n</persisted-tool-result>"),
        "{result}"
    );
    assert!(result.len() < 3_500);
}

/// Answers summary requests itself and everything else from the script, so a long session
/// can be scripted without knowing when compaction kicks in.
struct Router {
    script: ScriptedModel,
    summaries: AtomicUsize,
    requests: std::sync::Mutex<Vec<ModelRequest>>,
}

impl Router {
    fn new(replies: Vec<ModelReply>) -> Arc<Self> {
        Arc::new(Self {
            script: ScriptedModel::replies(replies),
            summaries: AtomicUsize::new(0),
            requests: std::sync::Mutex::new(Vec::new()),
        })
    }
}

/// A chapter-8 agent on `router` whose summary kicks in above `byte_budget` bytes.
fn compacting_agent(
    dir: &std::path::Path,
    router: &Arc<Router>,
    byte_budget: usize,
) -> (agent_tutorial::Agent, Arc<CollectingSink>) {
    let sink = Arc::new(CollectingSink::new());
    let mut deps = AgentDeps::new(router.clone(), Workspace::new(dir).unwrap());
    deps.events = sink.clone();
    deps.compaction = CompactionConfig {
        byte_budget,
        ..CompactionConfig::default()
    };
    deps.max_turns = 100;
    let agent = build_agent(Profile::for_chapter(8).unwrap(), deps).unwrap();
    (agent, sink)
}

#[async_trait]
impl ModelClient for Router {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        if request.tools.is_empty() && request.messages[0].text().starts_with("You compress") {
            let n = self.summaries.fetch_add(1, Ordering::SeqCst) + 1;
            return Ok(ModelReply::text(format!(
                "```json\n{{\"current_goal\": \"read everything\", \"key_findings\": [\"summary {n}\"], \"files_read_or_changed\": [\"notes.txt\"], \"remaining_work\": [], \"user_constraints\": []}}\n```"
            )));
        }
        self.requests.lock().unwrap().push(request.clone());
        self.script.complete(request).await
    }
}

#[tokio::test]
async fn a_long_session_keeps_every_request_paired_and_under_budget() {
    let dir = workspace();
    std::fs::write(dir.path().join("big.txt"), "y".repeat(3_000)).unwrap();
    let rounds = 64;
    let mut replies: Vec<ModelReply> = (0..rounds)
        .map(|i| {
            tool_round(vec![call(
                &format!("c{i}"),
                "read_file",
                json!({"path": "big.txt"}),
            )])
        })
        .collect();
    replies.push(ModelReply::text("read it 64 times"));
    let router = Router::new(replies);
    let (mut agent, events) = compacting_agent(dir.path(), &router, 8_000);
    let outcome = agent.run_turn("read big.txt many times").await.unwrap();
    assert_eq!(outcome.final_text, "read it 64 times");
    router.script.finish().unwrap();

    let requests = router.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), rounds + 1);
    for (i, request) in requests.iter().enumerate() {
        assert_eq!(validate_pairing(&request.messages), Ok(()), "request {i}");
        let bytes: usize = request.messages.iter().map(|m| m.text().len()).sum();
        assert!(bytes < 30_000, "request {i} has {bytes} bytes");
    }
    // The stored history is canonical: every round, every full result.
    assert_eq!(agent.history().len(), 2 + 2 * rounds);
    assert_eq!(tool_results(agent.history())[0].len(), "c0: ".len() + 3_000);
    // The first request over budget was summarized; from then on each new prefix once.
    let summaries = router.summaries.load(Ordering::SeqCst);
    assert!(summaries > 0);
    // Each request sent with a summary was told as one: the numbers of the requests
    // (0-based) that carry a summary and of those the events name are the same.
    let mut sent = 0;
    let mut told = Vec::new();
    for event in events.events() {
        match event {
            AgentEvent::Compacted {
                kind: CompactionKind::Summary,
                before,
                after,
            } => {
                assert!(after < before);
                told.push(sent);
            }
            AgentEvent::RequestSent { .. } => sent += 1,
            _ => {}
        }
    }
    let with_summary: Vec<usize> = requests
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            r.messages
                .iter()
                .any(|m| m.text().starts_with("<conversation-summary>"))
        })
        .map(|(i, _)| i)
        .collect();
    assert!(!told.is_empty());
    assert_eq!(told, with_summary);
    let last = requests.last().unwrap();
    let summary_messages: Vec<&Arc<Message>> = last
        .messages
        .iter()
        .filter(|m| m.text().starts_with("<conversation-summary>"))
        .collect();
    assert_eq!(summary_messages.len(), 1);
    assert!(
        summary_messages[0]
            .text()
            .contains(&format!("\"summary {summaries}\""))
    );
    // One append-only transcript for the session, however many summaries were made.
    let transcripts = std::fs::read_dir(dir.path().join(".agent_tutorial/transcripts"))
        .unwrap()
        .count();
    assert_eq!(transcripts, 1);
}

#[tokio::test]
async fn an_unchanged_prefix_is_not_summarized_twice() {
    let dir = workspace();
    std::fs::write(dir.path().join("big.txt"), "y".repeat(3_000)).unwrap();
    let replies: Vec<ModelReply> = (0..10)
        .map(|i| {
            tool_round(vec![call(
                &format!("c{i}"),
                "read_file",
                json!({"path": "big.txt"}),
            )])
        })
        .chain([ModelReply::text("done")])
        .collect();
    let router = Router::new(replies);
    let (mut agent, _events) = compacting_agent(dir.path(), &router, 10_000);
    agent.run_turn("go").await.unwrap();
    let summaries_made = || router.summaries.load(Ordering::SeqCst);
    let after_turn = summaries_made();
    // Building the next request twice for the same history: the prefix is the same both times.
    agent.preview_request("next").await.unwrap();
    let once = summaries_made();
    agent.preview_request("next").await.unwrap();
    assert_eq!(summaries_made(), once);
    assert!(once <= after_turn + 1);
}

#[tokio::test]
async fn prompt_too_long_compacts_once_and_retries_once() {
    let dir = workspace();
    let mut steps: Vec<ScriptStep> = (0..6)
        .map(|i| {
            ScriptStep::Reply(tool_round(vec![call(
                &format!("c{i}"),
                "glob",
                json!({"pattern": "*"}),
            )]))
        })
        .collect();
    steps.push(ScriptStep::Fail(ModelError::PromptTooLong {
        message: "too long".into(),
    }));
    steps.push(ScriptStep::Reply(ModelReply::text("after retry")));
    steps.push(ScriptStep::Fail(ModelError::PromptTooLong {
        message: "too long".into(),
    }));
    steps.push(ScriptStep::Fail(ModelError::PromptTooLong {
        message: "still too long".into(),
    }));
    let model = Arc::new(ScriptedModel::new(steps).recording(Recording::Requests));
    let deps = AgentDeps::new(model.clone(), Workspace::new(dir.path()).unwrap());
    let mut agent = build_agent(Profile::for_chapter(8).unwrap(), deps).unwrap();
    assert_eq!(
        agent.run_turn("go").await.unwrap().final_text,
        "after retry"
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 8);
    // The retry kept the system prompt, the first user message, a marker and the newest 2 groups.
    let retry: Vec<&str> = requests[7].messages.iter().map(|m| m.role()).collect();
    assert_eq!(
        retry,
        vec![
            "system",
            "user",
            "system",
            "assistant",
            "tool",
            "assistant",
            "tool"
        ]
    );
    assert_eq!(requests[6].messages.len(), 15);

    // A second overflow on the retry is an error: one retry only.
    let err = agent.run_turn("again").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "the prompt is too long for the model: still too long"
    );
    model.finish().unwrap();
}

#[test]
fn the_cli_shows_a_result_persisted_to_an_artifact() {
    let dir = workspace();
    std::fs::write(dir.path().join("big.txt"), "z".repeat(48_000)).unwrap();
    let script = write_script(
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "big.txt"}}]},
            {"content": "read"}
        ]),
    );
    command("ch08", dir.path())
        .args(["--prompt", "read big.txt", "--script"])
        .arg(&script)
        .assert()
        .success()
        .stdout("read\n")
        // The batch's results are shaped after the whole batch ran, so the artifact line
        // follows the `[result]` line.
        .stderr(
            "[tool] read_file {\"path\":\"big.txt\"}\n\
             [result] ok: 1 line, 48000 bytes\n\
             [artifact] c1 -> .agent_tutorial/artifacts/c1.txt (48000 bytes)\n",
        );
}

/// What a long session of large reads cost: model calls for summaries, and transcript bytes
/// against the bytes of the stored history written the same way (one JSON line a message).
struct LongSession {
    requests: Vec<ModelRequest>,
    summaries: usize,
    transcript_files: Vec<String>,
    transcript: String,
    history: Vec<Message>,
}

/// `rounds` reads of an 18 KB file (under the artifact threshold, so each stays in the
/// history) through a chapter-8 agent with the default compaction settings.
async fn long_session(rounds: usize) -> LongSession {
    let dir = workspace();
    let line = format!("{}\n", "y".repeat(99));
    std::fs::write(dir.path().join("big.txt"), line.repeat(180)).unwrap();
    let replies: Vec<ModelReply> = (0..rounds)
        .map(|i| {
            tool_round(vec![call(
                &format!("c{i}"),
                "read_file",
                json!({"path": "big.txt"}),
            )])
        })
        .chain([ModelReply::text("done")])
        .collect();
    let router = Router::new(replies);
    let sink = Arc::new(CollectingSink::new());
    let mut deps = AgentDeps::new(router.clone(), Workspace::new(dir.path()).unwrap());
    deps.events = sink;
    deps.max_turns = rounds + 1;
    let mut agent = build_agent(Profile::for_chapter(8).unwrap(), deps).unwrap();
    agent.run_turn("read big.txt many times").await.unwrap();
    router.script.finish().unwrap();
    let folder = dir.path().join(".agent_tutorial/transcripts");
    let mut transcript_files: Vec<String> = std::fs::read_dir(&folder)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    transcript_files.sort();
    let transcript = transcript_files
        .iter()
        .map(|name| std::fs::read_to_string(folder.join(name)).unwrap())
        .collect();
    let requests = router.requests.lock().unwrap().clone();
    LongSession {
        requests,
        summaries: router.summaries.load(Ordering::SeqCst),
        transcript_files,
        transcript,
        history: agent.history().iter().map(|m| Message::clone(m)).collect(),
    }
}

fn jsonl(messages: &[Message]) -> String {
    messages
        .iter()
        .map(|m| format!("{}\n", serde_json::to_string(m).unwrap()))
        .collect()
}

#[tokio::test]
async fn two_hundred_large_rounds_summarize_once_per_k_requests_into_one_transcript() {
    let rounds = 200;
    let session = long_session(rounds).await;
    assert_eq!(session.requests.len(), rounds + 1);
    for (i, request) in session.requests.iter().enumerate() {
        assert_eq!(validate_pairing(&request.messages), Ok(()), "request {i}");
    }
    let every = CompactionConfig::default().summary_every_requests;
    assert_eq!(every, 8);
    assert!(
        session.summaries <= rounds / every + 2,
        "{} summaries",
        session.summaries
    );
    // One append-only file for the session, holding the history's first messages once each,
    // in order: the summarized part is recoverable and nothing is written twice.
    assert_eq!(
        session.transcript_files.len(),
        1,
        "{:?}",
        session.transcript_files
    );
    assert!(session.transcript_files[0].ends_with(".jsonl"));
    let history = jsonl(&session.history);
    assert!(session.transcript.len() <= 2 * history.len());
    let lines = session.transcript.lines().count();
    assert!(lines > 0);
    assert_eq!(session.transcript, jsonl(&session.history[..lines]));
}
