//! The board's tools in the first request, renewal and fencing.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_board::{
    ClaimTarget, ManualClock, Millis, NewTask, SqliteBoard, Status, TaskBoard, TaskId,
};
use agent_core::{AgentId, ModelClient, ModelError, ModelReply, ModelRequest};
use agent_harness::board_seat::BoardSeat;
use agent_test_support::{Recording, ScriptedModel};
use agent_tools::Workspace;
use async_trait::async_trait;
use serde_json::json;

use super::{START, board};
use crate::support::{call, tool_results, tool_round, workspace};
use crate::team_support::team_with;

#[tokio::test]
async fn p17_first_request_in_full() {
    let dir = workspace();
    let clock = Arc::new(ManualClock::new(START));
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
    clock: Arc<ManualClock>,
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
    clock: &Arc<ManualClock>,
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
    let clock = Arc::new(ManualClock::new(START));
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
    agent_board::clock::now(clock).0
}

#[tokio::test]
async fn a_write_after_the_lease_ran_out_is_refused_and_the_file_is_unchanged() {
    let dir = workspace();
    let clock = Arc::new(ManualClock::new(START));
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
