//! The session's close (chapter 20): once every running turn is stopped, the resources the
//! agents used are closed in reverse order of what depends on what — the MCP servers (the
//! newest, the lead's only), the teammates (their records and held mail), the cron schedules,
//! the background jobs (the oldest; a teammate's or a schedule's turn may have started one).
//! A resource that fails to close does not stop the ones after it: the failure is kept in the
//! [`CloseReport`] (and logged), and the session goes on to the next.

use std::sync::Arc;

use agent_jobs::{JobManager, KillReason};

use super::TurnSource;
use crate::mcp_hub::McpHub;

/// A kind of resource the session's end closes, in the order it closes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    /// The lead's MCP servers (chapter 19): every process of theirs ended and reaped.
    McpServers,
    /// The teammates (chapter 15): recorded as shut down, what a cut-short turn held put back.
    Teammates,
    /// The schedules (chapter 14): the timer stops; durable schedules stay on disk for the
    /// next session, session-only ones end here.
    Cron,
    /// The background jobs (chapter 13): each one's process tree killed, its record closed.
    BackgroundJobs,
}

/// A resource that did not close cleanly.
#[derive(Debug)]
pub struct CloseFailure {
    /// Which one.
    pub resource: Resource,
    /// What went wrong.
    pub error: Box<dyn std::error::Error + Send + Sync>,
}

/// What the session's end closed, in order, and what failed on the way.
#[derive(Debug, Default)]
pub struct CloseReport {
    /// Every resource the end went through, in the order it closed them (a failed one too).
    pub closed: Vec<Resource>,
    /// The ones that failed to close, in the same order.
    pub failures: Vec<CloseFailure>,
}

/// What the end closes.
pub(super) struct Resources<'a> {
    pub(super) mcp: &'a [Arc<McpHub>],
    pub(super) source: Option<&'a Arc<dyn TurnSource>>,
    pub(super) jobs: &'a [Arc<JobManager>],
}

/// Closes `resources` in [`Resource`] order, going on past every failure.
pub(super) async fn close(resources: Resources<'_>) -> CloseReport {
    let mut report = CloseReport::default();
    report.closed.push(Resource::McpServers);
    for hub in resources.mcp {
        for failure in hub.close().await {
            report.failures.push(CloseFailure {
                resource: Resource::McpServers,
                error: Box::new(failure),
            });
        }
    }
    report.closed.push(Resource::Teammates);
    if let Some(source) = resources.source {
        source.ended();
    }
    // Nothing of cron runs between two fires: the loop that slept until the next one has
    // stopped, and the durable file is written whole at every change.
    report.closed.push(Resource::Cron);
    report.closed.push(Resource::BackgroundJobs);
    for jobs in resources.jobs {
        jobs.kill_all(KillReason::SessionEnded);
    }
    for failure in &report.failures {
        tracing::warn!(resource = ?failure.resource, "did not close: {}", failure.error);
    }
    report
}
