//! Chapter 1: the loop with one tool, `bash`.

use serde_json::json;

use crate::support::{assert_all_paired, call, scripted_agent, tool_round, transcript, workspace};
use agent_core::ModelReply;

#[tokio::test]
async fn the_loop_runs_bash_and_feeds_the_result_back() {
    let dir = workspace();
    let (mut agent, model) = scripted_agent(
        1,
        dir.path(),
        vec![
            tool_round(vec![call(
                "call_1",
                "bash",
                json!({"command": "echo made > out.txt; wc -l < notes.txt"}),
            )]),
            ModelReply::text("notes.txt has 2 lines."),
        ],
    );
    let outcome = agent
        .run_turn("How many lines does notes.txt have?")
        .await
        .unwrap();
    assert_eq!(outcome.final_text, "notes.txt has 2 lines.");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.txt")).unwrap(),
        "made\n"
    );
    model.finish().unwrap();
    let requests = model.requests();
    assert_all_paired(&requests);
    insta::assert_snapshot!(transcript(&requests, dir.path()));
}

#[tokio::test]
async fn chapter_1_offers_only_bash() {
    let dir = workspace();
    let (agent, _model) = scripted_agent(1, dir.path(), vec![]);
    assert_eq!(agent.tools().names(), vec!["bash"]);
}

#[tokio::test]
async fn calling_a_chapter_2_tool_in_chapter_1_is_an_unknown_tool() {
    let dir = workspace();
    let (mut agent, model) = scripted_agent(
        1,
        dir.path(),
        vec![
            tool_round(vec![call(
                "call_1",
                "read_file",
                json!({"path": "notes.txt"}),
            )]),
            ModelReply::text("I cannot read files directly."),
        ],
    );
    agent.run_turn("read notes.txt").await.unwrap();
    let requests = model.requests();
    assert_eq!(
        requests[1].messages.last().unwrap().text(),
        "Error [unknown_tool]: no tool named `read_file`; available: bash"
    );
}

#[test]
fn the_model_cannot_read_the_api_key_through_bash() {
    let dir = workspace();
    let script = crate::support::write_script(
        dir.path(),
        serde_json::json!([
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "echo \"key=[$OPENAI_API_KEY] path=${PATH:+set}\""}}]},
            {"content": "done"}
        ]),
    );
    let record = dir.path().join("requests.jsonl");
    crate::support::command("ch01", dir.path())
        // A fake key in the harness's own environment, as a developer would have it.
        .env("OPENAI_API_KEY", "sk-fake-but-secret")
        .args(["--prompt", "print the key", "--script"])
        .arg(&script)
        .arg("--record")
        .arg(&record)
        .assert()
        .success();
    let requests: Vec<agent_core::ModelRequest> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        requests[1].messages.last().unwrap().text(),
        "key=[] path=set\n"
    );
}

#[test]
fn a_final_answer_cut_at_the_token_limit_prints_a_notice() {
    let dir = workspace();
    let script = crate::support::write_script(
        dir.path(),
        serde_json::json!([
            {"content": "The answer is", "finish_reason": "length"}
        ]),
    );
    crate::support::command("ch01", dir.path())
        .args(["--prompt", "answer at length", "--script"])
        .arg(&script)
        .assert()
        .success()
        .stdout("The answer is\n")
        .stderr(
            "note: the model's answer was cut off at its token limit (finish_reason=length); raise --max-tokens\n",
        );
}
