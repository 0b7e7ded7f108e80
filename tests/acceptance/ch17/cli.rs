//! `agent-tutorial tasks --board list|show`.

use std::time::Duration;

use agent_board::{ClaimTarget, ManualClock, NewTask, TaskBoard, TaskId};
use agent_core::AgentId;

use super::{START, board};
use crate::support::{command, workspace};

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
    let clock = std::sync::Arc::new(ManualClock::new(START));
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

/// The board file planted as a link out of the workspace: a run and `tasks --board` refuse it
/// before anything is opened, and the file it points at is unchanged.
#[test]
fn a_board_file_linked_outside_is_refused_by_a_run_and_by_tasks() {
    let dir = workspace();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("precious.db");
    std::fs::write(&target, "not yours\n").unwrap();
    std::fs::create_dir_all(dir.path().join(".agent_tutorial")).unwrap();
    std::os::unix::fs::symlink(&target, dir.path().join(".agent_tutorial/board.sqlite3")).unwrap();
    let refused = "error: the board file `.agent_tutorial/board.sqlite3` is a symbolic link, not a regular file\n";
    command("agent-tutorial", dir.path())
        .args(["tasks", "--board", "list"])
        .assert()
        .code(1)
        .stderr(refused);
    let script = dir.path().join("s.json");
    std::fs::write(&script, r#"[{"content": "never asked"}]"#).unwrap();
    command("ch17", dir.path())
        .args(["--script", script.to_str().unwrap(), "--prompt", "hi"])
        .assert()
        .code(1)
        .stderr(refused);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "not yours\n");
}
