//! Other OS processes on the same board: this test binary run again as a child
//! (`child` below, ignored unless `AGENT_BOARD_CHILD` says what to do), talking over its
//! stdin and stdout.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use agent_board::{
    BoardConfig, BoardError, ClaimTarget, ClaimToken, FirstOpen, ManualClock, Millis, PgBoard,
    SqliteBoard, Status, SystemClock, TaskBoard, TaskId,
};
use agent_workspace::Workspace;

use super::conformance::{create, seen};
use super::harness::{Harness, agent};

/// A running child: its stdin, and its stdout lines (libtest's own lines filtered out).
pub struct Kid {
    pub child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Kid {
    pub fn spawn(role: &str, name: &str, env: &[(String, String)]) -> Self {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args([
                "--exact",
                "suite::processes::child",
                "--ignored",
                "--nocapture",
                "--test-threads",
                "1",
                "-q",
            ])
            .env("AGENT_BOARD_CHILD", role)
            .env("AGENT_BOARD_CHILD_NAME", name)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("OPENAI_") {
                command.env_remove(key);
            }
        }
        let mut child = command.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if line.starts_with("board: ") && send.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            lines,
        }
    }

    /// The next line the child wrote, without its `board: ` prefix.
    pub fn line(&self) -> String {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("the child said nothing for a minute");
        line["board: ".len()..].to_string()
    }

    pub fn say(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }
}

/// Opens the board the parent named in the environment.
async fn child_board() -> Arc<dyn TaskBoard> {
    let config = BoardConfig::default();
    if let Ok(root) = std::env::var("AGENT_BOARD_CHILD_SQLITE") {
        let workspace = Workspace::new(root).unwrap();
        let clock: Arc<dyn agent_board::Clock> = match std::env::var("AGENT_BOARD_CHILD_CLOCK") {
            Ok(at) => Arc::new(ManualClock::new(Millis(at.parse().unwrap()))),
            Err(_) => Arc::new(SystemClock),
        };
        let board = tokio::task::spawn_blocking(move || {
            SqliteBoard::open_with_clock(&workspace, config, clock, FirstOpen::LeaveTasks)
        })
        .await
        .unwrap()
        .unwrap();
        return Arc::new(board);
    }
    let url = std::env::var("AGENT_BOARD_CHILD_PG").unwrap();
    let schema = std::env::var("AGENT_BOARD_CHILD_SCHEMA").unwrap();
    Arc::new(PgBoard::connect(&url, &schema, config).await.unwrap())
}

fn read_line() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_string()),
    }
}

/// The child's side. Roles: `race` (each round: say ready, wait for `go`, claim task N, say
/// who won), `hold` (claim task 1, say the token, then wait to be killed), `lock` (hold
/// SQLite's write lock until told to let go).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a child process of the tests in this module; does nothing without AGENT_BOARD_CHILD"]
async fn child() {
    let Ok(role) = std::env::var("AGENT_BOARD_CHILD") else {
        return;
    };
    let me = agent(&std::env::var("AGENT_BOARD_CHILD_NAME").unwrap());
    match role.as_str() {
        "race" => {
            let board = child_board().await;
            let mut round = 1;
            loop {
                println!("board: ready {round}");
                match read_line().as_deref() {
                    Some("go") => {}
                    _ => break,
                }
                let outcome = match board.claim(&me, ClaimTarget::Task(TaskId(round))).await {
                    Ok(_) => "won",
                    Err(
                        BoardError::AlreadyClaimed { .. }
                        | BoardError::Contended(_)
                        | BoardError::Busy { .. },
                    ) => "lost",
                    Err(other) => panic!("round {round}: {other}"),
                };
                println!("board: {outcome} {round}");
                round += 1;
            }
        }
        "hold" => {
            let board = child_board().await;
            let claim = board
                .claim(&me, ClaimTarget::Task(TaskId(1)))
                .await
                .unwrap();
            println!("board: token {}", claim.token);
            // Until killed.
            while read_line().is_some() {}
        }
        "lock" => {
            let root = std::env::var("AGENT_BOARD_CHILD_SQLITE").unwrap();
            let path = std::path::Path::new(&root).join(".agent_tutorial/board.sqlite3");
            let conn = rusqlite::Connection::open(path).unwrap();
            conn.execute_batch("BEGIN IMMEDIATE").unwrap();
            println!("board: locked");
            let _ = read_line();
            conn.execute_batch("COMMIT").unwrap();
            println!("board: unlocked");
        }
        other => panic!("unknown child role {other}"),
    }
}

/// Two processes race for one task, 100 times, in lockstep: exactly one winner each round,
/// and the board agrees with what the winners saw.
pub async fn two_processes_race_100_times(h: &impl Harness) {
    let board = h.open().await;
    for n in 1..=100 {
        assert_eq!(create(&board, &format!("prize {n}"), &[]).await, TaskId(n));
    }
    let env = h.child_env();
    let mut kids = [
        Kid::spawn("race", "red", &env),
        Kid::spawn("race", "blue", &env),
    ];
    let mut winners = Vec::new();
    for round in 1..=100 {
        for kid in &kids {
            assert_eq!(kid.line(), format!("ready {round}"));
        }
        for kid in &mut kids {
            kid.say("go");
        }
        let outcomes: Vec<String> = kids.iter().map(Kid::line).collect();
        let won: Vec<&str> = ["red", "blue"]
            .into_iter()
            .zip(&outcomes)
            .filter(|(_, o)| o.starts_with("won"))
            .map(|(name, _)| name)
            .collect();
        assert_eq!(won.len(), 1, "round {round}: {outcomes:?}");
        winners.push(won[0].to_string());
    }
    let red = winners.iter().filter(|w| *w == "red").count();
    eprintln!("race: red won {red} rounds, blue {}", 100 - red);
    for kid in &mut kids {
        kid.say("stop");
        assert!(kid.child.wait().unwrap().success());
    }
    let owners: Vec<String> = board
        .list()
        .await
        .unwrap()
        .iter()
        .map(|t| seen(t).owner.unwrap_or_default())
        .collect();
    assert_eq!(owners, winners);
    for n in 1..=100 {
        assert_eq!(board.history(TaskId(n)).await.unwrap().len(), 1);
    }
}

/// A holder killed with SIGKILL keeps its task only until the lease ends; then another
/// claims it with a fresh token and the dead holder's late complete is refused.
pub async fn a_killed_holder_loses_its_claim(h: &impl Harness) {
    let board = h.open().await;
    let id = create(&board, "risky", &[]).await;
    let mut kid = Kid::spawn("hold", "doomed", &h.child_env());
    let line = kid.line();
    let dead_token = ClaimToken(line.strip_prefix("token ").unwrap().to_string());
    kid.child.kill().unwrap(); // SIGKILL
    kid.child.wait().unwrap();

    let rescuer = agent("rescuer");
    let early = board
        .claim(&rescuer, ClaimTarget::Task(id))
        .await
        .unwrap_err();
    assert_eq!(early.to_string(), format!("task {id} is held by doomed"));
    h.advance(Duration::from_secs(120)).await;
    let claim = board.claim(&rescuer, ClaimTarget::Task(id)).await.unwrap();
    assert_ne!(claim.token, dead_token);
    let late = board
        .complete(&agent("doomed"), id, &dead_token, "done, honest")
        .await
        .unwrap_err();
    assert!(
        matches!(late, BoardError::LeaseExpired(t) if t == id),
        "{late:?}"
    );
    let task = board
        .complete(&rescuer, id, &claim.token, "done")
        .await
        .unwrap();
    assert_eq!(
        (task.status, task.result),
        (Status::Completed, Some("done".into()))
    );
}

/// Another process holds SQLite's write lock past the busy timeout: a typed `Busy`, reads
/// still work, nothing is lost, and the claim goes through once the lock is gone.
pub async fn a_writer_holding_the_lock_makes_calls_busy(h: &super::sqlite::SqliteHarness) {
    let board = h.open().await;
    let id = create(&board, "waiting", &[]).await;
    let before: Vec<_> = board.list().await.unwrap();
    let mut kid = Kid::spawn("lock", "locker", &h.child_env());
    assert_eq!(kid.line(), "locked");
    let busy = board
        .claim(&agent("alice"), ClaimTarget::Task(id))
        .await
        .unwrap_err();
    assert_eq!(
        busy.to_string(),
        "the board is busy: another writer held it for over 200ms; nothing was changed, try again"
    );
    assert_eq!(busy.kind(), agent_board::ErrorKind::Storage);
    assert_eq!(board.list().await.unwrap(), before);
    kid.say("release");
    assert_eq!(kid.line(), "unlocked");
    assert!(kid.child.wait().unwrap().success());
    let claim = board
        .claim(&agent("alice"), ClaimTarget::Task(id))
        .await
        .unwrap();
    assert_eq!(claim.task, id);
}
