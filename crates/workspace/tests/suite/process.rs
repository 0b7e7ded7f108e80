//! `Command`: argv without a shell, the environment scrub, and a long-lived stdio child whose
//! whole tree ends when it is closed.

use std::time::Duration;

use agent_workspace::Workspace;
use agent_workspace::process::{Command, Stdin};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn ws() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    (dir, ws)
}

/// Whether `pid` is a live (not zombie) process.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.contains(") Z "))
        .unwrap_or(false)
}

#[tokio::test]
async fn argv_passes_arguments_as_they_are() {
    let (_d, ws) = ws();
    let finished = Command::argv(&ws, "printf", ["<%s>", "a b;c $HOME", "'q'"])
        .spawn(Stdin::Null)
        .unwrap()
        .run(None, Duration::from_secs(10), 1000)
        .await
        .unwrap();
    assert_eq!(finished.stdout.render(), "<a b;c $HOME><'q'>");
    assert_eq!(finished.status.map(|s| s.code()), Some(Some(0)));
}

#[tokio::test]
async fn env_cannot_hand_over_the_model_servers_variables() {
    let (_d, ws) = ws();
    let finished = Command::shell(&ws, "echo \"${OPENAI_API_KEY-unset} $SHOWN\"")
        .env("OPENAI_API_KEY", "sk-leak")
        .env("SHOWN", "yes")
        .spawn(Stdin::Null)
        .unwrap()
        .run(None, Duration::from_secs(10), 1000)
        .await
        .unwrap();
    assert_eq!(finished.stdout.render(), "unset yes\n");
}

#[tokio::test]
async fn a_stdio_child_talks_over_its_pipes_and_close_ends_its_tree() {
    let (dir, ws) = ws();
    let script = "(setsid sleep 300 & echo $! > escaped.pid); echo oops >&2; \
                  while read -r line; do echo \"got $line\"; done";
    let mut child = Command::shell(&ws, script).spawn_stdio(1000).unwrap();
    let mut stdin = child.take_stdin().unwrap();
    let mut stdout = BufReader::new(child.take_stdout().unwrap());
    stdin.write_all(b"ping\n").await.unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).await.unwrap();
    assert_eq!(line, "got ping\n");
    // Read in the background: it may arrive after stdout.
    while child.stderr().total() < 5 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(child.stderr().render(), "oops\n");
    let escaped: i32 = std::fs::read_to_string(dir.path().join("escaped.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(escaped));
    let status = child.close().await.unwrap();
    assert_eq!(status.code(), None);
    assert!(!alive(escaped), "the setsid grandchild {escaped} survived");
}

#[tokio::test]
async fn dropping_a_stdio_child_ends_its_tree() {
    let (dir, ws) = ws();
    let child = Command::shell(&ws, "sleep 300 & echo $! > bg.pid; wait")
        .spawn_stdio(1000)
        .unwrap();
    let pid_file = dir.path().join("bg.pid");
    let pid = loop {
        if let Ok(text) = std::fs::read_to_string(&pid_file)
            && let Ok(pid) = text.trim().parse::<i32>()
        {
            break pid;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    drop(child);
    // The SIGKILL is sent by the drop; the process needs a moment to be scheduled and die.
    for _ in 0..500 {
        if !alive(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the background sleep {pid} survived the drop");
}

#[tokio::test]
async fn env_remove_keeps_an_inherited_variable_from_the_command() {
    let (_d, ws) = ws();
    // Cargo sets it for every test process: an inherited variable that surely exists.
    let inherited = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    let mut seen = Vec::new();
    for remove in [false, true] {
        let mut command = Command::argv(&ws, "printenv", ["CARGO_MANIFEST_DIR"]);
        if remove {
            command = command.env_remove("CARGO_MANIFEST_DIR");
        }
        let finished = command
            .spawn(Stdin::Null)
            .unwrap()
            .run(None, Duration::from_secs(10), 1000)
            .await
            .unwrap();
        seen.push((
            finished.stdout.render(),
            finished.status.and_then(|s| s.code()),
        ));
    }
    assert_eq!(
        seen,
        [(format!("{inherited}\n"), Some(0)), (String::new(), Some(1))]
    );
}
