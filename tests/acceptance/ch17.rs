//! Chapter 17: the task board. The six tools (create_task the lead's only), a claim renewed by
//! every request and call of its holder (a long turn keeps it), a write made after the claim
//! was lost refused with the file unchanged.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_board::{
    BoardConfig, ClaimTarget, FirstOpen, ManualClock, Millis, NewTask, SqliteBoard, Status,
    TaskBoard, TaskId,
};
use agent_core::{AgentId, ModelClient, ModelError, ModelReply, ModelRequest};
use agent_harness::board_seat::BoardSeat;
use agent_test_support::{Recording, ScriptedModel};
use agent_tools::Workspace;
use async_trait::async_trait;
use serde_json::json;

use agent_core::{AgentEvent, EventEnvelope};
use agent_harness::session::{Interrupts, Mode, Op, Session, SessionEvent};
use agent_harness::team_runtime::{AutonomyConfig, SHUTDOWN_DEADLINE, TeamSetup, attach};
use agent_policy::StaticApproval;
use agent_team::TeammateStatus;

use crate::support::{call, command, tool_results, tool_round, workspace};
use crate::team_support::team_with;

/// The board's clock starts here (2023-11-14 22:13:20 UTC).
const START: Millis = Millis(1_700_000_000_000);

/// The workspace's SQLite board on a manual clock.
fn board(dir: &Path, clock: &ManualClock) -> Arc<SqliteBoard> {
    let workspace = Workspace::new(dir).unwrap();
    Arc::new(
        SqliteBoard::open_with_clock(
            &workspace,
            BoardConfig::default(),
            Arc::new(clock.clone()),
            FirstOpen::ImportChapter12,
        )
        .unwrap(),
    )
}

#[tokio::test]
async fn p17_first_request_in_full() {
    let dir = workspace();
    let clock = ManualClock::new(START);
    let board = board(dir.path(), &clock);
    let mut t = team_with(
        17,
        dir.path(),
        vec![
            ModelReply::text("Nothing on the board."),
            ModelReply::text("[]"),
        ],
        vec![],
        Some(BoardSeat::new(board)),
    );
    t.run("What is on the board?").await;
    let root = dir.path().canonicalize().unwrap().display().to_string();
    let text = agent_tutorial::render::full(&t.requests("lead")[0]).replace(&root, "<workspace>");
    insta::assert_snapshot!(text);
}

/// A model that takes `step` of the board's time per request: a slow model.
struct SlowModel {
    inner: Arc<ScriptedModel>,
    clock: ManualClock,
    step: Vec<Duration>,
    asked: std::sync::atomic::AtomicUsize,
}

#[async_trait]
impl ModelClient for SlowModel {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        let n = self.asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let reply = self.inner.complete(request).await;
        self.clock
            .advance(self.step.get(n).copied().unwrap_or_default());
        reply
    }
}

/// The chapter's lead on `replies`, each request taking `step[n]` of the board's time.
fn slow_lead(
    dir: &Path,
    board: Arc<SqliteBoard>,
    clock: &ManualClock,
    replies: Vec<ModelReply>,
    step: Vec<Duration>,
) -> (agent_harness::Agent, Arc<ScriptedModel>) {
    let scripted = Arc::new(ScriptedModel::replies(replies).recording(Recording::Requests));
    let model = Arc::new(SlowModel {
        inner: scripted.clone(),
        clock: clock.clone(),
        step,
        asked: Default::default(),
    });
    let mut deps = agent_tutorial::AgentDeps::new(model, Workspace::new(dir).unwrap());
    deps.approval = Some(Arc::new(agent_policy::StaticApproval::ApproveAll));
    deps.board = Some(BoardSeat::new(board));
    let profile = agent_tutorial::Profile::for_chapter(17).unwrap();
    (
        agent_tutorial::agents::build_agent(profile, deps).unwrap(),
        scripted,
    )
}

fn claim_first() -> ModelReply {
    tool_round(vec![call("c1", "claim_task", json!({}))])
}

fn edit_notes(id: &str) -> ModelReply {
    tool_round(vec![call(
        id,
        "edit_file",
        json!({"path": "notes.txt", "old_text": "alpha", "new_text": "ALPHA"}),
    )])
}

/// The token `claim_task` gave, read from the board (the model would read it from the result).
async fn token_of(board: &SqliteBoard, task: TaskId) -> String {
    board
        .history(task)
        .await
        .unwrap()
        .last()
        .unwrap()
        .token
        .to_string()
}

#[tokio::test]
async fn a_turn_longer_than_the_lease_keeps_its_claim_because_each_request_and_call_renews_it() {
    let dir = workspace();
    let clock = ManualClock::new(START);
    let board = board(dir.path(), &clock);
    let task = board
        .create(NewTask {
            subject: "Capitalise alpha".into(),
            ..NewTask::default()
        })
        .await
        .unwrap();
    // Three requests of 100 s each (the last one answers), then memory extraction's side
    // call: 300 s under a 120 s lease.
    let (mut lead, model) = slow_lead(
        dir.path(),
        board.clone(),
        &clock,
        vec![
            claim_first(),
            edit_notes("c2"),
            ModelReply::text("Edited; completing next."),
            ModelReply::text("[]"),
        ],
        vec![
            Duration::from_secs(100),
            Duration::from_secs(100),
            Duration::from_secs(100),
            Duration::ZERO,
        ],
    );
    lead.run_turn("Take the next task.").await.unwrap();
    model.finish().unwrap();
    assert_eq!(clock_now(&clock), START.0 + 300_000);
    let now = board.get(task.id).await.unwrap();
    assert_eq!(now.status, Status::InProgress);
    // Claimed at t = 100 s, renewed by the second request (100 s), the edit (200 s), the
    // third request (200 s) and the side call (300 s): the lease ends 120 s after the last.
    assert_eq!(
        now.holder.map(|h| (h.owner.to_string(), h.expires_at)),
        Some(("lead".to_string(), Millis(START.0 + 420_000)))
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "ALPHA\nbeta\n"
    );
    // Another claimer finds it held.
    let bob = AgentId::new("bob").unwrap();
    let taken = board
        .claim(&bob, ClaimTarget::Task(task.id))
        .await
        .unwrap_err();
    assert_eq!(taken.to_string(), "task #1 is held by lead");
    let token = token_of(&board, task.id).await;
    board
        .complete(
            &AgentId::lead(),
            task.id,
            &agent_board::ClaimToken(token),
            "done",
        )
        .await
        .unwrap();
}

fn clock_now(clock: &ManualClock) -> i64 {
    agent_board::BoardClock::now(clock).0
}

#[tokio::test]
async fn a_write_after_the_lease_ran_out_is_refused_and_the_file_is_unchanged() {
    let dir = workspace();
    let clock = ManualClock::new(START);
    let board = board(dir.path(), &clock);
    board
        .create(NewTask {
            subject: "Capitalise alpha".into(),
            ..NewTask::default()
        })
        .await
        .unwrap();
    // The second request takes 200 s: the lease (claimed and renewed at t = 0) ends at 120 s,
    // so the edit and the command after it are made for a claim that is lost.
    let (mut lead, model) = slow_lead(
        dir.path(),
        board.clone(),
        &clock,
        vec![
            claim_first(),
            edit_notes("c2"),
            tool_round(vec![call(
                "c3",
                "bash",
                json!({"command": "echo x > notes.txt"}),
            )]),
            tool_round(vec![call("c4", "read_file", json!({"path": "notes.txt"}))]),
            ModelReply::text("Lost the task."),
        ],
        vec![
            Duration::ZERO,
            Duration::from_secs(200),
            Duration::ZERO,
            Duration::ZERO,
            Duration::ZERO,
        ],
    );
    lead.run_turn("Take the next task.").await.unwrap();
    let results = tool_results(&model.requests()[4].messages);
    assert_eq!(
        results[1..],
        [
            "c2: Error [task_lease_expired]: refused: your claim on task #1 was lost (the lease on task #1 ran out, so that claim is void; claim the task again (if it is still pending) before working on it); this call was not run and nothing was changed. Claim a task again before changing files or running commands".to_string(),
            "c3: Error [task_lease_expired]: refused: your claim on task #1 was lost (the lease on task #1 ran out, so that claim is void; claim the task again (if it is still pending) before working on it); this call was not run and nothing was changed. Claim a task again before changing files or running commands".to_string(),
            "c4: alpha\nbeta\n".to_string(),
        ]
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "alpha\nbeta\n"
    );
    // The task is pending again, for anyone.
    let task = board.get(TaskId(1)).await.unwrap();
    assert_eq!((task.status, task.holder), (Status::Pending, None));
}

/// A board clock one millisecond further at every reading: every claim and completion has
/// its own instant, so "claimed after its dependencies completed" is a comparison.
#[derive(Debug, Default)]
struct TickClock(std::sync::atomic::AtomicI64);

impl agent_board::BoardClock for TickClock {
    fn now(&self) -> Millis {
        Millis(START.0 + self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst))
    }
}

/// A model that answers from what it was sent, whoever asks and in whatever order: the
/// teammates' share of the tasks depends on who is idle first, so no script could say in
/// advance which of them completes which task (or with which token).
struct Responder(fn(&ModelRequest) -> ModelReply);

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
fn attribute(text: &str, name: &str) -> String {
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

/// The lead: starts three teammates, then acknowledges what they report.
fn lead(request: &ModelRequest) -> ModelReply {
    match last_text(request) {
        ("user", text) if text == "Get the board done." => tool_round(
            ["ann", "ben", "cat"]
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
    let board = Arc::new(
        SqliteBoard::open_with_clock(
            &workspace,
            BoardConfig::default(),
            Arc::new(TickClock::default()),
            FirstOpen::ImportChapter12,
        )
        .unwrap(),
    );
    // 1 and 2 first; 3 after 1; 4 after 1 and 2; 5 after 3 and 4; 6 after 5.
    let waits: [&[i64]; 6] = [&[], &[], &[1], &[1, 2], &[3, 4], &[5]];
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
    let seat = BoardSeat::new(board.clone());
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
    // Short waits, so the run ends soon after the last task: no outcome depends on them
    // (a teammate waits for open tasks however long they take; the idle limit counts only
    // while nothing is open).
    team.set_autonomy(Some(AutonomyConfig {
        poll: Duration::from_millis(20),
        idle_limit: Duration::from_millis(100),
    }));
    session.add(
        AgentId::lead(),
        agent_tutorial::agents::build_agent(profile, deps).unwrap(),
    );
    let mut events = session.take_events().unwrap();
    session.handle().submit(Op::Prompt {
        agent: AgentId::lead(),
        text: "Get the board done.".into(),
    });
    session.run(Mode::OneShot).await;

    // Every task completed once, by one of the teammates, with its own result.
    let mates = ["ann", "ben", "cat"];
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
    assert_eq!(
        seen,
        [
            "#1 claimed",
            "#1 completed",
            "#2 claimed",
            "#2 completed",
            "#3 claimed",
            "#3 completed",
            "#4 claimed",
            "#4 completed",
            "#5 claimed",
            "#5 completed",
            "#6 claimed",
            "#6 completed",
        ]
    );
    // Each teammate told the lead twice: its answer to the first message, and once that it
    // found no open task (task turns send nothing: the lead saw the board's events).
    assert_eq!(
        team.mailbox().counts(&AgentId::lead()).unwrap(),
        agent_team::Counts {
            done: 6,
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

#[tokio::test]
async fn tasks_board_lists_and_shows_the_board_with_its_claims_and_escapes_what_it_did_not_write() {
    let dir = workspace();
    // Nothing yet: said, and nothing is created.
    command("agent-tutorial", dir.path())
        .args(["tasks", "--board", "list"])
        .assert()
        .success()
        .stdout("no task board yet (a chapter 17 session creates .agent_tutorial/board.sqlite3)\n");
    assert!(!dir.path().join(".agent_tutorial/board.sqlite3").exists());

    // A board from 2023: every lease has long run out, so nothing depends on today's date.
    let clock = ManualClock::new(START);
    let board = board(dir.path(), &clock);
    for (subject, after) in [("Write the parser", vec![]), ("Test it", vec![TaskId(1)])] {
        board
            .create(NewTask {
                subject: subject.into(),
                description: "Done means \x1b[31mgreen\x1b[0m.".into(),
                blocked_by: after,
            })
            .await
            .unwrap();
    }
    let (ann, bob) = (AgentId::new("ann").unwrap(), AgentId::new("bob").unwrap());
    board.claim(&ann, ClaimTarget::OldestReady).await.unwrap();
    clock.advance(Duration::from_secs(120));
    let second = board.claim(&bob, ClaimTarget::OldestReady).await.unwrap();
    clock.advance(Duration::from_secs(30));
    board
        .complete(
            &bob,
            TaskId(1),
            &second.token,
            "parsed \x1b]0;owned\x07 fine",
        )
        .await
        .unwrap();
    let third = board
        .claim(&ann, ClaimTarget::Task(TaskId(2)))
        .await
        .unwrap();
    board
        .release(&ann, TaskId(2), &third.token, "blocked on review")
        .await
        .unwrap();
    // Each claim's token head, as `show` prints it.
    let mut heads = Vec::new();
    for (task, n) in [(1, 0), (1, 1), (2, 0)] {
        let history = board.history(TaskId(task)).await.unwrap();
        heads.push(history[n].token.as_str()[..8].to_string());
    }
    drop(board);

    command("agent-tutorial", dir.path())
        .args(["tasks", "--board", "list"])
        .assert()
        .success()
        .stdout("#1 [completed] Write the parser\n#2 [pending] Test it (ready)\n");
    command("agent-tutorial", dir.path())
        .args(["tasks", "show", "1", "--board"])
        .assert()
        .success()
        .stdout(format!(
            "#1 [completed] Write the parser\n\
             description: Done means \\e[31mgreen\\e[0m.\n\
             result: parsed \\e]0;owned\\x07 fine\n\
             claims:\n\
             \x20 1. ann claimed 2023-11-14 22:13:20 UTC (token {}…): expired 2023-11-14 22:15:20 UTC\n\
             \x20 2. bob claimed 2023-11-14 22:15:20 UTC (token {}…): completed 2023-11-14 22:15:50 UTC\n",
            heads[0], heads[1]
        ));
    command("agent-tutorial", dir.path())
        .args(["tasks", "--board", "show", "2"])
        .assert()
        .success()
        .stdout(format!(
            "#2 [pending] Test it (after #1)\n\
             description: Done means \\e[31mgreen\\e[0m.\n\
             blocked by: #1\n\
             claims:\n\
             \x20 3. ann claimed 2023-11-14 22:15:50 UTC (token {}…): released 2023-11-14 22:15:50 UTC (blocked on review)\n",
            heads[2]
        ));
    command("agent-tutorial", dir.path())
        .args(["tasks", "--board", "show", "9"])
        .assert()
        .code(2)
        .stderr("error: there is no task #9; list_tasks shows the ids\n");
}
