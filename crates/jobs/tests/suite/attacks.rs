//! The harness's own job files go through the boundary: no symlink leads them out, a FIFO
//! does not block them, a huge log is read only at its end.

use std::os::unix::fs::symlink;

use agent_core::FailureCode;
use agent_core::ToolFailure;
use agent_jobs::{JobRecord, JobStatus};

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
async fn a_fifo_where_the_log_goes_stops_the_job_before_it_starts() {
    let (dir, jobs) = manager();
    std::fs::create_dir_all(dir.path().join(".agent_tutorial/jobs")).unwrap();
    mkfifo(&dir.path().join(".agent_tutorial/jobs/1.log"));
    let err = jobs.start("touch ran").unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot create the log of job 1: cannot write `.agent_tutorial/jobs/1.log`: File exists (os error 17)"
    );
    assert!(!dir.path().join("ran").exists());
    let text = std::fs::read_to_string(dir.path().join(".agent_tutorial/jobs/1.json")).unwrap();
    let record: JobRecord = serde_json::from_str(&text).unwrap();
    assert_eq!(record.status, JobStatus::FailedToStart);
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
