//! `bash{command, run_in_background}` (chapter 13) and the schema chapters 1–12 keep.

use std::sync::Arc;

use agent_core::ToolRegistry;
use agent_jobs::{JobConfig, JobManager, JobStatus};
use agent_tools::{Background, BashConfig, Workspace, add_bash, add_bash_with, bash};
use serde_json::json;

async fn call(registry: &ToolRegistry, arguments: serde_json::Value) -> String {
    agent_test_support::call_tool(registry, "bash", arguments).await
}

#[test]
fn with_background_off_the_schema_is_chapter_ones() {
    assert_eq!(bash::spec_for(&Background::Off), bash::spec());
    assert_eq!(
        bash::spec().parameters,
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command line to run.", "minLength": 1}
            },
            "required": ["command"]
        })
    );
}

#[tokio::test]
async fn with_background_off_the_flag_is_an_unknown_field() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let registry = add_bash(ToolRegistry::builder(), &ws, BashConfig::default())
        .build()
        .unwrap();
    assert_eq!(
        call(
            &registry,
            json!({"command": "touch ran", "run_in_background": true})
        )
        .await,
        "Error [invalid_arguments]: $: unknown field `run_in_background`"
    );
    assert!(!dir.path().join("ran").exists());
}

#[tokio::test]
async fn with_background_on_a_job_starts_and_the_call_returns_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let jobs = Arc::new(JobManager::new(ws.clone(), JobConfig::default()));
    let registry = add_bash_with(
        ToolRegistry::builder(),
        &ws,
        BashConfig::default(),
        Background::On(jobs.clone()),
    )
    .build()
    .unwrap();
    assert_eq!(registry.names(), ["bash", "job_output", "job_kill"]);
    assert_eq!(
        call(
            &registry,
            json!({"command": "echo hi", "run_in_background": true})
        )
        .await,
        "started job 1 in the background; you will be told when it finishes; job_output{\"id\": 1} shows its output so far"
    );
    assert_eq!(jobs.wait(1).await.unwrap(), JobStatus::Exited { code: 0 });
    // Without the flag it is the ordinary, waited-for bash.
    assert_eq!(
        call(
            &registry,
            json!({"command": "echo hi", "run_in_background": false})
        )
        .await,
        "hi\n"
    );
}
