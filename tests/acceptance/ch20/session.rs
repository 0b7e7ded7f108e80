//! A whole team session of chapter 20, scripted end to end: the lead plans two board tasks,
//! each with its worktree, starts a background job and a schedule, and two gated teammates;
//! each teammate's plan is approved before it claims its task and writes in its worktree; the
//! job's notice and the schedule's run reach the lead, which reports through an MCP tool of the
//! test server. Every agent's requests are compared whole (snapshots) and no process of the
//! session is left at the end.
//!
//! The agents run at the same time; the test makes their order one: every model call waits in
//! a [`Conductor`] until the test answers it, and the test answers them in the order of the
//! story, each after the call before it has been asked — so every request holds exactly what
//! the story says, whatever the machine's speed.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_core::{AgentEvent, AgentId, ModelClient, ModelError, ModelReply, ModelRequest};
use agent_cron::ManualClock;
use agent_harness::session::{EndReason, Mode, Op, Resource, SessionEvent};
use serde_json::json;
use tokio::sync::{mpsc, oneshot};

use super::{hub, repository};
use crate::support::{call, tool_round, workspace};
use crate::team_support::{builder, stable_transcript};

/// One model call waiting for its answer: who asks, and what.
struct Asked {
    agent: String,
    request: ModelRequest,
    answer: oneshot::Sender<ModelReply>,
}

/// Every agent's model: a call is sent to the test and waits for its reply.
struct Conductor(mpsc::UnboundedSender<Asked>);

/// Who sent `request`: the `teammate` of its prompt context, else the lead.
fn asker(request: &ModelRequest) -> String {
    let system = request.messages.first().map(|m| m.text()).unwrap_or("");
    match system.split("\"teammate\":\"").nth(1) {
        Some(rest) => rest.split('"').next().unwrap_or_default().to_string(),
        None => "lead".to_string(),
    }
}

#[async_trait::async_trait]
impl ModelClient for Conductor {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        let (answer, reply) = oneshot::channel();
        let asked = Asked {
            agent: asker(request),
            request: request.clone(),
            answer,
        };
        if self.0.send(asked).is_err() {
            return std::future::pending().await;
        }
        match reply.await {
            Ok(reply) => Ok(reply),
            Err(_) => std::future::pending().await,
        }
    }
}

/// The test's side: takes the calls as they come, answers them in the story's order, and
/// keeps every request by agent.
struct Stage {
    calls: mpsc::UnboundedReceiver<Asked>,
    waiting: VecDeque<Asked>,
    requests: std::collections::BTreeMap<String, Vec<ModelRequest>>,
}

impl Stage {
    /// Waits for `agent`'s next call (others wait their turn) and answers it with `reply`.
    async fn answer(&mut self, agent: &str, reply: ModelReply) {
        let asked = loop {
            if let Some(i) = self.waiting.iter().position(|a| a.agent == agent) {
                break self.waiting.remove(i).unwrap();
            }
            let next = tokio::time::timeout(Duration::from_secs(60), self.calls.recv())
                .await
                .unwrap_or_else(|_| {
                    panic!(
                        "{agent} never asked; waiting: {:?}; answered so far: {:?}",
                        self.who(),
                        self.requests
                            .iter()
                            .map(|(a, r)| format!(
                                "{a}: {} requests, last ends {:?}",
                                r.len(),
                                r.last().and_then(|r| r.messages.last()).map(|m| m
                                    .text()
                                    .chars()
                                    .take(120)
                                    .collect::<String>())
                            ))
                            .collect::<Vec<_>>()
                    )
                })
                .unwrap();
            self.waiting.push_back(next);
        };
        self.requests
            .entry(agent.to_string())
            .or_default()
            .push(asked.request);
        asked.answer.send(reply).unwrap();
    }

    fn who(&self) -> Vec<String> {
        self.waiting.iter().map(|a| a.agent.clone()).collect()
    }

    /// The last message of `agent`'s last request.
    fn last(&self, agent: &str) -> String {
        let request = self.requests[agent].last().unwrap();
        request.messages.last().unwrap().text().to_string()
    }
}

/// The processes whose working folder is in `dir` (see `close.rs`).
fn processes_in(dir: &Path) -> usize {
    super::close::processes_in(dir).len()
}

/// A gated teammate's first turn: its plan, submitted.
async fn plan(stage: &mut Stage, name: &str, task: u64) {
    stage
        .answer(
            name,
            tool_round(vec![call(
                "p1",
                "submit_plan",
                json!({"plan": format!("Claim task #{task}, write {name}.txt in its worktree, complete it.")}),
            )]),
        )
        .await;
    stage
        .answer(name, ModelReply::text("Plan submitted."))
        .await;
}

/// A teammate's turn once its plan is approved: its claim, its file (in the task's worktree)
/// and the task's completion.
async fn teammate_work(stage: &mut Stage, name: &str, task: u64) {
    stage
        .answer(
            name,
            tool_round(vec![call("w1", "claim_task", json!({"task_id": task}))]),
        )
        .await;
    stage
        .answer(
            name,
            tool_round(vec![call(
                "w2",
                "write_file",
                json!({"path": format!("{name}.txt"), "content": format!("{name} was here\n")}),
            )]),
        )
        .await;
    stage
        .answer(
            name,
            tool_round(vec![call(
                "w3",
                "complete_task",
                json!({"task_id": task, "result": format!("{name}.txt written")}),
            )]),
        )
        .await;
    stage
        .answer(name, ModelReply::text(format!("Task #{task} is done.")))
        .await;
}

/// The lead reviews `request` (approving), then ends its turn.
async fn approve(stage: &mut Stage, request: &str) {
    stage
        .answer(
            "lead",
            tool_round(vec![call(
                "r1",
                "review_plan",
                json!({"request_id": request, "approve": true, "feedback": "Go ahead."}),
            )]),
        )
        .await;
    stage.answer("lead", ModelReply::text("Approved.")).await;
    stage.answer("lead", ModelReply::text("[]")).await;
}

/// A lead turn that only takes note.
async fn noted(stage: &mut Stage) {
    stage.answer("lead", ModelReply::text("Noted.")).await;
    stage.answer("lead", ModelReply::text("[]")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_team_session_runs_every_part_and_leaves_no_process() {
    let dir = workspace();
    let (trees, board) = repository(dir.path());
    let hub = hub(dir.path());
    let clock = Arc::new(ManualClock::new(
        "2026-03-02T08:55:00Z"
            .parse::<agent_cron::Timestamp>()
            .unwrap(),
    ));
    let (tx, calls) = mpsc::unbounded_channel();
    let model = Arc::new(Conductor(tx));
    let t = builder(20, dir.path(), vec![], vec![])
        .board(board)
        .worktrees(trees)
        .mcp(hub.clone())
        .clock(clock.clone())
        .lead_model(model.clone())
        .mate_model(model)
        .build();
    // The teammates take what the lead hands them, nothing on their own.
    t.team.set_autonomy(None);
    let mut session = t.session;
    let mut events = session.take_events().unwrap();
    let handle = session.handle();
    assert_eq!(hub.start().await.len(), 0);
    handle.submit(Op::Prompt {
        agent: AgentId::lead(),
        text: "Ship the two notes with ann and ben.".into(),
    });
    let running = tokio::spawn(async move {
        let reason = session.run(Mode::Interactive).await;
        (reason, session)
    });
    let mut stage = Stage {
        calls,
        waiting: VecDeque::new(),
        requests: Default::default(),
    };

    // The plan: two tasks, their worktrees, a job waiting for `go`, a schedule, ann.
    let spawn = |name: &str, task: u64| {
        call(
            &format!("s{task}"),
            "spawn_teammate",
            json!({"name": name, "role": "writes one note", "prompt": format!("Take task #{task} once your plan is approved."), "require_plan": true}),
        )
    };
    stage
        .answer(
            "lead",
            tool_round(vec![
                call("t1", "create_task", json!({"subject": "Write ann.txt", "description": "One line."})),
                call("t2", "create_task", json!({"subject": "Write ben.txt", "description": "One line."})),
                call("w1", "create_worktree", json!({"task_id": 1, "name": "ann-note"})),
                call("w2", "create_worktree", json!({"task_id": 2, "name": "ben-note"})),
                call(
                    "j1",
                    "bash",
                    json!({"command": "until [ -e go ]; do sleep 0.05; done; echo checks passed", "run_in_background": true}),
                ),
                call(
                    "c1",
                    "schedule_cron",
                    json!({"cron": "0 9 * * *", "prompt": "Report on the release."}),
                ),
                spawn("ann", 1),
            ]),
        )
        .await;
    stage
        .answer("lead", ModelReply::text("Ann is on task #1."))
        .await;
    stage.answer("lead", ModelReply::text("[]")).await;

    // Ann: her plan, its approval, her work; the lead notes each of her messages.
    plan(&mut stage, "ann", 1).await;
    approve(&mut stage, "req-1").await;
    noted(&mut stage).await; // "Plan submitted."
    teammate_work(&mut stage, "ann", 1).await;
    // Ann's result: the lead starts ben.
    stage
        .answer("lead", tool_round(vec![spawn("ben", 2)]))
        .await;
    stage
        .answer("lead", ModelReply::text("Ben is on task #2."))
        .await;
    stage.answer("lead", ModelReply::text("[]")).await;
    plan(&mut stage, "ben", 2).await;
    approve(&mut stage, "req-2").await;
    noted(&mut stage).await;
    teammate_work(&mut stage, "ben", 2).await;
    noted(&mut stage).await; // ben's result

    // The job ends (its notice is posted before its event is told): the notice waits for the
    // lead's next request.
    std::fs::write(dir.path().join("go"), "").unwrap();
    loop {
        if let SessionEvent::Agent(e) = events.recv().await.unwrap()
            && matches!(e.event, AgentEvent::JobFinished { .. })
        {
            break;
        }
    }

    // 09:00: the schedule fires; its turn's first request carries the job's notice; the lead
    // reports through the test server.
    clock.set(
        "2026-03-02T09:00:00Z"
            .parse::<agent_cron::Timestamp>()
            .unwrap(),
    );
    stage
        .answer(
            "lead",
            tool_round(vec![call(
                "m1",
                "mcp__srv__echo",
                json!({"text": "ann.txt and ben.txt are written; the checks passed"}),
            )]),
        )
        .await;
    let notice = stage.last("lead");
    assert_eq!(
        notice.split(" elapsed=").next(),
        Some("<job id=\"1\" status=\"exit 0\"")
    );
    stage
        .answer(
            "lead",
            ModelReply::text(
                "Released: both notes are written in their worktrees and the checks passed.",
            ),
        )
        .await;
    stage.answer("lead", ModelReply::text("[]")).await;

    handle.submit(Op::Shutdown(EndReason::Done));
    let (reason, session) = running.await.unwrap();
    assert_eq!(reason, EndReason::Done);
    assert_eq!(
        session.close_report().unwrap().closed,
        [
            Resource::McpServers,
            Resource::Teammates,
            Resource::Cron,
            Resource::BackgroundJobs
        ]
    );
    let read = |path: &str| std::fs::read_to_string(dir.path().join(path)).unwrap();
    assert_eq!(
        [
            read(".agent_tutorial/worktrees/ann-note/ann.txt"),
            read(".agent_tutorial/worktrees/ben-note/ben.txt"),
        ],
        ["ann was here\n", "ben was here\n"]
    );
    let mut left = processes_in(dir.path());
    for _ in 0..500 {
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        left = processes_in(dir.path());
    }
    assert_eq!(left, 0);
    for agent in ["lead", "ann", "ben"] {
        let text = stable_transcript(stage.requests[agent].clone(), dir.path(), stable);
        insta::assert_snapshot!(format!("ch20_the_{agent}_requests"), text);
    }
}

/// `text` with what differs between runs made stable: message ids, claim tokens, a job's
/// running time.
fn stable(text: &str) -> String {
    let text = crate::team_support::ids_out(text);
    // A job notice's `elapsed="0.1s"`.
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("elapsed=\"") {
        let (head, tail) = rest.split_at(at + "elapsed=\"".len());
        out.push_str(head);
        out.push_str("<elapsed>");
        rest = &tail[tail.find('"').unwrap()..];
    }
    out.push_str(rest);
    out
}
