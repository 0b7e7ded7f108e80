//! The session's close: MCP servers, teammates, cron, background jobs — in that order, every
//! process of the session gone after it.

use std::path::Path;
use std::time::Duration;

use agent_core::{AgentEvent, AgentId, Message, ModelReply, ModelRequest};
use agent_harness::session::{EndReason, Mode, Op, Resource, SessionEvent};
use agent_harness::test_util::Unscripted;
use serde_json::json;

use super::{Recorder, hub, repository};
use crate::support::{call, tool_round, workspace};
use crate::team_support::builder;

/// The processes of the session in `dir`: every live one whose working directory is in it (a
/// test's folder is its own, so no other test's process is counted; a zombie has no working
/// directory left to read).
pub(super) fn processes_in(dir: &Path) -> Vec<u32> {
    let dir = dir.canonicalize().unwrap();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(&dir))
        })
        .collect()
}

/// The lead starts a job that sleeps, a durable schedule and a teammate, then answers.
fn lead(request: &ModelRequest) -> ModelReply {
    match request.messages.last().unwrap().as_ref() {
        Message::User { content } if content == "Start everything." => tool_round(vec![
            call(
                "j1",
                "bash",
                json!({"command": "sleep 300 & wait", "run_in_background": true}),
            ),
            call(
                "s1",
                "schedule_cron",
                json!({"cron": "0 9 * * 1", "prompt": "Weekly report.", "durable": true}),
            ),
            call(
                "t1",
                "spawn_teammate",
                json!({"name": "writer", "role": "writes", "prompt": "Write."}),
            ),
        ]),
        Message::User { content } if content.starts_with("Existing memories:") => {
            ModelReply::text("[]")
        }
        _ => ModelReply::text("Everything runs."),
    }
}

/// A session with a server, a job, a schedule and a teammate mid-turn ends: the report says
/// what closed in which order with no failure, and no process of the session is left — the
/// server's, the job's shell and its `sleep` counted before, none after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_end_closes_servers_teammates_cron_then_jobs_and_leaves_no_process() {
    let dir = workspace();
    let (trees, board) = repository(dir.path());
    let hub = hub(dir.path());
    assert_eq!(hub.start().await.len(), 0);
    let lead_model = Recorder::new(lead);
    let t = builder(20, dir.path(), vec![], vec![])
        .board(board)
        .worktrees(trees)
        .mcp(hub)
        .lead_model(lead_model.clone())
        .unscripted(Unscripted::Silent)
        .build();
    let mut session = t.session;
    let mut events = session.take_events().unwrap();
    let handle = session.handle();
    handle.submit(Op::Prompt {
        agent: AgentId::lead(),
        text: "Start everything.".into(),
    });
    let running = tokio::spawn(async move {
        let reason = session.run(Mode::Interactive).await;
        (reason, session)
    });
    // The writer has asked its model (which never answers) and the lead's turn is over.
    let writer = AgentId::new("writer").unwrap();
    let (mut asked, mut answered) = (false, false);
    while !(asked && answered) {
        match events.recv().await.unwrap() {
            SessionEvent::Agent(e)
                if e.agent == writer && matches!(e.event, AgentEvent::RequestSent { .. }) =>
            {
                asked = true;
            }
            SessionEvent::TurnEnded { agent, .. } if agent.is_lead() => answered = true,
            _ => {}
        }
    }
    // The server, the job's shell and the sleep it started in the background (a bounded
    // wait for the shell to start it).
    let mut before = processes_in(dir.path()).len();
    for _ in 0..500 {
        if before >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        before = processes_in(dir.path()).len();
    }
    assert_eq!(before, 3);

    handle.submit(Op::Shutdown(EndReason::Done));
    let (reason, session) = running.await.unwrap();
    assert_eq!(reason, EndReason::Done);
    let report = session.close_report().unwrap();
    assert_eq!(
        report.closed,
        [
            Resource::McpServers,
            Resource::Teammates,
            Resource::Cron,
            Resource::BackgroundJobs
        ]
    );
    assert_eq!(report.failures.len(), 0, "{:?}", report.failures);
    // A killed process is gone once its parent reaps it: a bounded wait, nothing timed.
    let mut after = processes_in(dir.path());
    for _ in 0..500 {
        if after.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        after = processes_in(dir.path());
    }
    assert_eq!(after, Vec::<u32>::new());
}
