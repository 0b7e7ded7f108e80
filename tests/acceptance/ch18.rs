//! Chapter 18: each claimed task in its own git worktree. The lead's three tools in the first
//! request; a teammate that claims a task with a worktree writes there, not at the root; a
//! worktree that cannot be used refuses the call (never the root instead).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_board::{BoardConfig, NewTask, SqliteBoard, TaskBoard, TaskId};
use agent_core::{AgentId, Message, ModelReply, ModelRequest};
use agent_harness::board_seat::BoardSeat;
use agent_harness::session::{Mode, Op};
use agent_harness::team_runtime::AutonomyConfig;
use agent_sandbox::{Mode as SandboxMode, Network, Sandbox};
use agent_tools::Workspace;
use agent_workspace::ManualClock;
use agent_worktree::{Git, WorktreeName, Worktrees};
use serde_json::json;

use crate::ch17::autonomy::{Responder, attribute};
use crate::support::{call, tool_round, workspace};
use crate::team_support::builder;

/// The test workspace made a repository with one commit on `main`, its worktrees (git run
/// unconfined: the test binary is no sandbox helper) and its board.
pub(crate) fn repository(dir: &Path) -> (Worktrees, Arc<SqliteBoard>) {
    agent_test_support::git(dir, &["init", "-q", "-b", "main"]);
    agent_test_support::git(dir, &["add", "."]);
    agent_test_support::git(dir, &["commit", "-q", "-m", "first"]);
    let ws = Workspace::new(dir).unwrap();
    let trees = Worktrees::new(
        Git::with_sandbox(&ws, Sandbox::new(SandboxMode::Off, Network::Off)),
        Arc::new(ManualClock::new(std::time::UNIX_EPOCH)),
    );
    let board = Arc::new(SqliteBoard::open(&ws, BoardConfig::default()).unwrap());
    (trees, board)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p18_first_request_in_full() {
    let dir = workspace();
    let (trees, board) = repository(dir.path());
    let mut t = builder(
        18,
        dir.path(),
        vec![
            ModelReply::text("No worktrees yet."),
            ModelReply::text("[]"),
        ],
        vec![],
    )
    .board(BoardSeat::new(board))
    .worktrees(trees)
    .build();
    t.run("Which worktrees are there?").await;
    let root = dir.path().canonicalize().unwrap().display().to_string();
    let text = agent_tutorial::render::full(&t.requests("lead")[0]).replace(&root, "<workspace>");
    insta::assert_snapshot!(text);
}

/// The task the teammate was handed last: (id, token).
fn board_task(request: &ModelRequest) -> Option<(i64, String)> {
    request
        .messages
        .iter()
        .rev()
        .find_map(|m| match m.as_ref() {
            Message::User { content } if content.starts_with("<board-task ") => Some((
                attribute(content, "id").parse().unwrap(),
                attribute(content, "claim_token"),
            )),
            _ => None,
        })
}

/// What the write calls of the deleted-worktree test's teammates answered.
static RESULTS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn worker(request: &ModelRequest) -> ModelReply {
    work(request, None)
}

fn recording_worker(request: &ModelRequest) -> ModelReply {
    work(request, Some(&RESULTS))
}

/// A teammate: given a board task, it writes `work.txt` (one round), then completes the task
/// (the next round: the write has run by then, under the claim); `record` keeps what the
/// write answered.
fn work(request: &ModelRequest, record: Option<&Mutex<Vec<String>>>) -> ModelReply {
    let last = request.messages.last().unwrap();
    match last.as_ref() {
        Message::User { content } if content.starts_with("<board-task ") => {
            let (id, _) = board_task(request).unwrap();
            tool_round(vec![call(
                "w",
                "write_file",
                json!({"path": "work.txt", "content": format!("work on #{id}\n")}),
            )])
        }
        Message::Tool { content, .. }
            if content.starts_with("Error [tool_execution_error]")
                || content.starts_with("Wrote") =>
        {
            if let Some(record) = record {
                record.lock().unwrap().push(content.clone());
            }
            let (id, token) = board_task(request).unwrap();
            tool_round(vec![call(
                "c",
                "complete_task",
                json!({"task_id": id, "claim_token": token, "result": "done"}),
            )])
        }
        Message::User { content } if content.starts_with("Existing memories:") => {
            ModelReply::text("[]")
        }
        _ => ModelReply::text("Ready."),
    }
}

/// The lead: starts `ann` and `ben`, then acknowledges.
fn lead(request: &ModelRequest) -> ModelReply {
    match request.messages.last().unwrap().as_ref() {
        Message::User { content } if content == "Go." => tool_round(
            ["ann", "ben"]
                .into_iter()
                .map(|name| {
                    call(
                        name,
                        "spawn_teammate",
                        json!({"name": name, "role": "takes board tasks", "prompt": "Stand by."}),
                    )
                })
                .collect(),
        ),
        Message::User { content } if content.starts_with("Existing memories:") => {
            ModelReply::text("[]")
        }
        _ => ModelReply::text("Noted."),
    }
}

/// Runs chapter 18's team on `board` and `trees` until every teammate is idle for good.
async fn run_team(
    dir: &Path,
    board: Arc<SqliteBoard>,
    trees: Worktrees,
    worker: fn(&ModelRequest) -> ModelReply,
) {
    let mut t = builder(18, dir, vec![], vec![])
        .board(BoardSeat::new(board as Arc<dyn TaskBoard>))
        .worktrees(trees)
        .lead_model(Arc::new(Responder(lead)))
        .mate_model(Arc::new(Responder(worker)))
        .build();
    t.team.set_autonomy(Some(AutonomyConfig {
        poll: Duration::from_millis(20),
        idle_limit: Duration::from_millis(100),
    }));
    t.session.handle().submit(Op::Prompt {
        agent: AgentId::lead(),
        text: "Go.".into(),
    });
    t.session.run(Mode::OneShot).await;
}

async fn task(board: &SqliteBoard, subject: &str) -> TaskId {
    board
        .create(NewTask {
            subject: subject.into(),
            description: String::new(),
            blocked_by: Vec::new(),
        })
        .await
        .unwrap()
        .id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_teammate_writes_in_its_tasks_worktree_and_same_named_files_stay_apart() {
    let dir = workspace();
    let (trees, board) = repository(dir.path());
    for (subject, name) in [("first", "one"), ("second", "two")] {
        let id = task(&board, subject).await;
        trees
            .create(id, &WorktreeName::new(name).unwrap(), None)
            .await
            .unwrap();
    }
    // A task with no worktree is worked on at the root, as in chapter 17.
    task(&board, "third").await;
    run_team(dir.path(), board.clone(), trees, worker).await;

    let root = dir.path();
    let read = |path: &str| std::fs::read_to_string(root.join(path)).unwrap();
    assert_eq!(
        [
            read(".agent_tutorial/worktrees/one/work.txt"),
            read(".agent_tutorial/worktrees/two/work.txt"),
            read("work.txt"),
        ],
        ["work on #1\n", "work on #2\n", "work on #3\n"]
    );
    let statuses: Vec<String> = board
        .list()
        .await
        .unwrap()
        .iter()
        .map(|t| format!("{} {}", t.id, t.status))
        .collect();
    assert_eq!(statuses, ["#1 completed", "#2 completed", "#3 completed"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worktree_deleted_under_a_claimed_task_refuses_the_write_instead_of_using_the_root() {
    let dir = workspace();
    let (trees, board) = repository(dir.path());
    let id = task(&board, "only").await;
    trees
        .create(id, &WorktreeName::new("gone").unwrap(), None)
        .await
        .unwrap();
    std::fs::remove_dir_all(dir.path().join(".agent_tutorial/worktrees/gone")).unwrap();
    run_team(dir.path(), board, trees, recording_worker).await;

    assert!(
        !dir.path().join("work.txt").exists(),
        "the write landed at the root"
    );
    let results = RESULTS.lock().unwrap().clone();
    assert_eq!(
        results,
        [
            "Error [tool_execution_error]: the worktree of task #1 cannot be used, so nothing ran: task #1's worktree cannot be used: .agent_tutorial/worktrees/gone is not a folder"
        ]
    );
}
