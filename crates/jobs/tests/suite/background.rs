//! `bash{command, run_in_background: true}`: the tools crate's `bash` handing a command to
//! this crate's [`JobManager`] through the `BackgroundJobs` trait.

use std::sync::Arc;

use agent_core::ToolRegistry;
use agent_jobs::tools::add_job_tools;
use agent_jobs::{JobConfig, JobManager, JobStatus};
use agent_tools::{Background, BashConfig, Workspace, add_bash_with};
use serde_json::json;

async fn call(registry: &ToolRegistry, arguments: serde_json::Value) -> String {
    agent_test_support::call_tool(registry, "bash", arguments).await
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
    );
    let registry = add_job_tools(registry, &jobs).build().unwrap();
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

/// One reply cannot start hundreds of jobs: the 17th running job is refused with a tool error
/// that says what to do, nothing is recorded for it, and a slot that frees up can be used.
#[tokio::test]
async fn at_most_sixteen_jobs_run_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let jobs = Arc::new(JobManager::new(ws.clone(), JobConfig::default()));
    let registry = add_bash_with(
        ToolRegistry::builder(),
        &ws,
        BashConfig::default(),
        Background::On(jobs.clone()),
    );
    let registry = add_job_tools(registry, &jobs).build().unwrap();
    let start = |command: &'static str| {
        call(
            &registry,
            json!({"command": command, "run_in_background": true}),
        )
    };
    for _ in 0..agent_jobs::MAX_RUNNING_JOBS {
        start("sleep 30").await;
    }
    assert_eq!(
        start("echo one too many").await,
        "Error [tool_execution_error]: 16 background jobs are running, the most one session may run; wait for one to end or stop one with job_kill"
    );
    assert!(!dir.path().join(".agent_tutorial/jobs/17.json").exists());
    jobs.kill_all(agent_jobs::KillReason::Requested);
    for id in 1..=16 {
        jobs.wait(id).await.unwrap();
    }
    assert_eq!(
        start("echo room again").await,
        "started job 17 in the background; you will be told when it finishes; job_output{\"id\": 17} shows its output so far"
    );
}
