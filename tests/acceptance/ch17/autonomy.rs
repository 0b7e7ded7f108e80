//! Idle teammates take the board's ready tasks.

use std::sync::Arc;
use std::time::Duration;

use agent_board::{BoardConfig, FirstOpen, Millis, NewTask, SqliteBoard, TaskBoard, TaskId};
use agent_core::{
    AgentEvent, AgentId, EventEnvelope, ModelClient, ModelError, ModelReply, ModelRequest,
};
use agent_harness::board_seat::BoardSeat;
use agent_harness::session::{Interrupts, Mode, Op, Session, SessionEvent};
use agent_harness::team_runtime::{
    AutonomyConfig, SHUTDOWN_DEADLINE, SessionTeam, TeamSetup, attach,
};
use agent_policy::StaticApproval;
use agent_team::TeammateStatus;
use agent_tools::Workspace;
use async_trait::async_trait;
use serde_json::json;

use super::START;
use crate::support::{call, tool_round, workspace};

/// A board clock one millisecond further at every reading: every claim and completion has
/// its own instant, so "claimed after its dependencies completed" is a comparison.
#[derive(Debug, Default)]
struct TickClock(std::sync::atomic::AtomicI64);

impl agent_workspace::Clock for TickClock {
    /// The board reads only the wall time; waits are tokio's.
    fn now(&self) -> tokio::time::Instant {
        tokio::time::Instant::now()
    }

    fn wall(&self) -> std::time::SystemTime {
        Millis(START.0 + self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst)).into()
    }

    fn sleep_until(&self, deadline: tokio::time::Instant) -> agent_workspace::Sleep {
        Box::pin(tokio::time::sleep_until(deadline))
    }
}

/// A model that answers from what it was sent, whoever asks and in whatever order: the
/// teammates' share of the tasks depends on who is idle first, so no script could say in
/// advance which of them completes which task (or with which token).
pub(crate) struct Responder(pub(crate) fn(&ModelRequest) -> ModelReply);

#[async_trait]
impl ModelClient for Responder {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        Ok((self.0)(request))
    }
}

fn last_text(request: &ModelRequest) -> (&'static str, String) {
    let last = request.messages.last().unwrap();
    let role = match last.as_ref() {
        agent_core::Message::User { .. } => "user",
        agent_core::Message::Tool { .. } => "tool",
        _ => "other",
    };
    (role, last.text().to_string())
}

/// The value of attribute `name` in the first line of `text`.
pub(crate) fn attribute(text: &str, name: &str) -> String {
    let line = text.lines().next().unwrap();
    let (_, rest) = line.split_once(&format!(" {name}=\"")).unwrap();
    rest.split_once('"').unwrap().0.to_string()
}

/// A teammate: a board task is completed with its token; anything else is acknowledged.
fn worker(request: &ModelRequest) -> ModelReply {
    match last_text(request) {
        ("user", text) if text.starts_with("<board-task ") => tool_round(vec![call(
            "done",
            "complete_task",
            json!({
                "task_id": attribute(&text, "id").parse::<i64>().unwrap(),
                "claim_token": attribute(&text, "claim_token"),
                "result": format!("done #{}", attribute(&text, "id")),
            }),
        )]),
        ("user", text) if text.starts_with("Existing memories:") => ModelReply::text("[]"),
        ("tool", text) if text.starts_with("Error") => panic!("a board call failed: {text}"),
        _ => ModelReply::text("Ready."),
    }
}

/// The teammates the lead starts: five, as the chapter's issue asks of this run.
const MATES: [&str; 5] = ["ann", "ben", "cat", "dan", "eve"];

/// The lead: starts the teammates, then acknowledges what they report.
fn lead(request: &ModelRequest) -> ModelReply {
    match last_text(request) {
        ("user", text) if text == "Get the board done." => tool_round(
            MATES
                .into_iter()
                .map(|name| {
                    call(
                        name,
                        "spawn_teammate",
                        json!({"name": name, "role": "takes board tasks", "prompt": "Stand by for board tasks."}),
                    )
                })
                .collect(),
        ),
        ("user", text) if text.starts_with("Existing memories:") => ModelReply::text("[]"),
        _ => ModelReply::text("Noted."),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_teammates_take_every_task_once_and_none_before_what_it_waits_for() {
    let dir = workspace();
    let workspace = Workspace::new(dir.path()).unwrap();
    let board = tick_board(&workspace);
    // 1, 2 and 7 first; 3 after 1; 4 after 1 and 2; 5 after 3 and 4; 6 after 5; 8 after 6
    // and 7; 9 after 2; 10 after 8 and 9.
    let waits: [&[i64]; 10] = [
        &[],
        &[],
        &[1],
        &[1, 2],
        &[3, 4],
        &[5],
        &[],
        &[6, 7],
        &[2],
        &[8, 9],
    ];
    for (i, after) in waits.iter().enumerate() {
        board
            .create(NewTask {
                subject: format!("step {}", i + 1),
                description: String::new(),
                blocked_by: after.iter().map(|id| TaskId(*id)).collect(),
            })
            .await
            .unwrap();
    }
    let (mut session, team) = autonomous_team(&workspace, &board, lead, worker);
    let mut events = session.take_events().unwrap();
    session.handle().submit(Op::Prompt {
        agent: AgentId::lead(),
        text: "Get the board done.".into(),
    });
    session.run(Mode::OneShot).await;

    // Every task completed once, by one of the teammates, with its own result.
    let mates = MATES;
    let mut history = String::new();
    let mut ended_at = std::collections::BTreeMap::new();
    for task in board.list().await.unwrap() {
        let claims = board.history(task.id).await.unwrap();
        let [claim] = claims.as_slice() else {
            panic!("task {} was claimed {} times", task.id, claims.len());
        };
        assert!(mates.contains(&claim.owner.as_str()), "{claim:?}");
        let (end, at) = claim.ended.unwrap();
        // None started before what it waits for was completed.
        for before in &task.blocked_by {
            assert!(ended_at[before] < claim.claimed_at, "{task:?} {claim:?}");
        }
        ended_at.insert(task.id, at);
        history.push_str(&format!(
            "{} {} [{}] after {:?}: claimed by a teammate, {end}, result {:?}\n",
            task.id,
            task.subject,
            task.status,
            task.blocked_by.iter().map(|b| b.0).collect::<Vec<_>>(),
            task.result.as_deref().unwrap_or_default(),
        ));
    }
    assert_eq!(
        history,
        "#1 step 1 [completed] after []: claimed by a teammate, completed, result \"done #1\"
#2 step 2 [completed] after []: claimed by a teammate, completed, result \"done #2\"
#3 step 3 [completed] after [1]: claimed by a teammate, completed, result \"done #3\"
#4 step 4 [completed] after [1, 2]: claimed by a teammate, completed, result \"done #4\"
#5 step 5 [completed] after [3, 4]: claimed by a teammate, completed, result \"done #5\"
#6 step 6 [completed] after [5]: claimed by a teammate, completed, result \"done #6\"
#7 step 7 [completed] after []: claimed by a teammate, completed, result \"done #7\"
#8 step 8 [completed] after [6, 7]: claimed by a teammate, completed, result \"done #8\"
#9 step 9 [completed] after [2]: claimed by a teammate, completed, result \"done #9\"
#10 step 10 [completed] after [8, 9]: claimed by a teammate, completed, result \"done #10\"
"
    );
    // The lead's screen saw each claim and each completion, by a teammate.
    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let SessionEvent::Agent(EventEnvelope {
            agent,
            event: AgentEvent::TaskChanged { id, status, .. },
            ..
        }) = event
        {
            assert!(status.ends_with(&format!(" by {agent}")), "{status}");
            assert!(mates.contains(&agent.as_str()), "{agent}");
            seen.push(format!("#{id} {}", status.split(" by ").next().unwrap()));
        }
    }
    seen.sort();
    let mut every: Vec<String> = (1..=10)
        .flat_map(|id| [format!("#{id} claimed"), format!("#{id} completed")])
        .collect();
    every.sort();
    assert_eq!(seen, every);
    // Each teammate told the lead twice: its answer to the first message, and once that it
    // found no open task (task turns send nothing: the lead saw the board's events).
    assert_eq!(
        team.mailbox().counts(&AgentId::lead()).unwrap(),
        agent_team::Counts {
            done: 2 * MATES.len(),
            ..agent_team::Counts::default()
        }
    );
    // The session's end shut every teammate down.
    let records: Vec<(String, TeammateStatus)> = team
        .records()
        .into_iter()
        .map(|r| (r.name.to_string(), r.status))
        .collect();
    assert_eq!(
        records,
        mates
            .map(|m| (m.to_string(), TeammateStatus::ShutDown))
            .to_vec()
    );
}

/// A chapter 17 session on `board` whose lead answers with `lead` and whose teammates with
/// `worker`, polling every 20 ms with an idle limit of 100 ms. Short waits, so the run ends
/// soon after the last task; no outcome depends on them (a teammate waits for open tasks
/// however long they take; the idle limit counts only while nothing is open).
fn autonomous_team(
    workspace: &Workspace,
    board: &Arc<SqliteBoard>,
    lead: fn(&ModelRequest) -> ModelReply,
    worker: fn(&ModelRequest) -> ModelReply,
) -> (Session, Arc<SessionTeam>) {
    let seat = BoardSeat::new(Arc::clone(board) as Arc<dyn TaskBoard>);
    let mut session = Session::new(Interrupts::CancelTurn);
    let profile = agent_tutorial::Profile::for_chapter(17).unwrap();
    let mut deps = agent_tutorial::AgentDeps::new(Arc::new(Responder(lead)), workspace.clone());
    deps.events = session.sink(&AgentId::lead());
    deps.approval = Some(Arc::new(StaticApproval::ApproveAll));
    deps.board = Some(seat);
    let ws = workspace.clone();
    let setup = TeamSetup {
        workspace: workspace.clone(),
        clock: Arc::new(agent_cron::SystemClock),
        shutdown_deadline: SHUTDOWN_DEADLINE,
        teammate_deps: Arc::new(move |name, joiner| {
            let mut deps = agent_tutorial::AgentDeps::new(Arc::new(Responder(worker)), ws.clone());
            deps.events = joiner.sink(name);
            deps.approval = Some(Arc::new(StaticApproval::ApproveAll));
            Ok(deps)
        }),
    };
    let spec = agent_tutorial::agents::spec(profile).unwrap();
    let team = attach(&mut session, &spec, &mut deps, setup)
        .unwrap()
        .unwrap();
    team.set_autonomy(Some(AutonomyConfig {
        poll: Duration::from_millis(20),
        idle_limit: Duration::from_millis(100),
    }));
    session.add(
        AgentId::lead(),
        agent_tutorial::agents::build_agent(profile, deps).unwrap(),
    );
    (session, team)
}

/// A lead that starts one teammate whose changes wait for an approved plan.
fn gated_lead(request: &ModelRequest) -> ModelReply {
    match last_text(request) {
        ("user", text) if text == "Get the board done." => tool_round(vec![call(
            "ann",
            "spawn_teammate",
            json!({"name": "ann", "role": "takes board tasks", "prompt": "Stand by.", "require_plan": true}),
        )]),
        ("user", text) if text.starts_with("Existing memories:") => ModelReply::text("[]"),
        _ => ModelReply::text("Noted."),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_teammate_whose_plan_is_not_approved_claims_nothing() {
    let dir = workspace();
    let workspace = Workspace::new(dir.path()).unwrap();
    let board = tick_board(&workspace);
    board
        .create(NewTask {
            subject: "step 1".into(),
            ..NewTask::default()
        })
        .await
        .unwrap();
    let (mut session, team) = autonomous_team(&workspace, &board, gated_lead, worker);
    session.handle().submit(Op::Prompt {
        agent: AgentId::lead(),
        text: "Get the board done.".into(),
    });
    session.run(Mode::OneShot).await;
    // Its first message answered ("Ready.", to the lead), it never polled: the task is
    // untouched and the session ended with nothing waiting.
    let task = board.get(TaskId(1)).await.unwrap();
    assert_eq!(
        (task.status, task.holder),
        (agent_board::Status::Pending, None)
    );
    assert_eq!(board.history(TaskId(1)).await.unwrap(), []);
    assert_eq!(
        team.mailbox().counts(&AgentId::lead()).unwrap(),
        agent_team::Counts {
            done: 1,
            ..agent_team::Counts::default()
        }
    );
}

/// The workspace's SQLite board on a [`TickClock`].
fn tick_board(workspace: &Workspace) -> Arc<SqliteBoard> {
    Arc::new(
        SqliteBoard::open_with_clock(
            workspace,
            BoardConfig::default(),
            Arc::new(TickClock::default()),
            FirstOpen::ImportChapter12,
        )
        .unwrap(),
    )
}

/// A lead that starts one teammate.
fn one_mate_lead(request: &ModelRequest) -> ModelReply {
    match last_text(request) {
        ("user", text) if text == "Get the board done." => tool_round(vec![call(
            "ann",
            "spawn_teammate",
            json!({"name": "ann", "role": "takes board tasks", "prompt": "Stand by."}),
        )]),
        ("user", text) if text.starts_with("Existing memories:") => ModelReply::text("[]"),
        _ => ModelReply::text("Noted."),
    }
}

/// A teammate that never completes what it is given.
fn quitter(request: &ModelRequest) -> ModelReply {
    match last_text(request) {
        ("user", text) if text.starts_with("<board-task ") => ModelReply::text("I could not."),
        _ => ModelReply::text("Ready."),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_turn_that_ends_without_completing_gives_the_task_back_once() {
    let dir = workspace();
    let workspace = Workspace::new(dir.path()).unwrap();
    let board = tick_board(&workspace);
    board
        .create(NewTask {
            subject: "step 1".into(),
            ..NewTask::default()
        })
        .await
        .unwrap();
    let (mut session, team) = autonomous_team(&workspace, &board, one_mate_lead, quitter);
    session.handle().submit(Op::Prompt {
        agent: AgentId::lead(),
        text: "Get the board done.".into(),
    });
    session.run(Mode::OneShot).await;
    // Claimed once, given back with the reason, and not claimed again: the teammate waits
    // for a message (the lead was told), so a model that never completes cannot loop.
    let history: Vec<(String, Option<agent_board::ClaimEnd>, Option<String>)> = board
        .history(TaskId(1))
        .await
        .unwrap()
        .into_iter()
        .map(|c| (c.owner.to_string(), c.ended.map(|(end, _)| end), c.reason))
        .collect();
    assert_eq!(
        history,
        [(
            "ann".to_string(),
            Some(agent_board::ClaimEnd::Released),
            Some("the turn ended without complete_task".to_string())
        )]
    );
    let task = board.get(TaskId(1)).await.unwrap();
    assert_eq!(
        (task.status, task.holder),
        (agent_board::Status::Pending, None)
    );
    assert_eq!(
        team.mailbox().counts(&AgentId::lead()).unwrap(),
        agent_team::Counts {
            done: 2,
            ..agent_team::Counts::default()
        }
    );
}

/// A lead that starts one teammate and, when told that the teammate found nothing, puts one
/// task on the board (once: the history says whether it did).
fn late_task_lead(request: &ModelRequest) -> ModelReply {
    let created = request.messages.iter().any(|m| match m.as_ref() {
        agent_core::Message::Assistant { tool_calls, .. } => {
            tool_calls.iter().any(|c| c.name == "create_task")
        }
        _ => false,
    });
    match last_text(request) {
        ("user", text) if text.starts_with("Existing memories:") => ModelReply::text("[]"),
        ("user", text) if text.contains("idle: no open task") && !created => {
            tool_round(vec![call(
                "late",
                "create_task",
                json!({"subject": "late work"}),
            )])
        }
        _ => one_mate_lead(request),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resting_teammate_takes_a_task_created_after_it_found_nothing() {
    let dir = workspace();
    let workspace = Workspace::new(dir.path()).unwrap();
    let board = tick_board(&workspace);
    let (mut session, team) = autonomous_team(&workspace, &board, late_task_lead, worker);
    session.handle().submit(Op::Prompt {
        agent: AgentId::lead(),
        text: "Get the board done.".into(),
    });
    session.run(Mode::OneShot).await;
    // ann found nothing, said so and rested; the task the lead created then woke it.
    let task = board.get(TaskId(1)).await.unwrap();
    assert_eq!(
        (task.subject.as_str(), task.status, task.result.as_deref()),
        ("late work", agent_board::Status::Completed, Some("done #1"))
    );
    let owners: Vec<String> = board
        .history(TaskId(1))
        .await
        .unwrap()
        .iter()
        .map(|c| c.owner.to_string())
        .collect();
    assert_eq!(owners, ["ann"]);
    // "Ready.", the first "no open task", and the second after the late task was done.
    assert_eq!(
        team.mailbox().counts(&AgentId::lead()).unwrap(),
        agent_team::Counts {
            done: 3,
            ..agent_team::Counts::default()
        }
    );
}
