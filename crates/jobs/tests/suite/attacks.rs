//! The harness's own job files go through the boundary: no symlink leads them out, a FIFO
//! does not block them, a huge log is read only at its end.

use std::os::unix::fs::symlink;

use agent_core::FailureCode;
use agent_core::ToolFailure;
use agent_jobs::JobStatus;

use super::manager;

fn mkfifo(path: &std::path::Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[tokio::test]
async fn an_outward_jobs_folder_is_refused_and_nothing_runs() {
    let (dir, jobs) = manager();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".agent_tutorial")).unwrap();
    symlink(outside.path(), dir.path().join(".agent_tutorial/jobs")).unwrap();
    let failure = ToolFailure::from(jobs.start("touch ran").unwrap_err());
    assert_eq!(
        failure,
        ToolFailure::new(
            FailureCode::PathEscape,
            "cannot record the job: `.agent_tutorial/jobs` resolves outside the workspace"
        )
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    assert!(!dir.path().join("ran").exists());
}

#[tokio::test]
async fn dot_dot_through_a_missing_folder_is_refused() {
    let (dir, jobs) = manager();
    symlink("missing/../..", dir.path().join(".agent_tutorial")).unwrap();
    assert_eq!(
        jobs.start("touch ran").unwrap_err().to_string(),
        "cannot record the job: cannot resolve `.agent_tutorial/jobs`: `missing` does not exist, so `..` after it leads nowhere"
    );
    assert!(!dir.path().join("ran").exists());
}

#[tokio::test]
async fn a_fifo_planted_where_a_log_would_go_takes_its_id_and_is_never_opened() {
    let (dir, jobs) = manager();
    std::fs::create_dir_all(dir.path().join(".agent_tutorial/jobs")).unwrap();
    let fifo = dir.path().join(".agent_tutorial/jobs/1.log");
    mkfifo(&fifo);
    // Every id with a record or a log is taken, so the job is 2; had the FIFO been opened
    // for writing, the start would have blocked until a reader came.
    let id = jobs.start("true").unwrap();
    assert_eq!(id, 2);
    assert_eq!(jobs.wait(id).await.unwrap(), JobStatus::Exited { code: 0 });
    use std::os::unix::fs::FileTypeExt;
    assert!(fifo.metadata().unwrap().file_type().is_fifo());
    assert!(!dir.path().join(".agent_tutorial/jobs/1.json").exists());
}

#[tokio::test]
async fn job_output_refuses_a_log_swapped_for_a_fifo_and_reads_a_huge_one_at_its_end() {
    let (dir, jobs) = manager();
    let id = jobs.start("true").unwrap();
    jobs.wait(id).await.unwrap();
    let log = dir.path().join(".agent_tutorial/jobs/1.log");
    std::fs::remove_file(&log).unwrap();
    mkfifo(&log);
    assert_eq!(
        jobs.output(id, 5).unwrap_err().to_string(),
        "cannot read the log of job 1: `.agent_tutorial/jobs/1.log` is a FIFO (named pipe), not a regular file"
    );
    std::fs::remove_file(&log).unwrap();
    let big = std::fs::File::create(&log).unwrap();
    big.set_len(200 * 1024 * 1024).unwrap();
    drop(big);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"\nsecond last\nlast\n"))
        .unwrap();
    assert_eq!(
        jobs.output(id, 2).unwrap(),
        "job 1 ended: exit 0\nsecond last\nlast"
    );
}

#[tokio::test]
async fn a_planted_job_id_at_the_end_of_u64_neither_panics_nor_blocks_a_start() {
    // Measured before: `attempt to add with overflow` in the agent.
    let (dir, jobs) = manager();
    let folder = dir.path().join(".agent_tutorial/jobs");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join(format!("{}.json", u64::MAX)), "{}").unwrap();
    std::fs::write(folder.join(format!("{}.log", u64::MAX - 1)), "").unwrap();
    std::fs::write(folder.join("4.log"), "an earlier session's log").unwrap();
    let id = jobs.start("true").unwrap();
    assert_eq!(id, 5);
    jobs.wait(id).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_starting_sixty_jobs_each_in_one_workspace_never_share_an_id() {
    // Measured before: 32 of 120 starts failed (each session looked, then renamed).
    let (dir, first) = manager();
    let second = std::sync::Arc::new(agent_jobs::JobManager::new(
        agent_workspace::Workspace::new(dir.path()).unwrap(),
        agent_jobs::JobConfig::default(),
    ));
    // In batches under the running limit, each waited for: a loaded machine's slow `true`
    // must not hit the limit (the race is on the ids, not on how fast jobs end).
    let starts = [first.clone(), second.clone()].map(|jobs| {
        tokio::spawn(async move {
            let mut ids = Vec::new();
            for _ in 0..4 {
                let batch = (0..15)
                    .map(|_| jobs.start("true").map_err(|e| e.to_string()))
                    .collect::<Result<Vec<u64>, String>>()?;
                for id in &batch {
                    jobs.wait(*id).await.map_err(|e| e.to_string())?;
                }
                ids.extend(batch);
            }
            Ok::<Vec<u64>, String>(ids)
        })
    });
    let mut ids = Vec::new();
    for start in starts {
        ids.extend(start.await.unwrap().unwrap());
    }
    ids.sort_unstable();
    assert_eq!(ids, (1..=120).collect::<Vec<u64>>());
    for id in 1..=120 {
        let jobs = if first.status(id).is_ok() {
            &first
        } else {
            &second
        };
        jobs.wait(id).await.unwrap();
    }
}
