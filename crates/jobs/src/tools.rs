//! `job_output{id, tail?}` and `job_kill{id}`: the model's view of its background jobs.

use std::sync::Arc;

use agent_core::tool::parse_arguments;
use agent_core::{
    CallSummary, PreparedCall, ToolEffect, ToolFailure, ToolHandler, ToolRegistryBuilder, ToolSpec,
};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::JobManager;

/// Lines `job_output` shows when `tail` is not given.
pub const DEFAULT_TAIL: usize = 20;
/// The most lines `job_output` shows.
pub const MAX_TAIL: usize = 1000;

/// `job_output` as the model sees it.
pub fn output_spec() -> ToolSpec {
    ToolSpec::new(
        JobOutput::NAME,
        "Show a background job's status and the last lines of its output so far.",
        ToolEffect::Read,
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "integer", "description": "The job id `bash` returned.", "minimum": 1},
                "tail": {"type": "integer", "description": format!("How many of the last lines to show (default {DEFAULT_TAIL})."), "minimum": 1, "maximum": MAX_TAIL}
            },
            "required": ["id"]
        }),
    )
}

/// `job_kill` as the model sees it.
pub fn kill_spec() -> ToolSpec {
    ToolSpec::new(
        JobKill::NAME,
        "Stop a background job and every process it started.",
        // It changes only what this session itself started in the background (the command was
        // approved when it was started): the harness's own state, nothing asks.
        ToolEffect::State,
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "integer", "description": "The job id `bash` returned.", "minimum": 1}
            },
            "required": ["id"]
        }),
    )
}

/// Adds `job_output` and `job_kill` (chapter 13).
pub fn add_job_tools(builder: ToolRegistryBuilder, jobs: &Arc<JobManager>) -> ToolRegistryBuilder {
    builder
        .tool(output_spec(), Arc::new(JobOutput(jobs.clone())))
        .tool(kill_spec(), Arc::new(JobKill(jobs.clone())))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OutputArgs {
    id: u64,
    tail: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KillArgs {
    id: u64,
}

/// `job 3`, or the compact arguments if the id is somehow missing.
fn describe_job(arguments: &Value) -> CallSummary {
    match arguments.get("id").and_then(Value::as_u64) {
        Some(id) => CallSummary::text(format!("job {id}")),
        None => CallSummary::arguments(arguments),
    }
}

/// `job_output{id}`: a job's status and the last lines of its output so far.
#[derive(Debug, Clone)]
pub struct JobOutput(pub Arc<JobManager>);

impl JobOutput {
    /// The tool's name, as the model calls it.
    pub const NAME: &'static str = "job_output";
}

#[async_trait]
impl ToolHandler for JobOutput {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args: OutputArgs = parse_arguments(call)?;
        let lines = args.tail.unwrap_or(DEFAULT_TAIL).clamp(1, MAX_TAIL);
        let jobs = self.0.clone();
        // Reads a file: off the async threads.
        tokio::task::spawn_blocking(move || jobs.output(args.id, lines))
            .await
            .map_err(ToolFailure::execution)?
            .map_err(ToolFailure::from)
    }

    fn describe(&self, arguments: &Value) -> CallSummary {
        describe_job(arguments)
    }
}

/// `job_kill{id}`: ends a job with its whole process tree.
#[derive(Debug, Clone)]
pub struct JobKill(pub Arc<JobManager>);

impl JobKill {
    /// The tool's name, as the model calls it.
    pub const NAME: &'static str = "job_kill";
}

#[async_trait]
impl ToolHandler for JobKill {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args: KillArgs = parse_arguments(call)?;
        let id = args.id;
        if !self.0.status(id)?.is_running() {
            let status = self.0.status(id)?;
            return Ok(format!("job {id} had already ended: {status}"));
        }
        let status = self.0.kill(id).await?;
        Ok(format!(
            "job {id} ended: {status}; every process it started was stopped"
        ))
    }

    fn describe(&self, arguments: &Value) -> CallSummary {
        describe_job(arguments)
    }
}
