//! The attacks of the security issue, through the tools as the model calls them.

use std::os::unix::fs::symlink;

use agent_tools::{BashConfig, Workspace, bash};
use serde_json::json;

use super::Fixture;

#[tokio::test]
async fn a_missing_folder_then_dot_dot_cannot_reach_an_outward_link() {
    let fx = Fixture::new();
    // Also a dangling outward link: writing through it used to create the file outside.
    symlink(
        fx.outside.path().join("new.txt"),
        fx.dir.path().join("dangling_out"),
    )
    .unwrap();
    for path in ["missing/../link_out/secret.txt", "dangling_out"] {
        let results = [
            fx.call("read_file", json!({"path": path})).await,
            fx.call("write_file", json!({"path": path, "content": "pwned"}))
                .await,
            fx.call(
                "edit_file",
                json!({"path": path, "old_text": "secret", "new_text": "pwned"}),
            )
            .await,
        ];
        let expected = if path == "dangling_out" {
            format!("Error [path_escape]: `{path}` resolves outside the workspace")
        } else {
            format!(
                "Error [tool_execution_error]: cannot resolve `{path}`: `missing` does not exist, so `..` after it leads nowhere"
            )
        };
        assert_eq!(results, [expected.clone(), expected.clone(), expected]);
    }
    assert_eq!(
        std::fs::read_to_string(fx.outside.path().join("secret.txt")).unwrap(),
        "secret"
    );
    assert!(!fx.outside.path().join("new.txt").exists());
}

#[tokio::test]
async fn read_file_refuses_a_fifo_instead_of_hanging() {
    let fx = Fixture::new();
    let fifo = std::ffi::CString::new(fx.dir.path().join("pipe").to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    assert_eq!(
        fx.call("read_file", json!({"path": "pipe"})).await,
        "Error [tool_execution_error]: `pipe` is a FIFO (named pipe), not a regular file"
    );
    assert_eq!(
        fx.call(
            "edit_file",
            json!({"path": "pipe", "old_text": "a", "new_text": "b"})
        )
        .await,
        "Error [tool_execution_error]: `pipe` is a FIFO (named pipe), not a regular file"
    );
}

#[tokio::test]
async fn read_file_reads_only_what_it_returns_of_a_huge_file() {
    let fx = Fixture::new();
    let file = std::fs::File::create(fx.dir.path().join("huge.log")).unwrap();
    // 3 GB and sparse: the old read_file held all of it in memory to return 100 KB.
    file.set_len(3_000_000_000).unwrap();
    drop(file);
    let text = fx.call("read_file", json!({"path": "huge.log"})).await;
    let nul = "\0".repeat(50_000);
    assert_eq!(
        text,
        format!("{nul}\n[... output truncated: 2999900000 of 3000000000 bytes omitted ...]\n{nul}")
    );
    assert_eq!(
        fx.call("read_file", json!({"path": "huge.log", "limit": 1}))
            .await,
        format!(
            "{}\n[... more lines not shown: the file is 3000000000 bytes ...]",
            "\0".repeat(100_000)
        )
    );
    assert_eq!(
        fx.call(
            "edit_file",
            json!({"path": "huge.log", "old_text": "a", "new_text": "b"})
        )
        .await,
        "Error [tool_execution_error]: `huge.log` is 3000000000 bytes, over the limit of 10485760 bytes"
    );
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.contains(") Z "))
        .unwrap_or(false)
}

fn pids(dir: &std::path::Path, name: &str) -> Vec<i32> {
    std::fs::read_to_string(dir.join(name))
        .unwrap_or_default()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect()
}

#[tokio::test]
async fn a_call_ends_with_every_process_it_started_even_detached_ones() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let config = BashConfig {
        timeout: std::time::Duration::from_secs(60),
        ..BashConfig::default()
    };
    // Left the process group and held stdout: the call used to last the sleep's 200 s.
    let script = "setsid sleep 200 & echo $! > a.pid; (setsid sleep 1000 & echo $! > b.pid); \
                  nohup sh -c 'sleep 300 & echo $! > c.pid; wait' >/dev/null 2>&1 & echo x";
    let started = std::time::Instant::now();
    let out = bash::run(&ws, script, config).await.unwrap();
    assert_eq!(out, "x\n");
    // Not a timing assertion on the harness: a bound that only a hang (200 s) can break.
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    let mut all = pids(dir.path(), "a.pid");
    all.extend(pids(dir.path(), "b.pid"));
    // c.pid may not exist yet if its shell was killed first; whatever was recorded must be dead.
    all.extend(pids(dir.path(), "c.pid"));
    assert!(all.len() >= 2, "{all:?}");
    let survivors: Vec<i32> = all.into_iter().filter(|p| alive(*p)).collect();
    assert_eq!(survivors, Vec::<i32>::new());
}

#[tokio::test]
async fn a_timeout_kills_a_command_that_left_the_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let config = BashConfig {
        timeout: std::time::Duration::from_millis(300),
        ..BashConfig::default()
    };
    // `setsid` in a child of bash: a new session, out of reach of the group kill.
    let script = "echo started; setsid sh -c 'echo $$ > s.pid; exec sleep 200'; true";
    let err = bash::run(&ws, script, config).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "Error [tool_execution_error]: command timed out after 0.3s; every process it started was killed. Output so far:\nstarted\n"
    );
    let recorded = pids(dir.path(), "s.pid");
    assert_eq!(recorded.len(), 1);
    let survivors: Vec<i32> = recorded.into_iter().filter(|p| alive(*p)).collect();
    assert_eq!(survivors, Vec::<i32>::new());
}
