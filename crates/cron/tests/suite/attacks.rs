//! The security issue's attacks on the harness's own schedule file: refused through the
//! workspace boundary, nothing read or written outside, nothing lost.

use std::os::unix::fs::symlink;

use agent_cron::{CronError, Durability, READ_LIMIT, durable_table};
use agent_workspace::PathError;
use serde_json::json;

use super::{Fixture, new_schedule};

/// A schedule file that would list one schedule if it were read.
const VALID: &str = r#"{"version":1,"next_id":2,"schedules":[{"id":"1","cron":"0 9 * * *","prompt":"leak","timezone":"UTC","durability":"durable","next_fire_utc":"2026-01-01T09:00:00Z","created":"2026-01-01T00:00:00Z"}]}"#;

fn mkfifo(path: &std::path::Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

fn add_durable(fx: &Fixture) -> CronError {
    fx.scheduler
        .add(new_schedule("0 9 * * *", "p", None, Durability::Durable))
        .unwrap_err()
}

#[tokio::test]
async fn an_outward_agent_tutorial_folder_is_refused() {
    let fx = Fixture::new("2026-01-01T00:00:00Z");
    std::fs::write(fx.outside.path().join("crons.json"), VALID).unwrap();
    symlink(fx.outside.path(), fx.dir.path().join(".agent_tutorial")).unwrap();
    assert_eq!(
        fx.call(
            "schedule_cron",
            json!({"cron": "0 9 * * *", "prompt": "p", "durable": true})
        )
        .await,
        "Error [path_escape]: cannot use the schedule file: `.agent_tutorial` resolves outside the workspace"
    );
    assert_eq!(
        fx.call("list_crons", json!({})).await,
        "Error [path_escape]: cannot use the schedule file: `.agent_tutorial/crons.json` resolves outside the workspace"
    );
    assert!(matches!(
        fx.scheduler.due().unwrap_err(),
        CronError::Store {
            source: PathError::Escape { .. }
        }
    ));
    assert!(durable_table(&fx.workspace()).is_err());
    let mut names: Vec<_> = std::fs::read_dir(fx.outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["crons.json"]);
    assert_eq!(
        std::fs::read_to_string(fx.outside.path().join("crons.json")).unwrap(),
        VALID
    );
}

#[test]
fn an_outward_crons_json_is_neither_read_nor_written() {
    let fx = Fixture::new("2026-01-01T00:00:00Z");
    let secret = fx.outside.path().join("crons.json");
    std::fs::write(&secret, VALID).unwrap();
    std::fs::create_dir(fx.dir.path().join(".agent_tutorial")).unwrap();
    symlink(&secret, fx.crons_json()).unwrap();
    assert!(matches!(
        fx.scheduler.list().unwrap_err(),
        CronError::Store {
            source: PathError::Escape { .. }
        }
    ));
    assert!(matches!(
        add_durable(&fx),
        CronError::Store {
            source: PathError::Escape { .. }
        }
    ));
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), VALID);
    assert!(fx.crons_json().symlink_metadata().unwrap().is_symlink());
}

#[test]
fn dot_dot_through_a_missing_folder_is_refused() {
    let fx = Fixture::new("2026-01-01T00:00:00Z");
    // `.agent_tutorial` -> `missing/../..`: the kernel cannot walk back out of `missing`.
    symlink("missing/../..", fx.dir.path().join(".agent_tutorial")).unwrap();
    assert_eq!(
        [fx.scheduler.list().unwrap_err(), add_durable(&fx)].map(|e| e.to_string()),
        [
            "cannot use the schedule file: cannot resolve `.agent_tutorial/crons.json`: `missing` does not exist, so `..` after it leads nowhere",
            "cannot use the schedule file: cannot resolve `.agent_tutorial`: `missing` does not exist, so `..` after it leads nowhere",
        ]
    );
    assert!(!fx.dir.path().join("missing").exists());
}

#[test]
fn a_fifo_crons_json_is_refused_without_hanging() {
    let fx = Fixture::new("2026-01-01T00:00:00Z");
    std::fs::create_dir(fx.dir.path().join(".agent_tutorial")).unwrap();
    mkfifo(&fx.crons_json());
    assert_eq!(
        fx.scheduler.list().unwrap_err().to_string(),
        "cannot use the schedule file: `.agent_tutorial/crons.json` is a FIFO (named pipe), not a regular file"
    );
    assert!(matches!(
        add_durable(&fx),
        CronError::Store {
            source: PathError::NotAFile { .. }
        }
    ));
    use std::os::unix::fs::FileTypeExt;
    assert!(fx.crons_json().metadata().unwrap().file_type().is_fifo());
}

#[test]
fn a_huge_crons_json_is_refused_by_size_and_left_as_it_is() {
    let fx = Fixture::new("2026-01-01T00:00:00Z");
    std::fs::create_dir(fx.dir.path().join(".agent_tutorial")).unwrap();
    let huge = vec![b' '; READ_LIMIT as usize + 1];
    std::fs::write(fx.crons_json(), &huge).unwrap();
    assert_eq!(
        fx.scheduler.list().unwrap_err().to_string(),
        format!(
            "cannot use the schedule file: `.agent_tutorial/crons.json` is {} bytes, over the limit of {READ_LIMIT} bytes",
            READ_LIMIT + 1
        )
    );
    assert!(matches!(
        add_durable(&fx),
        CronError::Store {
            source: PathError::TooLarge { .. }
        }
    ));
    assert_eq!(std::fs::read(fx.crons_json()).unwrap(), huge);
}

#[test]
fn a_corrupt_file_is_reported_and_never_written_over() {
    let fx = Fixture::new("2026-01-01T00:00:00Z");
    std::fs::create_dir(fx.dir.path().join(".agent_tutorial")).unwrap();
    std::fs::write(fx.crons_json(), "{not json").unwrap();
    assert!(matches!(add_durable(&fx), CronError::Corrupt { .. }));
    assert!(matches!(
        fx.scheduler.due().unwrap_err(),
        CronError::Corrupt { .. }
    ));
    assert_eq!(
        std::fs::read_to_string(fx.crons_json()).unwrap(),
        "{not json"
    );
}

#[test]
fn an_unreadable_record_is_skipped_but_kept_through_later_writes() {
    let fx = Fixture::new("2026-01-01T00:00:00Z");
    std::fs::create_dir(fx.dir.path().join(".agent_tutorial")).unwrap();
    let bad = json!({"id": "1", "cron": "0 9 * * *", "prompt": "p", "timezone": "Mars/Base"});
    std::fs::write(
        fx.crons_json(),
        json!({"version": 1, "next_id": 2, "schedules": [bad]}).to_string(),
    )
    .unwrap();
    let added = fx
        .scheduler
        .add(new_schedule("0 9 * * *", "good", None, Durability::Durable))
        .unwrap();
    assert_eq!(added.id.as_str(), "2");
    assert_eq!(fx.scheduler.list().unwrap(), [added]);
    let on_disk: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fx.crons_json()).unwrap()).unwrap();
    assert_eq!(on_disk["schedules"][0], bad);
    assert_eq!(
        durable_table(&fx.workspace()).unwrap(),
        "ID  KIND     CRON       TIMEZONE  NEXT RUN (UTC)        PROMPT\n\
         2   durable  0 9 * * *  UTC       2026-01-01 09:00 UTC  good\n\
         (1 unreadable record in .agent_tutorial/crons.json skipped)"
    );
}

/// A durable record as the store writes it, with `id` and `prompt` as given.
fn record(id: &str, prompt: &str) -> serde_json::Value {
    json!({"id": id, "cron": "0 9 * * *", "prompt": prompt, "timezone": "UTC",
        "durability": "durable", "next_fire_utc": "2026-01-01T09:00:00Z",
        "created": "2026-01-01T00:00:00Z"})
}

fn plant(fx: &Fixture, next_id: u64, schedules: Vec<serde_json::Value>) {
    std::fs::create_dir_all(fx.dir.path().join(".agent_tutorial")).unwrap();
    std::fs::write(
        fx.crons_json(),
        json!({"version": 1, "next_id": next_id, "schedules": schedules}).to_string(),
    )
    .unwrap();
}

#[test]
fn a_planted_counter_at_the_end_of_u64_neither_panics_nor_reuses_an_id() {
    let fx = Fixture::new("2026-01-01T00:00:00Z");
    plant(&fx, u64::MAX, vec![record("4", "four")]);
    let added = fx
        .scheduler
        .add(new_schedule("0 9 * * *", "good", None, Durability::Durable))
        .unwrap();
    assert_eq!(added.id.as_str(), "5");
}

#[test]
fn planted_ids_past_the_bound_and_prompts_that_break_the_rules_are_skipped_on_load() {
    let fx = Fixture::new("2026-01-01T00:00:00Z");
    plant(
        &fx,
        2,
        vec![
            record("18446744073709551615", "huge id"),
            record("2", "\u{1b}]52;c;aGVsbG8=\u{7}clipboard"),
            record("3", "\u{202E}reversed"),
            record("4", &"x".repeat(agent_cron::MAX_PROMPT_BYTES + 1)),
            record("5", "fine\nover two lines"),
        ],
    );
    let ids: Vec<String> = fx
        .scheduler
        .list()
        .unwrap()
        .into_iter()
        .map(|s| s.id.to_string())
        .collect();
    assert_eq!(ids, ["5"]);
    assert_eq!(
        durable_table(&fx.workspace()).unwrap(),
        "ID  KIND     CRON       TIMEZONE  NEXT RUN (UTC)        PROMPT\n\
         5   durable  0 9 * * *  UTC       2026-01-01 09:00 UTC  fine over two lines\n\
         (4 unreadable records in .agent_tutorial/crons.json skipped)"
    );
}

#[test]
fn the_schedule_limit_applies_to_a_planted_file_too() {
    // Measured before: 3,000 planted schedules all came due and made 914 model requests.
    let fx = Fixture::new("2026-01-01T09:00:00Z");
    let planted: Vec<_> = (1..=3000)
        .map(|n| record(&n.to_string(), "run me"))
        .collect();
    plant(&fx, 3001, planted);
    let due = fx.scheduler.due().unwrap();
    assert_eq!(
        (due.len(), fx.scheduler.list().unwrap().len()),
        (agent_cron::MAX_SCHEDULES, agent_cron::MAX_SCHEDULES)
    );
    // Nothing is lost: the records past the limit stay in the file as they were.
    let on_disk: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fx.crons_json()).unwrap()).unwrap();
    assert_eq!(on_disk["schedules"].as_array().unwrap().len(), 3000);
    assert_eq!(on_disk["schedules"][2999], record("3000", "run me"));
}

#[test]
fn a_prompt_with_a_hidden_character_is_refused_when_added() {
    let fx = Fixture::new("2026-01-01T00:00:00Z");
    let refused = fx
        .scheduler
        .add(new_schedule(
            "0 9 * * *",
            "a\u{202E}b",
            None,
            Durability::Session,
        ))
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "the prompt holds the hidden character U+202E: write it without"
    );
}

#[test]
fn the_table_shows_hidden_characters_escaped_whatever_reaches_it() {
    let schedule = agent_cron::Schedule {
        id: agent_cron::ScheduleId::parse("s1"),
        cron: "0 9 * * *".into(),
        prompt: "a\u{1b}[2Jb\u{202E}c".into(),
        timezone: "UTC".into(),
        durability: Durability::Session,
        next_fire_utc: super::ts("2026-01-01T09:00:00Z"),
        created: super::ts("2026-01-01T00:00:00Z"),
    };
    assert_eq!(
        agent_cron::format_table(&[schedule]),
        "ID  KIND     CRON       TIMEZONE  NEXT RUN (UTC)        PROMPT\n\
         s1  session  0 9 * * *  UTC       2026-01-01 09:00 UTC  a\\u{1b}[2Jb\\u{202e}c"
    );
}
