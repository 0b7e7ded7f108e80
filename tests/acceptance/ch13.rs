//! Chapter 13: background jobs and their completion notices.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use agent_core::{AgentEvent, CollectingSink, Message, ModelReply, ModelRequest, ToolCall};
use agent_jobs::{Clock, JobStatus};
use agent_policy::StaticApproval;
use agent_tutorial::{Agent, render};
use serde_json::json;
use tokio::time::Instant;

use crate::support::{assert_all_paired, call, scripted_agent_with, tool_round, workspace};

/// Moves 4.2 s each time it is read: a job's start and end are one read apart.
#[derive(Debug)]
struct StepClock(Instant, AtomicU32);

impl Clock for StepClock {
    fn now(&self) -> Instant {
        self.0 + Duration::from_millis(4200) * self.1.fetch_add(1, Ordering::SeqCst)
    }

    fn wall(&self) -> std::time::SystemTime {
        std::time::SystemTime::UNIX_EPOCH
    }

    fn sleep_until(&self, deadline: Instant) -> agent_jobs::Sleep {
        Box::pin(tokio::time::sleep_until(deadline))
    }
}

const PLACEHOLDER: &str = "started job 1 in the background; you will be told when it finishes; job_output{\"id\": 1} shows its output so far";

fn background(command: &str) -> ToolCall {
    call(
        "c1",
        "bash",
        json!({"command": command, "run_in_background": true}),
    )
}

/// P13 on a script, every `ask` approved, a clock that makes every job take 4.2 s, every
/// event collected.
fn agent(
    dir: &std::path::Path,
    replies: Vec<ModelReply>,
) -> (
    Agent,
    Arc<agent_test_support::ScriptedModel>,
    Arc<CollectingSink>,
) {
    let events = Arc::new(CollectingSink::new());
    let (agent, model) = scripted_agent_with(13, dir, replies, |deps| {
        deps.approval = Some(Arc::new(StaticApproval::ApproveAll));
        deps.jobs.clock = Arc::new(StepClock(Instant::now(), AtomicU32::new(0)));
        deps.events = events.clone();
    });
    (agent, model, events)
}

/// The lines the person is shown for the jobs that ended, as the CLI renders them.
fn job_lines(events: &CollectingSink) -> Vec<String> {
    let observer = agent_tutorial::observer::CliObserver::default();
    events
        .events()
        .iter()
        .filter(|e| matches!(e, AgentEvent::JobFinished { .. }))
        .filter_map(|e| observer.render(e))
        .collect()
}

/// Waits (up to a generous bound) until a job has ended.
async fn job_ended(events: &CollectingSink) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while job_lines(events).is_empty() {
        assert!(std::time::Instant::now() < deadline, "the job never ended");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The requests of the conversation itself (memory's extraction requests offer no tools).
fn main_requests(requests: Vec<ModelRequest>) -> Vec<ModelRequest> {
    requests
        .into_iter()
        .filter(|r| !r.tools.is_empty())
        .collect()
}

#[tokio::test]
async fn a_jobs_notice_arrives_in_the_next_request_exactly_once() {
    let dir = workspace();
    let replies = vec![
        tool_round(vec![background("echo built")]),
        ModelReply::text("Started."),
        ModelReply::text("[]"),
        ModelReply::text("It built."),
        ModelReply::text("[]"),
        ModelReply::text("You are welcome."),
        ModelReply::text("[]"),
    ];
    let (mut agent, model, events) = agent(dir.path(), replies);
    agent.run_turn("build it in the background").await.unwrap();
    job_ended(&events).await;
    agent.run_turn("is it done?").await.unwrap();
    agent.run_turn("thanks").await.unwrap();
    model.finish().unwrap();
    let requests = main_requests(model.requests());
    assert_all_paired(&requests);
    let notice = Message::user("<job id=\"1\" status=\"exit 0\" elapsed=\"4.2s\">\nbuilt\n</job>");
    let first_turn = vec![
        Message::user("build it in the background"),
        Message::Assistant {
            content: None,
            tool_calls: vec![background("echo built")],
        },
        Message::tool_result("c1", PLACEHOLDER),
        Message::assistant_text("Started."),
    ];
    // From the next turn on, chapter 8's micro compaction sends the old result as a stub.
    let mut compacted = first_turn.clone();
    compacted[2] = Message::tool_result("c1", "[earlier tool result cleared: 111 bytes]");
    let second = [
        &compacted[..],
        &[Message::user("is it done?"), notice.clone()],
    ]
    .concat();
    let third = [
        &second[..],
        &[
            Message::assistant_text("It built."),
            Message::user("thanks"),
        ],
    ]
    .concat();
    let sent: Vec<Vec<Message>> = requests
        .iter()
        .map(|r| r.messages[1..].iter().map(|m| Message::clone(m)).collect())
        .collect();
    assert_eq!(
        sent,
        vec![
            vec![Message::user("build it in the background")],
            first_turn[..3].to_vec(),
            second,
            third,
        ]
    );
    // Stored once in the history too, and the person is told once.
    let stored = agent.history().iter().filter(|m| **m == notice).count();
    assert_eq!(stored, 1);
    assert_eq!(
        job_lines(&events),
        ["[job 1] exit 0 after 4.2s: echo built\n"]
    );
}

#[tokio::test]
async fn a_job_outliving_the_session_is_killed() {
    let dir = workspace();
    let replies = vec![
        tool_round(vec![background("echo $$ > job.pid; exec sleep 300")]),
        ModelReply::text("Started."),
        ModelReply::text("[]"),
    ];
    let (mut agent, model, _events) = agent(dir.path(), replies);
    agent.run_turn("sleep in the background").await.unwrap();
    model.finish().unwrap();
    let pid_file = dir.path().join("job.pid");
    let read_pid = || {
        std::fs::read_to_string(&pid_file)
            .ok()
            .filter(|s| s.ends_with('\n'))
            .and_then(|s| s.trim().parse::<i32>().ok())
    };
    // A bounded poll for a real short process; nothing is timed.
    let mut pid = None;
    for _ in 0..500 {
        pid = read_pid();
        if pid.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let pid = pid.expect("the job never wrote its pid");
    let alive = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|stat| !stat.contains(") Z "))
            .unwrap_or(false)
    };
    assert!(alive(pid));
    drop(agent);
    let mut gone = false;
    for _ in 0..500 {
        gone = !alive(pid);
        if gone {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(gone, "the job's sleep {pid} survived the session");
    let record = std::fs::read_to_string(dir.path().join(".agent_tutorial/jobs/1.json")).unwrap();
    let record: agent_jobs::JobRecord = serde_json::from_str(&record).unwrap();
    assert_eq!(
        record.status,
        JobStatus::Killed {
            reason: agent_jobs::KillReason::SessionEnded
        }
    );
}

#[tokio::test]
async fn p13_first_request_in_full() {
    let dir = workspace();
    let (mut agent, model, _events) = agent(
        dir.path(),
        vec![ModelReply::text("Nothing to run."), ModelReply::text("[]")],
    );
    agent
        .run_turn("run the tests in the background")
        .await
        .unwrap();
    model.finish().unwrap();
    let root = dir.path().canonicalize().unwrap().display().to_string();
    let text = render::full(&model.requests()[0]).replace(&root, "<workspace>");
    insta::assert_snapshot!(text);
}

#[tokio::test]
async fn chapters_before_13_keep_the_old_bash() {
    for chapter in [1, 10, 11] {
        let dir = workspace();
        let (agent, _model) = scripted_agent_with(chapter, dir.path(), vec![], |_| {});
        assert_eq!(
            agent.tools().spec("bash"),
            Some(agent_tools::bash::spec()),
            "chapter {chapter}"
        );
        assert_eq!(agent.tools().spec("job_output"), None);
    }
}

/// A second Ctrl-C ends the process with `exit`, which runs no destructor: the jobs must be
/// ended on that path too, not only when the agent is dropped.
#[test]
fn quitting_with_ctrl_c_at_the_prompt_kills_the_background_jobs() {
    use std::io::{Read, Write};
    use std::process::Stdio;

    use crate::ch11::cancel::{alive, interrupt, poll, sleep_pid, spawn_chapter, wait_exit};

    let dir = workspace();
    let script = crate::support::write_script(
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {
                "command": "echo $$ > sleep.pid; exec sleep 600", "run_in_background": true}}]},
            {"content": "started"},
            {"content": "[]"}
        ]),
    );
    let mut child = spawn_chapter(
        "ch13",
        dir.path(),
        &["--script", script.to_str().unwrap(), "--approve", "all"],
        &[],
        Stdio::piped(),
    );
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"start the job\n").unwrap();
    let sleep = sleep_pid(dir.path());
    // Idle at the prompt again: the second `ch13 >> ` is on stderr.
    let mut stderr = child.stderr.take().unwrap();
    let seen = Arc::new(std::sync::Mutex::new(String::new()));
    let sink = seen.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 256];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    poll("the prompt after the turn", || {
        (seen.lock().unwrap().matches("ch13 >> ").count() >= 2).then_some(())
    });

    interrupt(&child);
    assert_eq!(wait_exit(&mut child).code(), Some(130));
    drop(stdin);
    // SIGKILL is delivered when the kernel next runs the job: gone soon, not necessarily
    // by the instant the session's exit status is read.
    poll("the background job to end with the session", || {
        (!alive(sleep)).then_some(())
    });
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(".agent_tutorial/jobs/1.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        record["status"],
        json!({"state": "killed", "reason": "session_ended"}),
        "{record}"
    );
}

/// SIGTERM and SIGHUP end the session like a second Ctrl-C: the background jobs are killed
/// and their records closed as ended by the session; the exit code says which signal.
#[test]
fn sigterm_at_the_prompt_ends_the_session_and_its_jobs() {
    a_signal_at_the_prompt_ends_the_session_and_its_jobs(libc::SIGTERM);
}

/// A closed terminal (SIGHUP) ends the session as SIGTERM does.
#[test]
fn sighup_at_the_prompt_ends_the_session_and_its_jobs() {
    a_signal_at_the_prompt_ends_the_session_and_its_jobs(libc::SIGHUP);
}

/// `signal` sent to an idle chapter 13 session with one background job running.
fn a_signal_at_the_prompt_ends_the_session_and_its_jobs(signal: libc::c_int) {
    use std::io::{Read, Write};
    use std::process::Stdio;

    use crate::ch11::cancel::{alive, poll, sleep_pid, spawn_chapter, wait_exit};

    let dir = workspace();
    let script = crate::support::write_script(
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {
                "command": "echo $$ > sleep.pid; exec sleep 600", "run_in_background": true}}]},
            {"content": "started"},
            {"content": "[]"}
        ]),
    );
    let mut child = spawn_chapter(
        "ch13",
        dir.path(),
        &["--script", script.to_str().unwrap(), "--approve", "all"],
        &[],
        Stdio::piped(),
    );
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"start the job\n").unwrap();
    let sleep = sleep_pid(dir.path());
    let mut stderr = child.stderr.take().unwrap();
    let seen = Arc::new(std::sync::Mutex::new(String::new()));
    let sink = seen.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 256];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    poll("the prompt after the turn", || {
        (seen.lock().unwrap().matches("ch13 >> ").count() >= 2).then_some(())
    });

    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill only sends a signal, to the child this test started.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);

    assert_eq!(wait_exit(&mut child).code(), Some(128 + signal));
    drop(stdin);
    // SIGKILL is delivered when the kernel next runs the job: gone soon, not necessarily
    // by the instant the session's exit status is read.
    poll("the background job to end with the session", || {
        (!alive(sleep)).then_some(())
    });
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(".agent_tutorial/jobs/1.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        record["status"],
        json!({"state": "killed", "reason": "session_ended"}),
        "{record}"
    );
}
