use std::sync::Arc;

use agent_core::{ToolCall, ToolRegistry};
use agent_jobs::JobManager;
use agent_jobs::tools::add_job_tools;
use serde_json::json;

use super::manager;

/// Runs one call the way the loop does and returns the text the model would see.
async fn call(jobs: &Arc<JobManager>, name: &str, arguments: serde_json::Value) -> String {
    let registry = add_job_tools(ToolRegistry::builder(), jobs)
        .build()
        .unwrap();
    agent_test_support::call_tool(&registry, name, arguments).await
}

#[tokio::test]
async fn job_output_shows_the_status_and_the_last_lines() {
    let (_dir, jobs) = manager();
    let id = jobs.start("seq 1 30").unwrap();
    jobs.wait(id).await.unwrap();
    let last: Vec<String> = (11..=30).map(|n| n.to_string()).collect();
    assert_eq!(
        call(&jobs, "job_output", json!({"id": 1})).await,
        format!("job 1 ended: exit 0\n{}", last.join("\n"))
    );
    assert_eq!(
        call(&jobs, "job_output", json!({"id": 1, "tail": 2})).await,
        "job 1 ended: exit 0\n29\n30"
    );
}

#[tokio::test]
async fn job_kill_stops_a_running_job_once() {
    let (_dir, jobs) = manager();
    jobs.start("sleep 300").unwrap();
    assert_eq!(
        call(&jobs, "job_output", json!({"id": 1})).await,
        "job 1 is running (4.2s)\n(no output yet)"
    );
    assert_eq!(
        call(&jobs, "job_kill", json!({"id": 1})).await,
        "job 1 ended: killed (job_kill); every process it started was stopped"
    );
    assert_eq!(
        call(&jobs, "job_kill", json!({"id": 1})).await,
        "job 1 had already ended: killed (job_kill)"
    );
    // The model asked for it and was answered: no notice follows.
    assert_eq!(
        agent_core::Inbox::take(jobs.as_ref()),
        Vec::<agent_core::Message>::new()
    );
}

#[tokio::test]
async fn bad_arguments_are_tool_errors() {
    let (_dir, jobs) = manager();
    let results = [
        call(&jobs, "job_output", json!({"id": "one"})).await,
        call(&jobs, "job_output", json!({"id": 1, "tail": 0})).await,
        call(&jobs, "job_kill", json!({"id": 7})).await,
        call(&jobs, "job_kill", json!({"id": 1, "signal": 9})).await,
    ];
    assert_eq!(
        results,
        [
            "Error [invalid_arguments]: $.id: expected integer, got string",
            "Error [invalid_arguments]: $.tail: must be >= 1",
            "Error [invalid_arguments]: there is no job 7 in this session; it has started none",
            "Error [invalid_arguments]: $: unknown field `signal`",
        ]
    );
}

#[test]
fn each_tool_describes_its_call_as_the_job() {
    let (_dir, jobs) = manager();
    let registry = add_job_tools(ToolRegistry::builder(), &jobs)
        .build()
        .unwrap();
    let summaries: Vec<String> = ["job_output", "job_kill"]
        .iter()
        .map(|name| {
            let call = ToolCall {
                id: "t1".into(),
                name: (*name).into(),
                arguments: r#"{"id": 3}"#.into(),
            };
            registry.prepare(&call).unwrap().summary.text
        })
        .collect();
    assert_eq!(summaries, ["job 3", "job 3"]);
}
