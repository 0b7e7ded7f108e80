//! Chapter 11's recovery around the model client: a retry on stderr, the fallback model in the
//! request body, one compaction after "prompt too long" with pairing intact, and chapter 10
//! still failing at once on the same script.

use std::sync::Arc;

use agent_core::{AgentEvent, CollectingSink, Message, ModelError, ModelReply, RecoveryAction};
use agent_test_support::{Recording, ScriptStep, ScriptedModel};
use agent_tools::Workspace;
use agent_tutorial::{AgentDeps, Profile, build_agent};
use serde_json::json;
use wiremock::matchers::{body_partial_json, method};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::{
    assert_all_paired, call, command, stderr_of, tool_round, workspace, write_script,
};

/// A 429, then the answer, then memory extraction's `[]` (chapter 9 on, after every turn).
fn rate_limited_script() -> serde_json::Value {
    json!([
        {"error": {"status": 429, "message": "slow down"}},
        {"content": "done"},
        {"content": "[]"}
    ])
}

#[test]
fn a_429_then_a_reply_prints_the_retry_line_and_answers() {
    let dir = workspace();
    let script = write_script(dir.path(), rate_limited_script());
    let assert = command("agent-tutorial", dir.path())
        .args([
            "run",
            "--chapter",
            "11",
            "--prompt",
            "hi",
            "--retry-base-ms",
            "0",
        ])
        .arg("--script")
        .arg(&script)
        .assert()
        .code(0);
    let output = assert.get_output();
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "[memory] selected: (none)\n\
         retrying in 0.0 s (429, attempt 2 of 6)\n\
         [memory] extracted: (none)\n"
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "done\n");
}

#[test]
fn chapter_10_fails_at_once_on_the_same_429() {
    let dir = workspace();
    let script = write_script(dir.path(), rate_limited_script());
    command("agent-tutorial", dir.path())
        .args(["run", "--chapter", "10", "--prompt", "hi"])
        .arg("--script")
        .arg(&script)
        .assert()
        .code(1)
        .stdout("")
        .stderr(
            "[memory] selected: (none)\n\
             error: rate limited by the model server (HTTP 429): slow down\n",
        );
}

#[test]
fn chapter_11_needs_a_fallback_model_like_the_other_settings() {
    let dir = workspace();
    let assert = command("agent-tutorial", dir.path())
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_MODEL", "m")
        .args(["run", "--chapter", "11", "--prompt", "hi"])
        .assert()
        .code(2)
        .stdout("");
    let stderr = stderr_of(assert);
    assert_eq!(
        stderr.lines().take(2).collect::<Vec<_>>(),
        [
            "error: missing model configuration: OPENAI_FALLBACK_MODEL.",
            "Set it in the environment (for example `export OPENAI_FALLBACK_MODEL=...`) or in a \
             `.env` file in the working directory, or pass the matching flag (--model, --base-url, \
             --fallback-model).",
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_overloads_send_the_next_request_to_the_fallback_model() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(body_partial_json(json!({"model": "main-model"})))
        .respond_with(ResponseTemplate::new(529).set_body_string("overloaded"))
        .mount(&server)
        .await;
    // The fallback answers the turn and memory extraction alike.
    Mock::given(method("POST"))
        .and(body_partial_json(json!({"model": "small-model"})))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "c", "object": "chat.completion", "created": 1, "model": "small-model",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "[]"}}]
        })))
        .mount(&server)
        .await;
    let dir = workspace();
    let uri = server.uri();
    let root = dir.path().to_path_buf();
    let assert = tokio::task::spawn_blocking(move || {
        command("agent-tutorial", &root)
            .env("OPENAI_API_KEY", "sk-test")
            .env("OPENAI_MODEL", "main-model")
            .env("OPENAI_FALLBACK_MODEL", "small-model")
            .env("OPENAI_BASE_URL", format!("{uri}/v1"))
            .args([
                "run",
                "--chapter",
                "11",
                "--prompt",
                "hi",
                "--retry-base-ms",
                "0",
            ])
            .assert()
    })
    .await
    .unwrap();
    let models: Vec<String> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice::<serde_json::Value>(&r.body).unwrap()["model"].to_string())
        .collect();
    assert_eq!(
        models,
        [
            "main-model",
            "main-model",
            "main-model",
            "small-model",
            "small-model"
        ]
        .map(|m| format!("\"{m}\""))
    );
    let output = assert.code(0).get_output().clone();
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "[memory] selected: (none)\n\
         retrying in 0.0 s (529, attempt 2 of 6)\n\
         retrying in 0.0 s (529, attempt 3 of 6)\n\
         switching to the fallback model small-model after 3 overloaded answers\n\
         [memory] extracted: (none)\n"
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "[]\n");
}

/// Three tool rounds of two calls each, then "prompt too long" once, the answer, extraction.
fn overflow_script() -> Vec<ScriptStep> {
    let mut steps: Vec<ScriptStep> = (0..3)
        .map(|i| {
            ScriptStep::Reply(tool_round(vec![
                call(&format!("a{i}"), "glob", json!({"pattern": "*"})),
                call(&format!("b{i}"), "read_file", json!({"path": "notes.txt"})),
            ]))
        })
        .collect();
    steps.push(ScriptStep::Fail(ModelError::PromptTooLong {
        message: "context length exceeded".into(),
    }));
    steps.push(ScriptStep::Reply(ModelReply::text("after one compaction")));
    steps.push(ScriptStep::Reply(ModelReply::text("[]")));
    steps
}

#[tokio::test]
async fn prompt_too_long_compacts_once_retries_once_and_keeps_pairing() {
    let dir = workspace();
    let model = Arc::new(ScriptedModel::new(overflow_script()).recording(Recording::Requests));
    let sink = Arc::new(CollectingSink::new());
    let mut deps = AgentDeps::new(model.clone(), Workspace::new(dir.path()).unwrap());
    deps.events = sink.clone();
    let mut agent = build_agent(Profile::for_chapter(11).unwrap(), deps).unwrap();
    let outcome = agent.run_turn("go").await.unwrap();
    assert_eq!(outcome.final_text, "after one compaction");
    model.finish().unwrap();

    let requests = model.requests();
    // 3 tool rounds, the refused request, its one retry, then memory extraction.
    assert_eq!(requests.len(), 6);
    assert_all_paired(&requests);
    // The retry keeps the system prompt, the first user message, a marker and the newest two
    // groups whole: every call still next to both of its results.
    let roles: Vec<&str> = requests[4].messages.iter().map(|m| m.role()).collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "system",
            "assistant",
            "tool",
            "tool",
            "assistant",
            "tool",
            "tool"
        ]
    );
    // The refused request: system, user, three rounds of three, and the plan reminder.
    assert_eq!(requests[3].messages.len(), 12);
    let recoveries: Vec<RecoveryAction> = sink
        .events()
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::Recovery(action) => Some(action),
            _ => None,
        })
        .collect();
    assert_eq!(recoveries, [RecoveryAction::PromptTooLong]);
    // The stored history is canonical: nothing of the compaction or the retry is in it.
    let stored = agent
        .history()
        .iter()
        .filter(|m| matches!(***m, Message::Tool { .. }));
    assert_eq!(stored.count(), 6);
}

#[tokio::test]
async fn a_second_overflow_on_the_retry_is_a_clear_error() {
    let dir = workspace();
    let mut steps = overflow_script();
    steps.truncate(4);
    steps.push(ScriptStep::Fail(ModelError::PromptTooLong {
        message: "still too long".into(),
    }));
    let model = Arc::new(ScriptedModel::new(steps));
    let deps = AgentDeps::new(model.clone(), Workspace::new(dir.path()).unwrap());
    let mut agent = build_agent(Profile::for_chapter(11).unwrap(), deps).unwrap();
    let err = agent.run_turn("go").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "the prompt is too long for the model: still too long"
    );
    model.finish().unwrap();
}
