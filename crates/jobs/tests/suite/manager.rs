use std::time::Duration;

use agent_jobs::{JobRecord, JobStatus, KillReason};

use super::{gone, manager, pid_in, told_manager_with};

fn record(dir: &std::path::Path, id: u64) -> JobRecord {
    let text =
        std::fs::read_to_string(dir.join(format!(".agent_tutorial/jobs/{id}.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn the_record_exists_before_the_process_starts() {
    let (dir, jobs) = manager();
    let id = jobs
        .start("cat .agent_tutorial/jobs/1.json > seen.json")
        .unwrap();
    assert_eq!(jobs.wait(id).await.unwrap(), JobStatus::Exited { code: 0 });
    let seen: JobRecord =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("seen.json")).unwrap())
            .unwrap();
    let command = "cat .agent_tutorial/jobs/1.json > seen.json".to_string();
    assert_eq!(
        seen,
        JobRecord {
            id: 1,
            command: command.clone(),
            status: JobStatus::Running,
            log: ".agent_tutorial/jobs/1.log".into(),
            elapsed_ms: None,
        }
    );
    assert_eq!(
        record(dir.path(), 1),
        JobRecord {
            status: JobStatus::Exited { code: 0 },
            elapsed_ms: Some(4200),
            ..seen
        }
    );
}

#[tokio::test]
async fn a_finished_job_is_told_once_to_the_model_and_once_to_the_person() {
    let (dir, jobs, told) = told_manager_with(|_| {});
    let id = jobs
        .start("printf 'one\\ntwo\\n'; echo oops >&2; exit 3")
        .unwrap();
    assert_eq!(jobs.wait(id).await.unwrap(), JobStatus::Exited { code: 3 });
    assert_eq!(
        told.notices(),
        ["<job id=\"1\" status=\"exit 3\" elapsed=\"4.2s\">\none\ntwo\noops\n</job>"]
    );
    assert_eq!(told.notices(), Vec::<String>::new());
    assert_eq!(told.finished(), [(1, "exit 3".to_string(), 4200)]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".agent_tutorial/jobs/1.log")).unwrap(),
        "one\ntwo\noops\n"
    );
    // A second job gets the next id; a new session continues after the highest on disk.
    assert_eq!(jobs.start("true").unwrap(), 2);
}

#[tokio::test]
async fn ids_continue_after_an_earlier_sessions_jobs() {
    let (dir, jobs) = manager();
    let first = jobs.start("true").unwrap();
    jobs.wait(first).await.unwrap();
    let again = agent_jobs::JobManager::new(
        agent_workspace::Workspace::new(dir.path()).unwrap(),
        agent_jobs::JobConfig::default(),
    );
    assert_eq!(again.start("true").unwrap(), 2);
    again.wait(2).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_job_over_its_limit_is_killed_and_reported() {
    let (dir, jobs, told) = told_manager_with(|config| {
        config.limit = Duration::from_secs(1);
        // The limit is real time; the notice's elapsed is read from a clock that steps one
        // second per reading, so a loaded machine does not change the text compared below.
        config.clock = super::StepClock::new(Duration::from_secs(1));
    });
    let id = jobs.start("sleep 30").unwrap();
    let killed = JobStatus::Killed {
        reason: KillReason::TimeLimit,
    };
    assert_eq!(jobs.wait(id).await.unwrap(), killed);
    assert_eq!(
        told.notices(),
        ["<job id=\"1\" status=\"killed (time limit)\" elapsed=\"1.0s\">\n(no output)\n</job>"]
    );
    assert_eq!(record(dir.path(), 1).status, killed);
}

#[tokio::test]
async fn a_job_outliving_the_session_is_killed_with_its_children() {
    let (dir, jobs) = manager();
    let id = jobs
        .start("sleep 300 & echo $! > child.pid; echo $$ > job.pid; wait")
        .unwrap();
    let (leader, child) = (
        pid_in(dir.path(), "job.pid"),
        pid_in(dir.path(), "child.pid"),
    );
    assert_eq!(jobs.status(id).unwrap(), JobStatus::Running);
    drop(jobs);
    assert!(
        super::eventually(|| gone(leader) && gone(child)),
        "a job process survived"
    );
    assert_eq!(
        record(dir.path(), 1).status,
        JobStatus::Killed {
            reason: KillReason::SessionEnded
        }
    );
}

#[tokio::test]
async fn the_log_keeps_the_cap_then_a_marker_and_the_notice_the_last_lines() {
    let (dir, jobs, told) = told_manager_with(|config| config.log_cap = 100);
    let id = jobs.start("seq 1 2000").unwrap();
    jobs.wait(id).await.unwrap();
    let all: String = (1..=2000).map(|n| format!("{n}\n")).collect();
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".agent_tutorial/jobs/1.log")).unwrap(),
        format!(
            "{}\n[log capped at 100 bytes: later output was not kept]\n",
            &all[..100]
        )
    );
    let last: Vec<String> = (1991..=2000).map(|n| n.to_string()).collect();
    assert_eq!(
        told.notices(),
        [format!(
            "<job id=\"1\" status=\"exit 0\" elapsed=\"4.2s\">\n{}\n</job>",
            last.join("\n")
        )]
    );
}

#[tokio::test]
async fn an_unknown_id_names_the_jobs_there_are() {
    let (_dir, jobs) = manager();
    assert_eq!(
        jobs.status(9).unwrap_err().to_string(),
        "there is no job 9 in this session; it has started none"
    );
    let id = jobs.start("true").unwrap();
    jobs.wait(id).await.unwrap();
    assert_eq!(
        jobs.output(9, 5).unwrap_err().to_string(),
        "there is no job 9 in this session; its jobs are 1"
    );
}
